"""The arithmetic of the behavioural suite: does the real reply beat a kind, does a control leave the
score alone? Pure numpy/scipy, no metric and no I/O.

Kinds. Over the ``n`` cases where the kind was built, ``wins`` counts those where the real reply
scores *strictly* better than the kind (higher, or lower for a lower-is-better score), ``ties``
those with equal scores; ``share = wins / n``, with the Wilson score interval at 95 %
(:func:`dialeval.stats.proportion.wilson_interval`). A NaN score is the worst value (the
degenerate-response policy, :mod:`dialeval.core.degenerate`, gives NaN to a flagged reply on an
unbounded scale): a NaN kind loses to any real score, two NaNs tie, a NaN real reply wins nothing.
A declared kind's verdict (issue 54): ``"pass"`` when ``share >= BAR`` (0.90) and the interval's
lower bound ``>= LOW_BAR`` (0.80), ``"FAIL"`` when ``share < BAR``, otherwise ``"not enough
contexts"``: a share of 0.90 on 10 contexts (9 of 10, interval [0.60, 0.98]) says too little to
pass, and 10 of 10 still does (0.72); 18 of 20 does not (0.70), 90 of 100 passes (0.83), 180 of 200
too (0.85). ``mean_change`` is the mean of ``kind - real`` over the cases where both are finite.

Controls. Over the cases where the control was built (it differs from the reply) and both scores
are finite: ``mean_change = mean(control - real)``, its paired bootstrap percentile interval
(:func:`dialeval.stats.paired.compare`, Koehn 2004), and ``standardized``: ``mean_change``
divided by the standard deviation of the real replies' finite scores (all cases). A declared
control *passes* when ``|standardized| <= CONTROL_BAR`` (0.5: the control moves the score by less
than half the spread of human replies' scores).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from dialeval.stats.paired import compare
from dialeval.stats.proportion import wilson_interval

BAR = 0.90
LOW_BAR = 0.80
CONTROL_BAR = 0.5
CONFIDENCE = 0.95
PASS, FAIL, UNDECIDED = "pass", "FAIL", "not enough contexts"


def kind_verdict(share: float, ci_low: float) -> str:
    """:data:`FAIL` below :data:`BAR`, :data:`PASS` at or above it with a Wilson lower bound of at
    least :data:`LOW_BAR`, else :data:`UNDECIDED` (module docstring)."""
    if share < BAR:
        return FAIL
    return PASS if ci_low >= LOW_BAR else UNDECIDED


@dataclass(frozen=True)
class KindCheck:
    """One kind against the real replies, on one sub-score (module docstring)."""

    kind: str
    n: int
    wins: int
    ties: int
    share: float | None
    ci_low: float | None
    ci_high: float | None
    mean_change: float | None
    declared: bool

    @property
    def verdict(self) -> str | None:
        """:func:`kind_verdict` of a declared kind; :data:`FAIL` for one with no case (it could not be
        checked); ``None`` for a kind not declared (reported only)."""
        if not self.declared:
            return None
        return FAIL if self.share is None or self.ci_low is None else kind_verdict(self.share, self.ci_low)

    @property
    def passed(self) -> bool | None:
        """Whether the verdict is :data:`PASS` (``None``: not declared)."""
        return None if self.verdict is None else self.verdict == PASS


@dataclass(frozen=True)
class ControlCheck:
    """One control against the real replies, on one sub-score (module docstring)."""

    control: str
    n: int
    mean_change: float | None
    ci_low: float | None
    ci_high: float | None
    standardized: float | None
    declared: bool
    passed: bool | None


def _as_array(values: Sequence[float | None]) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=float)


def _worst_as_inf(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Scores oriented so that larger is better, NaN as minus infinity."""
    oriented = values if higher_is_better else -values
    return np.where(np.isnan(oriented), -np.inf, oriented)


