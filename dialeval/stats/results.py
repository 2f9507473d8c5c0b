"""The results of the system comparisons (:mod:`dialeval.stats.paired`, :mod:`dialeval.stats.unpaired`)
and :class:`Settings`, the one record of the settings they run with.

:class:`Settings` is passed instead of repeating its keywords in every signature: ``compare(systems,
Settings(seed=1))``; the comparison functions still take the keywords as overrides
(``compare(systems, seed=1)``), which :meth:`Settings.with_overrides` applies.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np

from dialeval.version import __version__

CORRECTIONS = ("holm", "bonferroni", "none")
TESTS = ("ar", "bootstrap")
# The seven settings a comparison's caller chooses (``dialeval compare`` reports exactly these).
OPTIONS = ("n_resamples", "n_permutations", "seed", "confidence", "alpha", "correction", "test")


@dataclass(frozen=True)
class Settings:
    """The settings a comparison runs with (all of them enter the signature).

    The defaults are those of ``dialeval compare``. ``ar_exact=None`` asks the paired test to
    decide (exact when ``2**n <= n_permutations``); a :class:`Comparison` holds the resolved value."""

    n_resamples: int = 1000  # bootstrap resamples (intervals and p_bootstrap)
    n_permutations: int = 10000  # AR trials; ignored when ar_exact
    ar_exact: Optional[bool] = None  # True: AR enumerated all 2**n swap patterns
    seed: Optional[int] = 12345
    confidence: float = 0.95
    alpha: float = 0.05
    correction: str = "holm"  # "holm", "bonferroni" or "none"
    test: str = "ar"  # the test that decides `significant` and the ranking: "ar" or "bootstrap"
    higher_is_better: bool = True

    def with_overrides(self, **overrides: Any) -> "Settings":
        """These settings with some fields replaced (``TypeError`` naming an unknown one)."""
        return dataclasses.replace(self, **overrides) if overrides else self

    @classmethod
    def of(cls, settings: Optional["Settings"] = None, **overrides: Any) -> "Settings":
        """``settings`` (default: :class:`Settings`'s defaults) with ``overrides`` applied."""
        return (settings if settings is not None else cls()).with_overrides(**overrides)

    def options(self) -> Dict[str, Any]:
        """The seven chosen settings (:data:`OPTIONS`) as keywords."""
        return {name: getattr(self, name) for name in OPTIONS}

    def check(self, max_chunk_bytes: int = 1) -> None:
        """``ValueError`` naming the first bad setting."""
        _check_int("n_resamples", self.n_resamples)
        _check_int("n_permutations", self.n_permutations)
        _check_int("max_chunk_bytes", max_chunk_bytes)
        if self.seed is not None:
            _check_int("seed", self.seed, minimum=0)
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {CORRECTIONS}, got {self.correction!r}")
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {TESTS}, got {self.test!r}")

    def resolved(self, ar_exact: bool) -> "Settings":
        """The record a result keeps: ``ar_exact`` decided, numbers as plain ints and floats."""
        return Settings(self.n_resamples, self.n_permutations, ar_exact,
                        None if self.seed is None else int(self.seed), float(self.confidence), float(self.alpha),
                        self.correction, self.test, bool(self.higher_is_better))

    def signature(self) -> str:
        """E.g. ``resamples:1000|permutations:10000|seed:12345|ci:0.95|correction:holm|alpha:0.05|
        test:ar|better:higher|version:0.1.0`` (``permutations:exact`` for the exact AR test)."""
        parts = [
            f"resamples:{self.n_resamples}",
            f"permutations:{'exact' if self.ar_exact else self.n_permutations}",
            f"seed:{'none' if self.seed is None else self.seed}",
            f"ci:{self.confidence:g}",
            f"correction:{self.correction}",
            f"alpha:{self.alpha:g}",
            f"test:{self.test}",
            f"better:{'higher' if self.higher_is_better else 'lower'}",
            f"version:{__version__}",
        ]
        return "|".join(parts)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "n_resamples": self.n_resamples, "n_permutations": self.n_permutations,
            "ar_exact": self.ar_exact, "seed": self.seed, "confidence": _json_float(self.confidence),
            "alpha": _json_float(self.alpha), "correction": self.correction, "test": self.test,
            "higher_is_better": self.higher_is_better,
        }


@dataclass(frozen=True)
class SystemResult:
    """One system: observed mean, bootstrap percentile interval of the mean, rank group (1 = best)."""

    name: str
    mean: float
    ci_low: float
    ci_high: float
    rank: int

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "mean": _json_float(self.mean), "ci_low": _json_float(self.ci_low),
                "ci_high": _json_float(self.ci_high), "rank": self.rank}


