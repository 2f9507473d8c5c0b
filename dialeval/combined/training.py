"""Training the combined metric (issue 21): the component metrics' per-item scores on every
human-judgment set (:func:`gather`) and the non-negative ridge regressions fitted on them
(:func:`fit_bundle`: one model per feature pattern trained on all sets, and every set's
leave-one-set-out model). ``training/combined.py`` parses its options and calls these.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Sequence

from dialeval.combined.features import feature_table, pattern
from dialeval.combined.model import CombinedModel, fit_linear
from dialeval.combined.runner import component_scores, model_of
from dialeval.registry import load_judgments


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
