"""The component scores the combined metric reads, and how a batch of items picks its model.

A :class:`Feature` is one headline sub-score of one meta-evaluation grid job
(:class:`dialeval.core.spec.Job`): FED's overall quality (``turn_overall`` or, on dialogue-level
items, ``dialog_overall``), holistic coherence and fluency, logical self-consistency, GRADE, SSREM
(its headline, which needs references, and its reference-free context fit ``ssrem_f``), FULL
(``full``, at the level its grid job scores the set) and the referenced multiref scores. Every one of
them is "higher = better" (its scale says so), so the combination can keep its weights
non-negative: a better component score never lowers the combined one.

A component that cannot score a batch (multiref and SSREM's headline without references, GRADE,
coherence and ``ssrem_f`` without contexts) is *not applicable*; the features of the applicable
components are the batch's *pattern*, and the combined model keeps one linear model per pattern seen
in training (:mod:`dialeval.combined.model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class Feature:
    """``name``: the first of ``subs`` present in job ``job``'s per-item scores."""

    name: str
    job: str
    subs: tuple[str, ...]

    def values(self, per_item: Mapping[str, Sequence[float]]) -> list[float] | None:
        """This feature's per-item values from one job's per-item scores, ``None`` if absent."""
        sub = next((s for s in self.subs if s in per_item), None)
        return None if sub is None else [float(v) for v in per_item[sub]]


FEATURES: tuple[Feature, ...] = (
    Feature("fed_overall", "fed", ("turn_overall", "dialog_overall")),
    Feature("coherence", "holistic", ("coherence",)),
    Feature("fluency", "holistic", ("fluency",)),
    Feature("consistency", "holistic-consistency", ("consistency",)),
    Feature("grade", "grade", ("grade",)),
    Feature("ssrem", "ssrem", ("ssrem",)),
    Feature("ssrem_f", "ssrem-f", ("ssrem_f",)),
    Feature("full", "full", ("full",)),
    Feature("bleu2", "multiref", ("bleu2",)),
    Feature("meteor", "multiref", ("meteor",)),
    Feature("rougeL", "multiref", ("rougeL",)),
    Feature("embedding_average", "multiref", ("embedding_average",)),
)
JOBS: tuple[str, ...] = tuple(dict.fromkeys(f.job for f in FEATURES))
# Options a component job runs with inside the combined metric, over its grid job's: when a component's
# default changes after the bundled model was trained, the option that restores the feature it was
# trained on goes here until the model is retrained on the new default's scores (three such pins, for
# holistic's weighted PMI and the GRADE and SSREM models that became defaults on 2026-11-26/27, were
# dropped on 2026-11-27, when the model was retrained on every current default).
PINNED_OPTIONS: dict[str, dict[str, Any]] = {}


def feature_table(job_scores: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, list[float]]:
    """``{feature name: per-item values}`` for every feature whose job scored the batch
    (``job_scores``: job name -> that job's per-item scores; a job left out was not applicable)."""
    table = {}
    for feature in FEATURES:
        if feature.job in job_scores:
            values = feature.values(job_scores[feature.job])
            if values is not None:
                table[feature.name] = values
    return table


def pattern(table: Mapping[str, Sequence[float]]) -> tuple[str, ...]:
    """The features present, in :data:`FEATURES` order (the key of a per-pattern model)."""
    return tuple(f.name for f in FEATURES if f.name in table)


def complete_rows(table: Mapping[str, Sequence[float]], names: Sequence[str]) -> list[int]:
    """Indices of the items whose ``names`` features are all finite (items a component flagged as
    degenerate carry NaN where the component has no worst value)."""
    n = len(next(iter(table.values()))) if table else 0
    return [i for i in range(n) if all(math.isfinite(table[name][i]) for name in names)]
