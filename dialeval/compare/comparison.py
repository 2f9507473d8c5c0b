"""Scoring and comparing the joined systems of ``dialeval compare`` (:func:`compare_systems`): every
metric and sub-score, each system's mean with its interval, every pair's tests, a ranking, the human
responses beside them (:mod:`dialeval.compare` describes the result; :mod:`dialeval.stats` computes it)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from dialeval import registry
from dialeval.compare.systems import HUMAN, Systems, read_systems
from dialeval.core.degenerate import flag_counts
from dialeval.core.results import FLAGGED, PERCENTILE, UNFLAGGED, flag_summary, percentile_means
from dialeval.registry import scale_dict
from dialeval.stats import paired
from dialeval.stats.bootstrap import mean_interval
from dialeval.stats.results import Settings


def _score(metric: str, items: list[dict], options: dict[str, Any], refresh: bool, progress: bool,
           label: str) -> dict[str, Any]:
    """Per-item scores through the score cache, in saved chunks (a re-run, or a run after Ctrl-C,
    scores only what it has not stored)."""
    from dialeval.scoring.cache import scores_for
    from dialeval.scoring.chunks import check_options

    check_options(metric, options)
    return scores_for(metric, options, items, refresh, progress=progress, desc=f"{metric} on {label}")


def _reference(metric: str, options: Mapping[str, Any], references: bool) -> Any:
    """The stored human reference of ``metric`` with ``options`` (:mod:`dialeval.scoring.human_reference`;
    a stale or missing reference is a ``ValueError``)."""
    from dialeval.scoring.human_reference import load_reference

    return load_reference(metric, options, references)


def _readings(values: np.ndarray, flags: Sequence[Sequence[str]], sub: str, reference: Any) -> dict[str, Any]:
    """What a system's row shows beside its ``mean`` of ``values`` (the kept items' scores of ``sub``,
    ``flags`` theirs; :mod:`dialeval.core.results`): ``flagged``, the mean over unflagged items
    ``unflagged`` (``None`` when every item is flagged) and, with a ``reference`` holding ``sub``,
    ``percentile``, the mean percentile among human replies with flagged items at 0."""
    readings = flag_summary({sub: list(values)}, flags, [sub])
    unflagged = readings[f"{sub}{UNFLAGGED}"]
    out: dict[str, Any] = {"flagged": readings[FLAGGED], "unflagged": None if np.isnan(unflagged) else unflagged}
    if reference is not None and sub in reference.scores:
        out["percentile"] = percentile_means({sub: reference.percentiles(sub, list(values), flags)})[f"{sub}{PERCENTILE}"]
    return out


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
    percentiles: bool = False,
    **overrides: Any,
) -> dict[str, Any]:
    """Score (responses) or read (scored outputs) every system with each metric and compare them on
    every sub-score (or those in ``scores``). Returns the JSON-able result (see :func:`to_json`).

    ``settings`` (:class:`dialeval.stats.results.Settings`) with keyword overrides of its fields
    (``n_resamples=...``, ``seed=...``, ...) as for :func:`dialeval.stats.paired.compare`; each
    sub-score is ranked in the direction of its scale, whatever ``higher_is_better`` says.
    Beside each system's mean (flagged items at their worst value), its ``flagged`` count and
    ``unflagged`` mean (:func:`_readings`); ``percentiles``: also ``percentile``, the mean of the items'
    percentiles among human replies, flagged items at 0 (the statistics stay on the per-item scores)."""
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
        reference = None
        if percentiles:
            from dialeval.scoring.human_reference import load_reference, reference_signature

            reference = load_reference(metric, metric_options, systems.kind == "responses" and any(
                item.get("references") for name in systems.names for item in systems.items[name]))

            entry["percentiles"] = {"among": reference.label, "signature": reference_signature(reference)}
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
            kept_at = np.flatnonzero(keep)
            for row in block["systems"]:
                at = systems.names.index(row["name"])
                row.update(_readings(matrix[at][keep], [flags[row["name"]][i] for i in kept_at], sub, reference))
            if human_row is not None:
                kept_human = human_row[keep]
                if np.isfinite(kept_human).all():
                    low, high = mean_interval(kept_human, settings.n_resamples, settings.seed, settings.confidence)
                    block["human_reference"] = {"name": HUMAN, "mean": float(kept_human.mean()),
                                                "ci_low": low, "ci_high": high, "references": "leave-one-out",
                                                **_readings(kept_human, [human_entry["flags"][i] for i in kept_at],
                                                            sub, reference)}
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