@dataclass(frozen=True)
class PairResult:
    """One pair (A, B): ``mean_diff = mean(A) - mean(B)``, its paired bootstrap interval, the raw and
    corrected p-values of both tests, and whether the chosen test's corrected p-value is < alpha."""

    system_a: str
    system_b: str
    mean_diff: float
    diff_ci_low: float
    diff_ci_high: float
    p_bootstrap: float
    p_bootstrap_adjusted: float
    p_ar: float
    p_ar_adjusted: float
    significant: bool

    def swapped(self) -> "PairResult":
        """The same comparison seen as (B, A): difference and interval negated, p-values unchanged."""
        return PairResult(self.system_b, self.system_a, -self.mean_diff, -self.diff_ci_high,
                          -self.diff_ci_low, self.p_bootstrap, self.p_bootstrap_adjusted, self.p_ar,
                          self.p_ar_adjusted, self.significant)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "system_a": self.system_a, "system_b": self.system_b,
            "mean_diff": _json_float(self.mean_diff),
            "diff_ci_low": _json_float(self.diff_ci_low), "diff_ci_high": _json_float(self.diff_ci_high),
            "p_bootstrap": _json_float(self.p_bootstrap),
            "p_bootstrap_adjusted": _json_float(self.p_bootstrap_adjusted),
            "p_ar": _json_float(self.p_ar), "p_ar_adjusted": _json_float(self.p_ar_adjusted),
            "significant": self.significant,
        }


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`.

    ``systems`` is in ranking order (best first; equal ranks keep mean order); ``pairs`` holds every
    unordered pair once, as (earlier, later) in the INPUT order; :meth:`pair` looks one up either way.
    """

    settings: Settings
    n_items: int
    systems: Tuple[SystemResult, ...]
    pairs: Tuple[PairResult, ...]

    @property
    def signature(self) -> str:
        return self.settings.signature()

    def system(self, name: str) -> SystemResult:
        for result in self.systems:
            if result.name == name:
                return result
        raise KeyError(f"no system {name!r}; systems: {[s.name for s in self.systems]}")

    def pair(self, a: str, b: str) -> PairResult:
        """The comparison of ``a`` with ``b`` (``mean_diff = mean(a) - mean(b)``)."""
        for result in self.pairs:
            if (result.system_a, result.system_b) == (a, b):
                return result
            if (result.system_a, result.system_b) == (b, a):
                return result.swapped()
        raise KeyError(f"no pair ({a!r}, {b!r}); systems: {[s.name for s in self.systems]}")

    def to_dict(self) -> Dict[str, Any]:
        """Strict JSON (``json.dumps(..., allow_nan=False)`` works): floats are all finite."""
        return {
            "signature": self.signature, "settings": self.settings.to_dict(), "n_items": self.n_items,
            "systems": [s.to_dict() for s in self.systems], "pairs": [p.to_dict() for p in self.pairs],
        }


@dataclass(frozen=True)
class AgreementPair:
    """One system pair in :func:`human_agreement` (differences are ``a - b``)."""

    system_a: str
    system_b: str
    human_diff: float
    metric_diff: float
    human_p_adjusted: float
    metric_p_adjusted: float
    human_significant: bool
    metric_significant: bool
    same_sign: bool  # sign(metric_diff) == sign(human_diff); a (tie-tolerance) zero matches nothing

    def to_dict(self) -> Dict[str, Any]:
        return {
            "system_a": self.system_a, "system_b": self.system_b,
            "human_diff": _json_float(self.human_diff), "metric_diff": _json_float(self.metric_diff),
            "human_p_adjusted": _json_float(self.human_p_adjusted),
            "metric_p_adjusted": _json_float(self.metric_p_adjusted),
            "human_significant": self.human_significant, "metric_significant": self.metric_significant,
            "same_sign": self.same_sign,
        }


@dataclass(frozen=True)
class Agreement:
    """The result of :func:`human_agreement`.

    * ``kendall_tau`` / ``kendall_p``: Kendall's tau-b (scipy, two-sided p) between the system-level
      mean metric and mean human scores; ``None`` when undefined (all means tied on one side).
    * ``n_human_significant``: pairs whose human difference is significant (chosen test, corrected).
    * ``n_same_sign``: of those, pairs where the metric's mean difference has the same sign.
    * ``sign_agreement``: ``n_same_sign / n_human_significant``; ``None`` when there is no
      human-significant pair (then all the counts are 0).
    * ``n_metric_significant``: of the human-significant pairs, how many the metric also finds
      significant (either direction); ``n_metric_significant_same_sign``: ... and in the same
      direction as the humans.
    """

    n_systems: int
    n_items: int
    kendall_tau: Optional[float]
    kendall_p: Optional[float]
    n_pairs: int
    n_human_significant: int
    n_same_sign: int
    sign_agreement: Optional[float]
    n_metric_significant: int
    n_metric_significant_same_sign: int
    pairs: Tuple[AgreementPair, ...]
    human: Comparison
    metric: Comparison

    @property
    def signature(self) -> str:
        return self.human.signature

    def to_dict(self) -> Dict[str, Any]:
        return {
            "signature": self.signature, "n_systems": self.n_systems, "n_items": self.n_items,
            "kendall_tau": _json_optional(self.kendall_tau), "kendall_p": _json_optional(self.kendall_p),
            "n_pairs": self.n_pairs, "n_human_significant": self.n_human_significant,
            "n_same_sign": self.n_same_sign, "sign_agreement": _json_optional(self.sign_agreement),
            "n_metric_significant": self.n_metric_significant,
            "n_metric_significant_same_sign": self.n_metric_significant_same_sign,
            "pairs": [p.to_dict() for p in self.pairs],
            "human": self.human.to_dict(), "metric": self.metric.to_dict(),
        }


def _json_float(value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"non-finite value {value!r} cannot be written as strict JSON")
    return value


def _json_optional(value: Optional[float]) -> Optional[float]:
    return None if value is None else _json_float(value)


def _check_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


__all__ = ["Agreement", "AgreementPair", "CORRECTIONS", "Comparison", "OPTIONS", "PairResult", "Settings",
           "SystemResult", "TESTS"]
