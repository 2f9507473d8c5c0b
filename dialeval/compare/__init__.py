"""Compare dialogue systems: "is my model better than the baseline?" (``dialeval compare``).

The input is two or more systems' responses to the SAME contexts: JSON-lines files in the generic
format of :mod:`dialeval.data` (``context``, ``response``, optional ``references`` and ``id``; no
``score`` needed), or outputs of ``dialeval score`` (``OUT.jsonl`` with its ``OUT.jsonl.meta.json``).
For every chosen metric and sub-score the result holds each system's mean with a bootstrap
interval, every pair's mean difference with a paired bootstrap interval, the paired-bootstrap
(Koehn 2004) and approximate-randomization p-values (raw and corrected for the number of pairs),
and a ranking with ties (:mod:`dialeval.stats.paired` has the formulas). Every sub-score
carries its scale (range, direction, raw flag, meaning: :func:`dialeval.registry.describe`), and the
ranking follows the scale's direction.

How systems are joined (:func:`read_systems`)
    ``join="id"``: records are matched on their ``id`` (every record of every file needs one, unique
    within its file, and all files must hold the same ids; the order is the first file's).
    ``join="line"``: record ``i`` of every file is paired (equal record counts required). ``"auto"``
    (default) joins on ``id`` when every record of every file has one, else on line order. A joined
    item must have the same ``context`` in every file (else ``ValueError`` naming both file lines);
    ``references`` may be given in one file only (they then serve every system), but where two
    files give them they must agree.
    Scored outputs must all come from the same metric, with the same signature (scores of another
    model, version or setting are not comparable), and be complete (as many lines as the meta says).

Human responses beside the systems (:func:`compare_systems`, ``human=True``)
    When every joined item has at least one reference, the metric also scores the human responses as
    a pseudo-system: the first reference is the "response", the other references are its
    references (leave-one-out: a reference scored against itself would be perfect). Its mean and
    bootstrap interval (on the same resamples as the systems) are reported beside the systems; the
    pseudo-system takes no part in the pairwise tests, the correction or the ranking. With one
    reference fewer, a referenced metric is slightly harder on the humans than on the systems;
    a metric that cannot score the pseudo-system (a referenced metric with single-reference items)
    reports why instead.

The correction (Holm by default) covers the ``k(k-1)/2`` pairs of one sub-score; looking at many
sub-scores or metrics is a further multiplicity the reader has to weigh. Scores go through the score
cache (:mod:`dialeval.scoring.cache`), one entry per system and metric: an interrupted comparison
re-scores only the systems it had not finished; ``progress`` shows a bar per system.

Missing values: a sub-score that is NaN for an item (e.g. a diversity score without groups) drops
that item for every system of that sub-score (``n_dropped``); a sub-score left with fewer than 2
items is skipped with the reason.

The statistics live in :mod:`dialeval.stats`; this module reads and joins the systems, scores them
and writes the reports. ``compare_unpaired``, ``unpaired_agreement``, ``agreement_of``,
``rank_groups``, ``pair_items``, ``system_agreement`` (now in :mod:`dialeval.stats`) and
``scale_dict`` (now :func:`dialeval.registry.scale_dict`) are still importable from here for one
release.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from dialeval import registry
from dialeval.core.degenerate import flag_counts
from dialeval.data import JudgmentItem, read_numbered_jsonl
from dialeval.scoring.resume import meta_path
from dialeval.registry import scale_dict
from dialeval.stats import paired
from dialeval.stats.bootstrap import mean_interval
from dialeval.stats.paired import agreement_of, rank_groups  # noqa: F401  (kept here for one release)
from dialeval.stats.results import Settings
from dialeval.stats.systems import pair_items, system_agreement  # noqa: F401  (kept here for one release)
from dialeval.stats.unpaired import compare_unpaired, unpaired_agreement  # noqa: F401  (kept here for one release)

JOINS = ("auto", "id", "line")
HUMAN = "human responses"


# ----------------------------------------------------------------------------------------------
# Reading and joining the systems


@dataclass
class Systems:
    """Two or more systems joined item by item.

    ``items[s][i]`` is system ``s``'s item ``i`` (``context``, ``response``, ``references``, ``id``;
    ``None`` for scored inputs); ``scored[s]`` is ``{"metric", "options", "signature", "per_item",
    "flags"}`` for a ``dialeval score`` output (``None`` for responses). ``where[s][i]`` names the file line."""

    names: list[str]
    paths: list[str]
    joined_on: str
    items: dict[str, Optional[list[dict]]]
    scored: dict[str, Optional[dict[str, Any]]]
    where: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        first = self.names[0]
        if self.items[first] is not None:
            return len(self.items[first])
        return len(next(iter(self.scored[first]["per_item"].values())))

    @property
    def kind(self) -> str:
        return "scored" if self.scored[self.names[0]] is not None else "responses"

    def human_items(self) -> Optional[list[dict]]:
        """The pseudo-system of human responses (module docstring), or ``None`` without references
        on every item (or for scored inputs)."""
        if self.kind != "responses":
            return None
        refs = [_joined_references(self, i) for i in range(self.n_items)]
        if not all(refs):
            return None
        first = self.items[self.names[0]]
        return [{"context": first[i]["context"], "response": r[0], "references": list(r[1:]),
                 "id": first[i].get("id"), "group": first[i].get("group")} for i, r in enumerate(refs)]


def _joined_references(systems: Systems, i: int) -> list[str]:
    for name in systems.names:
        refs = systems.items[name][i].get("references") or []
        if refs:
            return refs
    return []


def _read_file(path: str) -> tuple[str, list[tuple[int, dict]], Optional[dict]]:
    """``(kind, [(line, record)], meta)``: a ``dialeval score`` output or a responses file."""
    rows = read_numbered_jsonl(path)
    if not rows:
        raise ValueError(f"{path}: no records (expected one JSON object per line)")
    for line, row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{line}: expected a JSON object, got {type(row).__name__}")
    scored = ["scores" in row and "response" not in row for _, row in rows]
    if all(scored):
        meta = meta_path(Path(path))
        if not meta.is_file():
            raise ValueError(f"{path}: looks like a dialeval score output but has no {meta.name} saying which "
                             "metric scored it")
        stored = json.loads(meta.read_text(encoding="utf-8"))
        if "shard" in stored:
            raise ValueError(f"{path}: one shard of a sharded run; join the shards first (dialeval merge)")
        if stored.get("items") is not None and len(rows) != stored["items"]:
            raise ValueError(f"{path}: {len(rows)} of {stored['items']} items scored; finish the run first "
                             "(dialeval score resumes where it stopped)")
        return "scored", rows, stored
    if any(scored):
        line = rows[scored.index(not scored[0])][0]
        raise ValueError(f"{path}:{line}: mixes scored records ('scores') and responses ('response')")
    out = []
    for line, row in rows:
        item = vars(JudgmentItem.from_dict({"score": 0.0, **row}, f"{path}:{line}"))
        item.pop("score")
        out.append((line, item))
    return "responses", out, None


def _join_order(paths: Sequence[str], rows: Sequence[list[tuple[int, dict]]], join: str) -> tuple[str, list[list[int]]]:
    """``(joined_on, per file: the index of its record for joined item i)``."""
    if join not in JOINS:
        raise ValueError(f"join must be one of {JOINS}, got {join!r}")
    has_ids = all(r.get("id") is not None for file_rows in rows for _, r in file_rows)
    if join == "id" or (join == "auto" and has_ids):
        positions = []
        for path, file_rows in zip(paths, rows):
            where: dict[str, int] = {}
            for k, (line, r) in enumerate(file_rows):
                if r.get("id") is None:
                    raise ValueError(f"{path}:{line}: no 'id' to join on (use join='line' to pair by line order)")
                key = str(r["id"])
                if key in where:
                    raise ValueError(f"{path}:{line}: id {key!r} also on line {file_rows[where[key]][0]}; ids must be "
                                     "unique to join on them (use join='line' to pair by line order)")
                where[key] = k
            positions.append(where)
        order = [str(r["id"]) for _, r in rows[0]]
        for path, where in zip(paths[1:], positions[1:]):
            missing = [i for i in order if i not in where]
            extra = [i for i in where if i not in positions[0]]
            if missing or extra:
                raise ValueError(f"{path} and {paths[0]} do not hold the same ids: only in {paths[0]}: "
                                 f"{_few(missing)}; only in {path}: {_few(extra)}")
        return "id", [[where[i] for i in order] for where in positions]
    counts = {path: len(file_rows) for path, file_rows in zip(paths, rows)}
    if len(set(counts.values())) > 1:
        raise ValueError(f"joining on line order needs as many records in every file, got {counts}")
    return "line", [list(range(len(rows[0])))] * len(paths)


def _few(values: Sequence[Any], limit: int = 5) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return (shown + f", ... ({len(values)} in all)" if len(values) > limit else shown) or "none"


def default_names(paths: Sequence[str]) -> list[str]:
    """File stems (``A.jsonl`` -> ``A``); the whole path where two stems coincide."""
    stems = [Path(p).name.split(".")[0] or Path(p).name for p in paths]
    return stems if len(set(stems)) == len(stems) else [str(p) for p in paths]


def read_systems(paths: Sequence[str | Path], names: Optional[Sequence[str]] = None, join: str = "auto") -> Systems:
    """Read and join two or more system files (module docstring); ``ValueError`` naming the file and
    line of any mismatch."""
    paths = [str(p) for p in paths]
    if len(paths) < 2:
        raise ValueError(f"compare needs at least 2 system files, got {len(paths)}")
    names = list(names) if names else default_names(paths)
    if len(names) != len(paths):
        raise ValueError(f"{len(names)} names for {len(paths)} files")
    if len(set(names)) != len(names):
        raise ValueError(f"system names must be distinct, got {names}")
    if HUMAN in names:
        raise ValueError(f"{HUMAN!r} is the name of the human-response line; name the system otherwise")
    read = [_read_file(p) for p in paths]
    kinds = {kind for kind, _, _ in read}
    if len(kinds) > 1:
        raise ValueError("give only response files or only dialeval score outputs, not both: "
                         + ", ".join(f"{p} ({k})" for p, (k, _, _) in zip(paths, read)))
    joined_on, order = _join_order(paths, [rows for _, rows, _ in read], join)
    where = {name: [f"{path}:{rows[k][0]}" for k in idx]
             for name, path, (_, rows, _), idx in zip(names, paths, read, order)}
    if kinds == {"scored"}:
        scored = {}
        for name, path, (_, rows, meta), idx in zip(names, paths, read, order):
            subs = list(rows[0][1]["scores"])
            per_item = {sub: [_number(rows[k][1]["scores"].get(sub), f"{path}:{rows[k][0]}") for k in idx]
                        for sub in subs}
            signatures = {rows[k][1].get("signature") for k in idx}
            scored[name] = {"metric": meta.get("metric"), "options": meta.get("options", {}),
                            "signature": meta.get("signature") or next(iter(signatures)), "per_item": per_item,
                            "flags": [rows[k][1].get("flags") or [] for k in idx]}
        first = scored[names[0]]
        for name, path in zip(names[1:], paths[1:]):
            for key in ("metric", "signature"):
                if scored[name][key] != first[key]:
                    raise ValueError(f"{path} was scored with {key} {scored[name][key]!r}, {paths[0]} with "
                                     f"{first[key]!r}: scores are only comparable under one metric and setting")
        return Systems(names, paths, joined_on, {n: None for n in names}, scored, where)
    items = {name: [rows[k][1] for k in idx] for name, (_, rows, _), idx in zip(names, read, order)}
    for i in range(len(order[0])):
        base = items[names[0]][i]
        for name in names[1:]:
            other = items[name][i]
            if other["context"] != base["context"]:
                raise ValueError(f"{where[name][i]} and {where[names[0]][i]} are joined (on {joined_on}) but have "
                                 "different contexts; the systems must answer the same contexts")
        given = [(name, items[name][i]["references"]) for name in names if items[name][i]["references"]]
        for name, refs in given[1:]:
            if refs != given[0][1]:
                raise ValueError(f"{where[name][i]} and {where[given[0][0]][i]} give different references for "
                                 "the same context")
        if given:  # references given in one file serve every system
            for name in names:
                items[name][i] = {**items[name][i], "references": list(given[0][1])}
    return Systems(names, paths, joined_on, items, {n: None for n in names}, where)


def _number(value: Any, where: str) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: score {value!r} is not a number")
    return float(value)


# ----------------------------------------------------------------------------------------------
# Scoring and comparing


def _score(metric: str, items: list[dict], options: dict[str, Any], refresh: bool, progress: bool,
           label: str) -> dict[str, Any]:
    """Per-item scores through the score cache, in saved chunks (a re-run, or a run after Ctrl-C,
    scores only what it has not stored)."""
    from dialeval.scoring.cache import scores_for
    from dialeval.scoring.chunks import check_options

    check_options(metric, options)
    return scores_for(metric, options, items, refresh, progress=progress, desc=f"{metric} on {label}")


def compare_systems(
    systems: Systems,
    metrics: Optional[Sequence[str]] = None,
    options: Optional[Mapping[str, Mapping[str, Any]]] = None,
    scores: Optional[Sequence[str]] = None,
    *,
    human: bool = True,
    settings: Optional[Settings] = None,
    refresh: bool = False,
    progress: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """Score (responses) or read (scored outputs) every system with each metric and compare them on
    every sub-score (or those in ``scores``). Returns the JSON-able result (see :func:`to_json`).

    ``settings`` (:class:`dialeval.stats.results.Settings`) with keyword overrides of its fields
    (``n_resamples=...``, ``seed=...``, ...) as for :func:`dialeval.stats.paired.compare`; each
    sub-score is ranked in the direction of its scale, whatever ``higher_is_better`` says."""
    options = {k: dict(v) for k, v in (options or {}).items()}
    settings = Settings.of(settings, **overrides)
    stats_options = settings.options()
    if systems.kind == "scored":
        metric = systems.scored[systems.names[0]]["metric"]
        if metrics and list(metrics) != [metric]:
            raise ValueError(f"the scored files hold {metric} scores; --metric {' '.join(metrics)} does not match")
        metrics = [metric]
    elif not metrics:
        raise ValueError("compare needs at least one metric to score the responses with")
    unknown = [m for m in metrics if m not in registry.METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {sorted(registry.METRICS)}")
    extra = [m for m in options if m not in metrics]
    if extra:
        raise ValueError(f"options given for {extra}, which is not compared (metrics: {list(metrics)})")
    human_items = systems.human_items() if human else None
    result: dict[str, Any] = {
        "systems": list(systems.names), "files": dict(zip(systems.names, systems.paths)),
        "input": systems.kind, "joined_on": systems.joined_on, "n_items": systems.n_items,
        "settings": {**stats_options}, "metrics": {},
    }
    produced: set[str] = set()
    for metric in metrics:
        metric_options = options.get(metric, {})
        if systems.kind == "scored":
            per_system = {name: systems.scored[name]["per_item"] for name in systems.names}
            flags = {name: systems.scored[name]["flags"] for name in systems.names}
            signature = systems.scored[systems.names[0]]["signature"]
            metric_options = systems.scored[systems.names[0]]["options"]
        else:
            entries = {name: _score(metric, systems.items[name], metric_options, refresh, progress, name)
                       for name in systems.names}
            signatures = {name: e["signature"] for name, e in entries.items()}
            if len(set(signatures.values())) > 1:
                raise ValueError(f"{metric} scored the systems under different signatures {signatures}: the scores "
                                 "depend on the input (e.g. a cutoff taken over each file); choose options that do not")
            signature = signatures[systems.names[0]]
            per_system = {name: e["per_item"] for name, e in entries.items()}
            flags = {name: e["flags"] for name, e in entries.items()}
        human_entry: Optional[dict[str, Any]] = None
        human_note = None
        if human_items is None:
            human_note = ("no references on every item" if systems.kind == "responses"
                          else "scored inputs carry no references")
        else:
            try:
                human_entry = _score(metric, human_items, metric_options, refresh, progress, HUMAN)
            except ValueError as error:
                human_note = f"{metric} cannot score the references as responses: {error}"
        entry: dict[str, Any] = {"signature": signature, "options": metric_options, "scores": {}, "skipped": {},
                                 "flagged": {name: flag_counts(flags[name]) for name in systems.names}}
        if human_note:
            entry["human_reference"] = human_note
        produced.update(per_system[systems.names[0]])
        subs = [s for s in per_system[systems.names[0]] if not scores or s in scores]
        for sub in subs:
            missing = [name for name in systems.names if sub not in per_system[name]]
            if missing:
                entry["skipped"][sub] = f"not scored for {missing}"
                continue
            matrix = np.array([per_system[name][sub] for name in systems.names], dtype=np.float64)
            human_row = None
            if human_entry is not None and sub in human_entry["per_item"]:
                human_row = np.asarray(human_entry["per_item"][sub], dtype=np.float64)
            keep = np.isfinite(matrix).all(axis=0)
            if keep.sum() < 2:
                entry["skipped"][sub] = f"fewer than 2 items with a {sub} score for every system"
                continue
            scale = scale_dict(metric, sub)
            higher = scale is None or scale["higher_is_better"] is not False
            with warnings.catch_warnings(record=True) as caught:  # e.g. too few items to reach significance
                warnings.simplefilter("always")
                comparison = paired.compare({name: matrix[s][keep] for s, name in enumerate(systems.names)},
                                            settings, higher_is_better=higher)
            block = {"scale": scale, "n_items": int(keep.sum()), "n_dropped": int((~keep).sum()),
                     **comparison.to_dict(), "warnings": [str(w.message) for w in caught]}
            if human_row is not None:
                kept_human = human_row[keep]
                if np.isfinite(kept_human).all():
                    low, high = mean_interval(kept_human, settings.n_resamples, settings.seed, settings.confidence)
                    block["human_reference"] = {"name": HUMAN, "mean": float(kept_human.mean()),
                                                "ci_low": low, "ci_high": high, "references": "leave-one-out"}
            entry["scores"][sub] = block
        result["metrics"][metric] = entry
    unknown_scores = [x for x in scores or () if x not in produced]
    if unknown_scores:
        raise ValueError(f"no sub-score {unknown_scores} among the scores of {list(metrics)}: {sorted(produced)}")
    signature = next((b["signature"] for e in result["metrics"].values() for b in e["scores"].values()), None)
    result["signature"] = signature
    return result


def compare_files(paths: Sequence[str | Path], metrics: Optional[Sequence[str]] = None, *,
                  names: Optional[Sequence[str]] = None, join: str = "auto", **kwargs: Any) -> dict[str, Any]:
    """:func:`read_systems` then :func:`compare_systems`: e.g.
    ``compare_files(["A.jsonl", "B.jsonl"], ["<metric>"], progress=False)``."""
    return compare_systems(read_systems(paths, names, join), metrics, **kwargs)


# ----------------------------------------------------------------------------------------------
# Reports


def _f(value: Optional[float]) -> str:
    if value is None:
        return ""
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}"


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def to_json(result: Mapping[str, Any]) -> str:
    """Strict JSON (no NaN).

    Top level: ``systems``, ``files``, ``input`` (``responses``/``scored``), ``joined_on``,
    ``n_items``, ``settings``, ``signature`` (of the statistics), and ``metrics``: metric -> {
    ``signature`` (the metric's), ``options``, ``skipped`` (sub-score -> why), ``flagged`` (system
    -> {flag: number of its items the metric flagged}, :mod:`dialeval.core.degenerate`), optional
    ``human_reference`` (why the human responses have no line), ``scores``: sub-score -> {``scale``
    (range, low, high, higher_is_better, direction, raw, meaning), ``n_items``, ``n_dropped``,
    ``systems`` (name, mean, ci_low, ci_high, rank; ranking order), ``pairs`` (system_a, system_b,
    mean_diff = a - b, diff_ci_low/high, p_bootstrap(_adjusted), p_ar(_adjusted), significant),
    ``settings``, ``signature``, ``warnings`` (e.g. "no pair can be significant" with too few
    items), optional ``human_reference`` (name, mean, ci_low, ci_high)}}."""
    return json.dumps(result, indent=1, allow_nan=False)


def markdown(result: Mapping[str, Any]) -> str:
    """The report: per metric and sub-score, its scale, the ranked systems with their intervals (and
    the human responses' score), and every pair's difference and p-values."""
    s = result["settings"]
    confidence = f"{s['confidence'] * 100:g} %"
    decisive = "approximate randomization" if s["test"] == "ar" else "paired bootstrap"
    lines = [
        f"# dialeval compare: {', '.join(result['systems'])}", "",
        f"{result['n_items']} items per system, joined on {'`id`' if result['joined_on'] == 'id' else 'line order'}. "
        f"Means with {confidence} bootstrap intervals ({s['n_resamples']} resamples); a pair is significant when "
        f"its {s['correction']}-corrected {decisive} p-value is < {s['alpha']:g}; systems share a rank when they "
        "are not significantly different from the best system of their group.", "",
        f"Statistics: `{result.get('signature')}`",
    ]
    for metric, entry in result["metrics"].items():
        lines += ["", f"## {metric}", "", f"`{entry['signature']}`"]
        if entry.get("human_reference"):
            lines += ["", f"Human responses: not shown ({entry['human_reference']})."]
        if any(entry["flagged"].values()):
            counts = {name: ", ".join(f"{n} {flag}" for flag, n in c.items()) or "none"
                      for name, c in entry["flagged"].items()}
            lines += ["", "Flagged responses (degenerate, scored under the policy of docs/inputs.md): "
                      + "; ".join(f"{name} {text}" for name, text in counts.items()) + "."]
        for sub, block in entry["scores"].items():
            scale = block["scale"]
            head = f"### {metric}: {sub}"
            if scale:
                head += f" ({scale['range']}, {scale['direction']}{', raw' if scale['raw'] else ''})"
            lines += ["", head, ""]
            if scale:
                lines += [scale["meaning"][:1].upper() + scale["meaning"][1:] + ".", ""]
            for text in block.get("warnings", []):
                lines += [f"Warning: {text}.", ""]
            if block["n_dropped"]:
                lines += [f"{block['n_dropped']} item(s) without a score for every system left out.", ""]
            lines += [f"| rank | system | mean | {confidence} interval |", "|---|---|---|---|"]
            for system in block["systems"]:
                lines.append(f"| {system['rank']} | {system['name']} | {_f(system['mean'])} | "
                             f"[{_f(system['ci_low'])}, {_f(system['ci_high'])}] |")
            human = block.get("human_reference")
            if human:
                lines.append(f"| - | *{human['name']}* (first reference vs the others) | {_f(human['mean'])} | "
                             f"[{_f(human['ci_low'])}, {_f(human['ci_high'])}] |")
            lines += ["", f"| pair | difference | {confidence} interval | p bootstrap | p AR | "
                          f"p bootstrap ({s['correction']}) | p AR ({s['correction']}) | significant |",
                      "|---|---|---|---|---|---|---|---|"]
            for pair in block["pairs"]:
                lines.append(
                    f"| {pair['system_a']} - {pair['system_b']} | {_f(pair['mean_diff'])} | "
                    f"[{_f(pair['diff_ci_low'])}, {_f(pair['diff_ci_high'])}] | {_p(pair['p_bootstrap'])} | "
                    f"{_p(pair['p_ar'])} | {_p(pair['p_bootstrap_adjusted'])} | {_p(pair['p_ar_adjusted'])} | "
                    f"{'yes' if pair['significant'] else 'no'} |")
        for sub, why in entry["skipped"].items():
            lines += ["", f"{metric}: {sub} not compared: {why}."]
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: str | Path, columns: int = 4) -> Path:
    """One figure: a panel per metric and sub-score with each system's mean and interval (best at the
    top), the human responses' mean as a dashed line and band, and the scale in the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(metric, sub, block) for metric, entry in result["metrics"].items()
              for sub, block in entry["scores"].items()]
    if not panels:
        raise ValueError("nothing to plot: no sub-score was compared")
    columns = min(columns, len(panels))
    rows = math.ceil(len(panels) / columns)
    k = len(result["systems"])
    fig, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, (0.9 + 0.32 * k) * rows + 0.3), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (metric, sub, block) in zip(axes.flat, panels):
        systems = block["systems"][::-1]  # best at the top
        y = np.arange(len(systems))
        means = np.array([x["mean"] for x in systems])
        errors = np.array([[x["mean"] - x["ci_low"] for x in systems], [x["ci_high"] - x["mean"] for x in systems]])
        ax.errorbar(means, y, xerr=np.maximum(errors, 0), fmt="o", capsize=3, markersize=4)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{x['name']} ({x['rank']})" for x in systems], fontsize=7)
        human = block.get("human_reference")
        if human:
            ax.axvline(human["mean"], linestyle="--", color="grey", linewidth=1)
            ax.axvspan(human["ci_low"], human["ci_high"], color="grey", alpha=0.15)
        scale = block["scale"]
        title = f"{metric}: {sub}"
        if scale:
            title += f"\n{scale['range']}, {scale['direction']}"
        ax.set_title(title, fontsize=8)
        ax.tick_params(axis="x", labelsize=6)
    if any(block.get("human_reference") for _, _, block in panels):
        fig.text(0.01, 0.005, f"dashed line and band: {HUMAN} (mean and interval); (n): rank", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


__all__ = [
    "HUMAN", "JOINS", "Systems", "agreement_of", "compare_files", "compare_systems", "compare_unpaired",
    "default_names", "markdown", "pair_items", "plot", "rank_groups", "read_systems", "scale_dict",
    "system_agreement", "to_json", "unpaired_agreement",
]
