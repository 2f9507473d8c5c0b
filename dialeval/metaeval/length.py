"""Response length and degenerate responses in the meta-evaluation (issue 23): does a metric follow
the length of a response more than the human raters do?

For every scored cell of a meta-evaluation (:mod:`dialeval.metaeval.grid`) and each of its
sub-scores, over the items where the sub-score and the human score are finite:

* ``rho_metric_length``: Spearman's rho between the sub-score and the response length ``L`` in
  words (:func:`dialeval.core.degenerate.word_count`: the ``\\w+`` runs of the item's ``response``;
  for a dialog-level set, its last turn);
* ``rho_human_length``: Spearman's rho between the set's human score and ``L`` on the same items,
  the reference point: a sub-score whose rho is well above the humans' rewards length for its own
  sake;

with ``rho(x, y)`` the Pearson correlation of the average ranks of ``x`` and of ``y``
(``scipy.stats.spearmanr``), its two-sided p-value, and ``None`` when fewer than 3 items are left
or one side is constant. Per set: the item count, the mean length, and how many responses the
checks of :mod:`dialeval.core.degenerate` flag: ``empty`` and ``repetitive``
(:func:`~dialeval.core.degenerate.response_flags`, which every metric applies) and
``unknown_words`` (:func:`~dialeval.core.degenerate.unknown_words` against GloVe 6B, which the
metrics reading word vectors apply).

``metaeval.json`` leaves the per-item scores out: a cell's scores come from the cell itself (a
:func:`~dialeval.metaeval.grid.run_grid` result in memory) or else from the score cache
(:func:`dialeval.scoring.cache.stored_scores`), when the cached entry has the cell's signature; a
cell with neither is listed as missing. ``python -m dialeval.metaeval.length`` writes
``benchmarks/results/length-correlation.md`` and ``.json``; given several ``metaeval.json`` files
(:func:`merge`), a cell of a later file replaces the same set and job of an earlier one.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from dialeval.core.degenerate import (EMPTY, REPETITIVE, UNKNOWN_WORDS, flag_counts, response_flags, unknown_words,
                                      word_count)
from dialeval.core.tables import format_table
from dialeval.data import JudgmentItem

METAEVAL = Path("benchmarks/results/metaeval/metaeval.json")
OUTPUT = Path("benchmarks/results/length-correlation")  # .md and .json
# (cell, the set's items) -> the cell's per-item scores by sub-score, or None when they cannot be had
CellScores = Callable[[Mapping[str, Any], Sequence[JudgmentItem]], Optional[dict[str, list[float]]]]


def spearman(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """``(rho, p)`` of the pairs where both values are finite (module docstring); ``None`` with
    fewer than 3 such pairs or a constant side."""
    from scipy import stats

    from dialeval.stats.correlation import finite_pairs

    x, y = finite_pairs(xs, ys)
    if len(x) < 3 or x.min() == x.max() or y.min() == y.max():
        return None
    rho, p = stats.spearmanr(x, y)
    return float(rho), float(p)


def cached_cell_scores(cell: Mapping[str, Any], items: Sequence[JudgmentItem]) -> dict[str, list[float]] | None:
    """The per-item scores of a grid cell: its own ``per_item``, else the score cache's entry for
    its metric, options and items when that entry carries the cell's signature, else ``None``."""
    from dialeval.scoring.cache import stored_scores

    if "per_item" in cell:
        return cell["per_item"]
    entry = stored_scores(cell["metric"], cell["options"], [vars(it) for it in items])
    return entry["per_item"] if entry is not None and entry["signature"] == cell["signature"] else None


def set_summary(items: Sequence[JudgmentItem], vocabulary: Mapping[str, int]) -> dict[str, Any]:
    """``n``, ``mean_words`` and ``flagged`` (flag -> number of responses) of one set."""
    counts = flag_counts(response_flags(it.response) + unknown_words(it.response, vocabulary) for it in items)
    lengths = [word_count(it.response) for it in items]
    return {"n": len(items), "mean_words": sum(lengths) / len(lengths) if lengths else None,
            "flagged": {flag: counts.get(flag, 0) for flag in (EMPTY, REPETITIVE, UNKNOWN_WORDS)}}


def length_correlation(metaeval: Mapping[str, Any], judged: Mapping[str, Sequence[JudgmentItem]],
                       vocabulary: Mapping[str, int], cell_scores: CellScores = cached_cell_scores) -> dict[str, Any]:
    """``{"sets": {set: set_summary}, "rows": [...], "missing": [...]}`` for every cell of
    ``metaeval`` (module docstring); ``judged[set]`` are the set's items, in the grid's order.
    A row: ``set``, ``job``, ``metric``, ``score``, ``n``, ``rho_metric_length``,
    ``p_metric_length``, ``rho_human_length``, ``p_human_length`` (``None`` when undefined).
    ``missing`` names the scored cells without per-item scores and, for a meta-evaluation of
    :func:`merge`, the grid's cells that are ``absent`` from it."""
    rows: list[dict[str, Any]] = []
    missing = [{**cell, "reason": "not in the meta-evaluation files"} for cell in metaeval.get("absent", ())]
    for cell in metaeval["cells"]:
        if cell["status"] != "ok":
            continue
        items = judged[cell["set"]]
        per_item = cell_scores(cell, items)
        if per_item is None:
            missing.append({"set": cell["set"], "job": cell["job"], "reason": "no per-item scores with its signature"})
            continue
        lengths = [float(word_count(it.response)) for it in items]
        human = [float(it.score) for it in items]
        for score, values in per_item.items():
            if len(values) != len(items):
                raise ValueError(f"{cell['set']} x {cell['job']}: {len(values)} {score} scores for {len(items)} items")
            keep = [i for i, v in enumerate(values) if math.isfinite(v) and math.isfinite(human[i])]
            metric_rho = spearman([values[i] for i in keep], [lengths[i] for i in keep])
            human_rho = spearman([human[i] for i in keep], [lengths[i] for i in keep])
            rows.append({"set": cell["set"], "job": cell["job"], "metric": cell["metric"], "score": score,
                         "n": len(keep),
                         "rho_metric_length": metric_rho[0] if metric_rho else None,
                         "p_metric_length": metric_rho[1] if metric_rho else None,
                         "rho_human_length": human_rho[0] if human_rho else None,
                         "p_human_length": human_rho[1] if human_rho else None})
    sets = {name: set_summary(judged[name], vocabulary) for name in metaeval["sets"]}
    return {"sets": sets, "rows": rows, "missing": missing}


