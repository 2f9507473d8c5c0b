"""Train the combined metric (issue 21): the bundled ``dialeval/combined-judgments``.

This metric, and only this one, is trained on the shared human-judgment sets (``$DIALEVAL_DATA``,
:mod:`dialeval.judgments`). For every set it reads the component metrics' per-item scores (the
meta-evaluation grid's jobs, through the score cache: run ``dialeval benchmark --all`` first, or
this script scores what is missing) and fits non-negative ridge regressions
(:func:`dialeval.combined.model.fit_linear`) from the components' headline scores to the human
ratings' percentile within their set:

* one model per feature pattern seen in training (every set whose components include the
  pattern's), trained on all sets: what ``evaluate.load("dialeval/combined")`` and
  ``dialeval score --metric combined`` use;
* for every set ``S``, the model for ``S``'s pattern trained on every *other* set (leave-one-set-out):
  what ``dialeval benchmark --all`` and ``dialeval benchmark --metric combined --dataset
  combined-loso`` report on ``S``, so no reported number is in-sample.

Nothing is tuned: the ridge strength (``--ridge``, 1.0 = one set's weight) is fixed in advance.
Writes ``combined.json`` and the card ``README.md`` (the weights) to ``--output``. Seconds once the
components' scores are cached.

    dialeval benchmark --all --output-dir benchmarks/results/metaeval   # the components' scores
    python training/combined.py
    python training/combined.py --sets fed-turn fed-dialog --output /tmp/combined   # a subset
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from dialeval.combined.features import FEATURES, feature_table, pattern
from dialeval.combined.model import RIDGE, CombinedModel, LinearModel, fit_linear
from dialeval.combined.runner import component_scores, model_of
from dialeval.core.tables import fmt, format_table
from dialeval.data.judgments import load_judgments, sets as judgment_sets

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "hub" / "combined-judgments"


def gather(set_names: Sequence[str]) -> tuple[dict[str, tuple[dict, list[float]]], dict[str, str]]:
    """Per set: (feature table, human scores); and the component weights the scores came from."""
    rows, components = {}, {}
    for name in set_names:
        judged = load_judgments(name)
        items = [vars(it) for it in judged]
        start = time.perf_counter()
        found = component_scores(items, name)
        missing = found.missing_weights()
        if missing:
            raise SystemExit(f"{name}: component weights missing for {missing}: {[found.left_out[j] for j in missing]}")
        for job, signature in found.signatures.items():
            components.setdefault(job, model_of(signature))
        rows[name] = (feature_table(found.scores), [it.score for it in judged])
        print(f"{name}: {len(items)} items, features {pattern(rows[name][0])} ({time.perf_counter() - start:.1f} s)",
              file=sys.stderr)
    return rows, components


def fit_bundle(rows: dict[str, tuple[dict, list[float]]], ridge: float) -> CombinedModel:
    """The trained-on-all model per pattern and every set's leave-one-set-out model."""
    patterns = {name: pattern(table) for name, (table, _) in rows.items()}

    def training(features: Sequence[str], without: str | None = None) -> dict[str, Any]:
        return {n: r for n, r in rows.items() if n != without and set(features) <= set(patterns[n])}

    models = [fit_linear(training(p), p, ridge) for p in sorted(set(patterns.values()), key=len, reverse=True)]
    held_out = {}
    for name, features in patterns.items():
        others = training(features, name)
        if not others:
            raise SystemExit(f"{name}: no other set has its features {features}: no leave-one-set-out model")
        held_out[name] = fit_linear(others, features, ridge)
    return CombinedModel(models, held_out, {}, ridge)


def weights_table(models: Sequence[LinearModel]) -> str:
    names = [f.name for f in FEATURES]
    rows = [[", ".join(m.sets), m.items, fmt(m.intercept)]
            + [fmt(m.weights[m.features.index(n)]) if n in m.features else "" for n in names] for m in models]
    return format_table(["trained on", "items", "b", *names], rows)


LOSO_RESULTS = ROOT / "benchmarks" / "results" / "combined-loso.json"


def loso_table(results: dict[str, Any] | None) -> str:
    """The saved leave-one-set-out benchmark as it prints (:func:`dialeval.combined.benchmark.format_table`)."""
    from dialeval.combined.benchmark import format_table as loso_text

    if not results:
        return ("Not measured yet: `dialeval benchmark --metric combined --dataset combined-loso --save "
                "benchmarks/results/combined-loso.json`, then `python training/combined.py --card`.")
    return f"```\n{loso_text(results)}\n```"


def card_body(bundle: CombinedModel, results: dict[str, Any] | None) -> str:
    """The bundled folder's card: what it is, how it was trained, every weight, the held-out numbers."""
    held = "\n".join(f"| {s} | {', '.join(m.sets)} |" for s, m in sorted(bundle.held_out.items()))
    return f"""# dialeval/combined-judgments

The weights of the `dialeval/combined` metric: non-negative ridge regressions (lambda = {bundle.ridge:g}, one
set's weight) from the other dialeval metrics' headline scores, standardised, to the human rating's
percentile within its set (`dialeval/combined/model.py`). Built by `python training/combined.py`.

**Trained on the human-judgment sets**, which no other dialeval model sees. Every number reported for it
on one of those sets (`dialeval benchmark --all`, `benchmarks/results/combined-loso.txt`) comes from the
model trained without that set (`held_out` in `combined.json`); the `model-index` above holds those
held-out numbers only.

## Leave-one-set-out Spearman with the human ratings
{loso_table(results)}

## Component weights it was trained on
{chr(10).join(f"- {job}: `{model}`" for job, model in bundle.components.items())}

## Weights (z-scored features; `combined = clip(b + sum w_j z_j, 0, 1)`)
Trained on all sets, one model per feature pattern:

```
{weights_table(bundle.models)}
```

Leave-one-set-out models (scored set: trained on):

| set | trained on |
|---|---|
{held}

```
{weights_table(list(bundle.held_out.values()))}
```
"""


def write_card(folder: Path) -> Path:
    """``folder/README.md``: Hub metadata with the held-out Spearman per set (from
    :data:`LOSO_RESULTS` when it was measured for these weights) and :func:`card_body`."""
    import json

    from dialeval.models.hub import Measured, content_hash, write_card as hub_write_card

    bundle = CombinedModel.load(folder)
    results = json.loads(LOSO_RESULTS.read_text()) if LOSO_RESULTS.is_file() else None
    if results and f"@{content_hash(folder)}" not in results.get("signature", ""):
        print(f"{LOSO_RESULTS} was measured for other weights: left out of the card", file=sys.stderr)
        results = None
    measured = [Measured(dataset=r["set"], metric="spearman", value=r["combined"],
                         dataset_name=f"{r['set']} (leave-one-set-out)") for r in (results or {}).get("rows", [])]
    return hub_write_card(folder, name=folder.name, body=card_body(bundle, results), library_name="dialeval",
                          tags=["dialogue-evaluation", "combined-metric"], measured=measured)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", help="human-judgment sets (default: all)")
    parser.add_argument("--ridge", type=float, default=RIDGE)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--card", action="store_true",
                        help="only rewrite the card of --output (after the leave-one-set-out benchmark)")
    args = parser.parse_args(argv)
    if args.card:
        print(f"wrote {write_card(args.output)}")
        return 0
    names = args.sets or list(judgment_sets())
    if len(names) < 2:
        parser.error("leave-one-set-out needs at least 2 sets")
    rows, components = gather(names)
    bundle = fit_bundle(rows, args.ridge)
    bundle.components = components
    bundle.save(args.output)
    write_card(args.output)
    print(weights_table(bundle.models))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
