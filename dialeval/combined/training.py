"""Training the combined metric (issues 21, 57): the component metrics' per-item scores on every
human-judgment set (:func:`gather`) and the models of a :class:`dialeval.combined.designs.Design`
fitted on them (:func:`fit_bundle`: one model per feature pattern trained on all sets, and every
set's model trained without its source). ``training/combined.py`` parses its options and calls these.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Mapping, Sequence

from dialeval.combined.designs import DEFAULT, Design
from dialeval.combined.features import FEATURES, feature_table, jobs_of, pattern
from dialeval.combined.model import RIDGE, CombinedModel
from dialeval.combined.runner import component_scores, model_of
from dialeval.registry import load_judgments

Rows = dict[str, tuple[dict, list[float]]]


def gather(set_names: Sequence[str], features: Sequence[str] = tuple(f.name for f in FEATURES)
           ) -> tuple[Rows, dict[str, str], dict[str, dict[str, list[list[str]]]]]:
    """Per set: (feature table, human scores) of ``features``; the component weights the scores came
    from; and per set, each component job's per-item flags."""
    rows, components, flags = {}, {}, {}
    for name in set_names:
        judged = load_judgments(name)
        items = [vars(it) for it in judged]
        start = time.perf_counter()
        found = component_scores(items, name, jobs=jobs_of(features))
        missing = found.missing_weights()
        if missing:
            raise SystemExit(f"{name}: component weights missing for {missing}: {[found.left_out[j] for j in missing]}")
        for job, signature in found.signatures.items():
            components.setdefault(job, model_of(signature))
        table = feature_table(found.scores)
        rows[name] = ({f: v for f, v in table.items() if f in features}, [it.score for it in judged])
        flags[name] = found.flags
        print(f"{name}: {len(items)} items, features {pattern(rows[name][0])} ({time.perf_counter() - start:.1f} s)",
              file=sys.stderr)
    return rows, components, flags


def source_of(set_name: str) -> str:
    """The metric that owns the set (one paper's sets: its systems, raters and scale), else the set."""
    from dialeval.registry import set_owner

    owner = set_owner(set_name)
    return set_name if owner is None else owner.name


def fit_bundle(rows: Rows, ridge: float = RIDGE, design: Design = DEFAULT,
               sources: Mapping[str, str] | None = None) -> CombinedModel:
    """``design``'s trained-on-all model per pattern (its features a set has), and for every set the
    model of its pattern trained on the sets of every other source (``sources``: set -> source,
    :func:`source_of` by default). A set with none of the design's features gets no model."""
    sources = {name: source_of(name) for name in rows} if sources is None else sources
    patterns = {name: tuple(f for f in pattern(table) if f in design.features) for name, (table, _) in rows.items()}

    def training(features: Sequence[str], without: str | None = None) -> dict[str, Any]:
        return {n: r for n, r in rows.items() if (without is None or sources[n] != without)
                and set(features) <= set(patterns[n])}

    found = sorted({p for p in patterns.values() if p}, key=len, reverse=True)
    models = [design.fit_model(training(p), p, ridge) for p in found]
    held_out = {}
    for name, features in patterns.items():
        if not features:
            continue
        others = training(features, sources[name])
        if not others and design.reads_ratings:
            raise SystemExit(f"{name}: no set of another source has its features {features}: no held-out model")
        held_out[name] = design.fit_model(others, features, ridge)
    return CombinedModel(models, held_out, {}, ridge, design=design.name)