def merge(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One meta-evaluation of several: the union of their sets and cells, a later result's cell
    replacing an earlier one of the same set and job; cells in the order of their set, then of
    the grid's jobs (:data:`dialeval.metaeval.grid.JOBS`); ``absent``: the set-and-job pairs of
    the grid that none of them has (a run still under way)."""
    from dialeval.metaeval.grid import JOBS

    sets: dict[str, Any] = {}
    cells: dict[tuple[str, str], Mapping[str, Any]] = {}
    for result in results:
        sets.update(result["sets"])
        cells.update({(c["set"], c["job"]): c for c in result["cells"]})
    set_order = {name: i for i, name in enumerate(sets)}
    job_order = {job.name: i for i, job in enumerate(JOBS)}
    order = sorted(cells, key=lambda key: (set_order[key[0]], job_order.get(key[1], len(job_order)), key[1]))
    absent = [{"set": name, "job": job.name} for name in sets for job in JOBS if (name, job.name) not in cells]
    return {"sets": sets, "cells": [cells[key] for key in order], "absent": absent}


def _rho(rho: float | None, p: float | None) -> str:
    return "n/a" if rho is None else f"{rho:.3f}{'*' if p < 0.05 else ''}"


def markdown(result: Mapping[str, Any], sources: Sequence[str]) -> str:
    """The report: per set its flags, then one row per cell and sub-score."""
    flags = (EMPTY, REPETITIVE, UNKNOWN_WORDS)
    set_rows = [[name, s["n"], f"{s['mean_words']:.1f}", *(s["flagged"][f] for f in flags)]
                for name, s in result["sets"].items()]
    rows = [[r["set"], f"{r['job']}:{r['score']}", r["n"], _rho(r["rho_metric_length"], r["p_metric_length"]),
             _rho(r["rho_human_length"], r["p_human_length"])] for r in result["rows"]]
    missing = [f"- {m['set']} x {m['job']}: {m['reason']}" for m in result["missing"]]
    return "\n".join([
        "# Response length and degenerate responses in the meta-evaluation", "",
        f"From the per-item scores of the cells of {', '.join(f'`{s}`' for s in sources)} (`dialeval benchmark --all`; "
        "later files replace the same cell of earlier ones; the scores read "
        "from the score cache under each cell's signature) and the human-judgment sets. "
        "Generated by `python -m dialeval.metaeval.length` (`dialeval/metaeval/length.py` states the formulas).", "",
        "Spearman's rho with the response length in words (`\\w+` runs of the response; for a dialog-level set, "
        "its last turn), over the items with a finite score; `*`: p < 0.05. `rho(human, length)` is the set's human "
        "score against the same lengths on the same items: a metric well above it follows length more than the "
        "raters do.", "",
        "## Flagged responses per set", "",
        "`empty`, `repetitive`: flagged by every metric; `unknown_words`: by the metrics that read word vectors "
        "(docs/inputs.md).", "",
        "```", format_table(["set", "n", "mean words", *flags], set_rows), "```", "",
        "## Correlation with response length", "",
        "```", format_table(["set", "score", "n", "rho(score, length)", "rho(human, length)"], rows), "```", "",
        "## Cells left out", "", *(missing or ["(none)"]), "",
    ])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from dialeval.core.resources import load_word_vectors
    from dialeval.registry import load_judgments

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--metaeval", nargs="+", default=[str(METAEVAL)],
                        help="metaeval.json of `dialeval benchmark --all` (several: later cells replace earlier ones)")
    parser.add_argument("--output", default=str(OUTPUT), help="writes OUTPUT.md and OUTPUT.json")
    args = parser.parse_args(argv)
    metaeval = merge([json.loads(Path(path).read_text(encoding="utf-8")) for path in args.metaeval])
    judged = {name: load_judgments(name) for name in metaeval["sets"]}
    result = {"sources": args.metaeval, **length_correlation(metaeval, judged, load_word_vectors(None).index)}
    output = Path(args.output)
    output.with_suffix(".json").write_text(json.dumps(result, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    output.with_suffix(".md").write_text(markdown(result, args.metaeval), encoding="utf-8")
    print(f"wrote {output.with_suffix('.md')} and {output.with_suffix('.json')}")
    return result


if __name__ == "__main__":
    main()
