"""Scores a person can read: a score's percentile among human replies (issue 32).

A FED ``turn_overall`` of -0.8 or a GRADE score of 0.61 says little by itself. The behavioural
suite's real replies (:mod:`dialeval.metaeval.behaviour.cases`: people answering DailyDialog test contexts)
give each metric a reference distribution: :func:`human_percentiles` places any score among them,
as the mid-rank percentile ``100 * (below + equal / 2) / n`` (a score equal to the median human
reply's is at 50; above every human reply, 100).

The reference scores are the suite's own scores of the real replies, read through the score cache
(:func:`dialeval.metaeval.behaviour.suite.score_replies`): they are keyed like every cached score (metric,
options, the models as they resolve now, the bundled weights' hashes, the items), so retrained
weights or another model give a new distribution, never a stale one, and a reference the suite has
already scored costs nothing. A NaN (a flagged reply on an unbounded scale) has no percentile.
"""

from __future__ import annotations

import bisect
import math
from typing import Mapping, Sequence

from dialeval import registry
from dialeval.metaeval.behaviour.cases import DEFAULT_N, dailydialog_cases
from dialeval.metaeval.behaviour.suite import REAL, score_replies


def human_reference(metric: str, score: str, n: int = DEFAULT_N, seed: int = 0,
                    options: Mapping | None = None, progress: bool = False) -> list[float]:
    """The sorted finite ``score`` of ``metric`` over the real replies of ``n`` DailyDialog test
    contexts (the suite's cases of ``seed``; its declared options plus ``options``)."""
    behaviour = registry.spec(metric).behaviour
    merged = {**behaviour.options, **(options or {})}
    cases = dailydialog_cases(n, seed)
    scored, _ = score_replies(metric, cases, {REAL: [case.reply for case in cases]}, merged,
                              behaviour.references, progress=progress)
    if score not in scored[REAL]:
        raise ValueError(f"{metric} gives no {score!r} with options {merged}; it gives {sorted(scored[REAL])}")
    return sorted(v for v in scored[REAL][score] if v is not None and not math.isnan(v))


def percentile(value: float, reference: Sequence[float], higher_is_better: bool = True) -> float | None:
    """The mid-rank percentile of ``value`` in the sorted ``reference`` (module docstring), oriented
    so that 100 is best; ``None`` for a NaN."""
    if not reference:
        raise ValueError("an empty reference distribution")
    if value is None or math.isnan(value):
        return None
    below, above = bisect.bisect_left(reference, value), len(reference) - bisect.bisect_right(reference, value)
    equal = len(reference) - below - above
    worse = below if higher_is_better else above
    return 100.0 * (worse + equal / 2) / len(reference)


def human_percentiles(metric: str, score: str, values: Sequence[float], n: int = DEFAULT_N, seed: int = 0,
                      options: Mapping | None = None) -> list[float | None]:
    """Each of ``values`` (scores of ``metric``'s ``score``) as a percentile among human replies."""
    reference = human_reference(metric, score, n, seed, options)
    higher = registry.describe(metric, score).higher_is_better is not False
    return [percentile(v, reference, higher) for v in values]