def _finite_mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def check_kind(kind: str, real: Sequence[float], other: Sequence[float | None], higher_is_better: bool = True,
               declared: bool = False) -> KindCheck:
    """``real[i]`` against ``other[i]`` for the cases where ``other[i]`` is not ``None`` (not built)."""
    if len(real) != len(other):
        raise ValueError(f"{kind}: {len(real)} real scores but {len(other)} {kind} scores")
    built = [i for i, v in enumerate(other) if v is not None]
    r, o = _as_array([real[i] for i in built]), _as_array([other[i] for i in built])
    a, b = _worst_as_inf(r, higher_is_better), _worst_as_inf(o, higher_is_better)
    n, wins, ties = len(built), int(np.sum(a > b)), int(np.sum(a == b))
    finite = np.isfinite(r) & np.isfinite(o)
    mean_change = _finite_mean(o[finite] - r[finite])
    if not n:
        return KindCheck(kind, 0, 0, 0, None, None, None, None, declared)
    low, high = wilson_interval(wins, n, CONFIDENCE)
    return KindCheck(kind, n, wins, ties, wins / n, low, high, mean_change, declared)


def check_control(control: str, real: Sequence[float], changed: Sequence[float | None], declared: bool = False,
                  seed: int = 0, n_resamples: int = 1000) -> ControlCheck:
    """``changed[i] - real[i]`` for the cases where the control was built and both are finite."""
    if len(real) != len(changed):
        raise ValueError(f"{control}: {len(real)} real scores but {len(changed)} {control} scores")
    r_all = _as_array(real)
    built = [i for i, v in enumerate(changed) if v is not None]
    r, c = r_all[built], _as_array([changed[i] for i in built])
    finite = np.isfinite(r) & np.isfinite(c)
    r, c = r[finite], c[finite]
    if len(r) < 2:
        return ControlCheck(control, int(len(r)), _finite_mean(c - r), None, None, None, declared, None)
    with warnings.catch_warnings():  # only the difference and its interval are used, not the tests' power
        warnings.simplefilter("ignore", RuntimeWarning)
        pair = compare({"control": c, "real": r}, n_resamples=n_resamples, n_permutations=n_resamples,
                       seed=seed).pair("control", "real")
    spread = float(np.std(r_all[np.isfinite(r_all)], ddof=1))
    # with no spread among the real replies there is no scale: any change fails, none passes
    standardized = pair.mean_diff / spread if spread > 0 else (0.0 if pair.mean_diff == 0 else None)
    return ControlCheck(control, int(len(r)), pair.mean_diff, pair.diff_ci_low, pair.diff_ci_high,
                        standardized, declared,
                        (standardized is not None and abs(standardized) <= CONTROL_BAR) if declared else None)


def best_by_worst_kind(found: Mapping[Any, Mapping[str, Sequence[Any]]]) -> Any:
    """The candidate (a variant, a weight) that the suite prefers, read off no human rating: the one
    whose worst declared kind has the highest share, among those whose declared controls all pass
    (every candidate when none does); ties go to the earlier candidate. ``found`` maps each candidate
    to ``{"kinds": [KindCheck, ...], "controls": [ControlCheck, ...]}`` of the same replies."""
    if not found:
        raise ValueError("no candidate to choose from")
    passing = [c for c, checks in found.items() if all(ctl.passed for ctl in checks["controls"])] or list(found)
    return max(passing, key=lambda c: min((k.share for k in found[c]["kinds"] if k.share is not None), default=-1.0))


def first_passing(found: Mapping[Any, Mapping[str, Sequence[Any]]]) -> Any | None:
    """The first candidate, in ``found``'s order, whose every declared kind passes (the least
    departure from the first candidate when they are ordered by how far they move from it, as
    weights from 0 are); ``None`` when none does. Controls are not read: they are reported beside."""
    return next((c for c, checks in found.items() if all(k.passed for k in checks["kinds"])), None)
