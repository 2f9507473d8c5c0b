"""The component scores the combined metric reads, and how a batch of items picks its model.

A :class:`Feature` is one headline sub-score of one meta-evaluation grid job
(:class:`dialeval.core.spec.Job`): holistic coherence and fluency, logical self-consistency, GRADE,
SSREM (its headline, which needs references, and its reference-free context fit ``ssrem_f``), the
referenced multiref scores, and USL-H with its three parts (read by issue 57's designs (g) and (h)).
Every one of them is "higher = better" (its scale says so), so the combination can keep its weights
non-negative: a better component score never lowers the combined one. FED's overall quality and FULL, features until issue 57, are none: their scores on the shared sets
were not at hand when the designs were compared leave-one-source-out (FED alone costs about 150
CPU-minutes over the sets), and on unseen sets they correlate near zero with the raters.

:data:`TRANSFER` are the components that pass every declared kind of the behavioural suite on unseen
DailyDialog test contexts (``benchmarks/results/behaviour.md``: the real reply above echoes, salads
and other dialogues' replies): a choice made without reading a human rating.

A component that cannot score a batch (multiref and SSREM's headline without references, GRADE,
coherence and ``ssrem_f`` without contexts) is *not applicable*; the features of the applicable
components are the batch's *pattern*, and the combined model keeps one linear model per pattern seen
in training (:mod:`dialeval.combined.model`).
"""

from __future__ import annotations

import functools
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
    Feature("coherence", "holistic", ("coherence",)),
    Feature("fluency", "holistic", ("fluency",)),
    Feature("consistency", "holistic-consistency", ("consistency",)),
    Feature("grade", "grade", ("grade",)),
    Feature("ssrem", "ssrem", ("ssrem",)),
    Feature("ssrem_f", "ssrem-f", ("ssrem_f",)),
    Feature("bleu2", "multiref", ("bleu2",)),
    Feature("meteor", "multiref", ("meteor",)),
    Feature("rougeL", "multiref", ("rougeL",)),
    Feature("embedding_average", "multiref", ("embedding_average",)),
    Feature("usl", "usl", ("usl",)),
    Feature("usl_u", "usl", ("usl_u",)),
    Feature("usl_s", "usl", ("usl_s",)),
    Feature("usl_l", "usl", ("usl_l",)),
)
TRANSFER: tuple[str, ...] = ("coherence", "grade", "ssrem_f")
# Options a component job runs with inside the combined metric, over its grid job's: when a component's
# default changes after the bundled model was trained, the option that restores the feature it was
# trained on goes here until the model is retrained on the new default's scores (three such pins, for
# holistic's weighted PMI and the GRADE and SSREM models that became defaults on 2026-11-26/27, were
# dropped on 2026-11-27, when the model was retrained on every current default).
PINNED_OPTIONS: dict[str, dict[str, Any]] = {}


def jobs_of(names: Sequence[str]) -> tuple[str, ...]:
    """The grid jobs that score the features ``names``, in :data:`FEATURES` order."""
    return tuple(dict.fromkeys(f.job for f in FEATURES if f.name in names))


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


INPUTS = ("score", "human", "rank")


def as_inputs(table: Mapping[str, Sequence[float]], inputs: str) -> dict[str, list[float]]:
    """``table`` as a model's inputs: ``"score"`` the component scores themselves; ``"human"`` each
    score's percentile among the human replies of the component's stored reference, in [0, 1]
    (:mod:`dialeval.scoring.human_reference`: the behavioural suite's real replies to DailyDialog test
    contexts, read without any rating); ``"rank"`` its percentile within the batch, ``(rank - 0.5) / n``
    over the finite values (average ranks for ties; an item's input then depends on the other items).
    A non-finite value stays NaN."""
    if inputs == "score":
        return {name: [float(v) for v in values] for name, values in table.items()}
    if inputs == "human":
        return {name: [math.nan if p is None else p / 100 for p in _reference(name).percentiles(_sub(name), values)]
                for name, values in table.items()}
    if inputs == "rank":
        return {name: _within(values) for name, values in table.items()}
    raise ValueError(f"inputs must be one of {INPUTS}, got {inputs!r}")


def _sub(name: str) -> str:
    return next(f.subs[0] for f in FEATURES if f.name == name)


@functools.lru_cache(maxsize=None)
def _reference(name: str):
    """The stored human reference of feature ``name``'s grid job (its options as the grid runs them);
    ``ValueError`` (:class:`dialeval.scoring.human_reference.StaleReference`) where there is none."""
    from dialeval.registry import grid_jobs
    from dialeval.scoring.human_reference import load_reference

    feature = next(f for f in FEATURES if f.name == name)
    job = next(j for j in grid_jobs() if j.name == feature.job)
    return load_reference(job.metric, dict(job.options))


def percentiles(values: Sequence[float]):
    """``(rank - 0.5) / n`` with average ranks for ties, as a numpy array: values on a common (0, 1) scale."""
    from scipy.stats import rankdata

    return (rankdata(values) - 0.5) / len(values)


def _within(values: Sequence[float]) -> list[float]:
    """:func:`percentiles` of the finite values, NaN elsewhere."""
    finite = [i for i, v in enumerate(values) if math.isfinite(v)]
    out = [math.nan] * len(values)
    for i, p in zip(finite, percentiles([values[i] for i in finite])):
        out[i] = float(p)
    return out


def complete_rows(table: Mapping[str, Sequence[float]], names: Sequence[str]) -> list[int]:
    """Indices of the items whose ``names`` features are all finite (items a component flagged as
    degenerate carry NaN where the component has no worst value)."""
    n = len(next(iter(table.values()))) if table else 0
    return [i for i in range(n) if all(math.isfinite(table[name][i]) for name in names)]
