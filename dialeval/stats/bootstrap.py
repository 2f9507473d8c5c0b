"""The one percentile-bootstrap helper, and the random-number conventions its callers keep.

Every bootstrap loop of dialeval draws resamples of item indices here (:func:`resample`), then
reads a percentile interval off the resampled statistic (:func:`percentile_interval`);
:func:`percentile_bootstrap` does both for a statistic of one array. Two draws exist because
results published before this module existed must not change:

* ``draw="uniform"`` (the paired and unpaired tests, the human-response line of ``dialeval
  compare``): index ``floor(u * n)`` of the generator's next double ``u``, one double per index, so
  the resamples do not depend on how they are chunked in memory. The generator is the first of
  ``numpy.random.SeedSequence(seed).spawn(2)`` (:func:`spawned_rngs`; the second serves the
  approximate-randomization swaps).
* ``draw="integers"`` (correlation intervals, held-out win rates, stratified bootstraps):
  ``numpy.random.default_rng(seed).integers(0, n, size=(rows, n))``. numpy's bounded integers use
  32-bit draws buffered within one call, so the values depend on the block shape: each caller
  passes the ``chunk_rows`` it always used (1 row per call for :func:`dialeval.stats.correlation.
  bootstrap_interval`, 100 for :func:`bootstrap_ci`, every resample at once for a stratum).

Percentile levels: ``(1 - c)/2`` and ``1 - (1 - c)/2`` of numpy's linear interpolation (Hyndman &
Fan type 7); ``percent=True`` gives them as percentages to :func:`numpy.percentile` (the same
interpolation; the levels may differ from the fractions in the last bit), and ``percentiles`` pins
literal percentages (the held-out win rates' ``[2.5, 97.5]``).
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

DRAWS = ("uniform", "integers")


def spawned_rngs(seed: Optional[int]) -> Tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the bootstrap and for approximate randomization / permutations."""
    bootstrap_seq, ar_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(bootstrap_seq), np.random.default_rng(ar_seq)


def draw_indices(rng: np.random.Generator, rows: int, n: int, draw: str = "uniform") -> np.ndarray:
    """``(rows, n)`` indices in ``[0, n)`` drawn with replacement (module docstring for ``draw``)."""
    if draw == "uniform":
        u = rng.random((rows, n))
        return np.minimum((u * n).astype(np.intp), n - 1)
    if draw == "integers":
        return rng.integers(0, n, size=(rows, n))
    raise ValueError(f"draw must be one of {DRAWS}, got {draw!r}")


def resample(statistic: Callable[[np.ndarray], np.ndarray], n: int, n_resamples: int, rng: np.random.Generator,
             *, draw: str = "uniform", chunk_rows: int = 2000) -> np.ndarray:
    """``statistic`` of ``n_resamples`` resamples of ``n`` items: ``statistic(indices)`` maps a
    ``(rows, n)`` block of indices to one value (or one row of values) per resample; blocks of at
    most ``chunk_rows`` resamples are drawn in order. Returns ``(n_resamples, ...)``."""
    out: Optional[np.ndarray] = None
    for start in range(0, n_resamples, chunk_rows):
        stop = min(n_resamples, start + chunk_rows)
        values = np.asarray(statistic(draw_indices(rng, stop - start, n, draw)))
        if out is None:
            out = np.empty((n_resamples,) + values.shape[1:], dtype=values.dtype)
        out[start:stop] = values
    return out if out is not None else np.empty(0)


def percentile_interval(values: np.ndarray, confidence: float = 0.95, *, percent: bool = False,
                        percentiles: Optional[Sequence[float]] = None, axis: Optional[int] = None) -> np.ndarray:
    """``[low, high]`` percentile interval (along ``axis``); see the module docstring for the levels."""
    if percentiles is not None:
        return np.percentile(values, list(percentiles), axis=axis)
    tail = (1.0 - confidence) / 2.0
    if percent:
        tail *= 100
        return np.percentile(values, [tail, 100 - tail], axis=axis)
    return np.quantile(values, [tail, 1.0 - tail], axis=axis)


def percentile_bootstrap(statistic: Callable[[np.ndarray], np.ndarray], n: int, n_resamples: int,
                         rng: np.random.Generator, confidence: float = 0.95, *, draw: str = "uniform",
                         chunk_rows: int = 2000, percent: bool = False,
                         percentiles: Optional[Sequence[float]] = None, drop_nan: bool = False) -> Tuple[float, float]:
    """The percentile interval of a scalar ``statistic`` over resamples (:func:`resample`). With
    ``drop_nan`` resamples where it is NaN (undefined, e.g. a correlation of constant values) are
    dropped, and none left gives ``(nan, nan)``."""
    values = resample(statistic, n, n_resamples, rng, draw=draw, chunk_rows=chunk_rows)
    if drop_nan:
        values = values[~np.isnan(values)]
    if not len(values):
        return math.nan, math.nan
    low, high = percentile_interval(values, confidence, percent=percent, percentiles=percentiles)
    return float(low), float(high)


# ----------------------------------------------------------------------------------------------
# Intervals of one mean


def mean_interval(values: Sequence[float], n_resamples: int, seed: Optional[int], confidence: float = 0.95,
                  chunk_rows: int = 2000) -> Tuple[float, float]:
    """The percentile interval of the mean on the same resamples :func:`dialeval.stats.paired.compare`
    draws for ``len(values)`` items with this seed (``draw="uniform"``, first spawned generator)."""
    x = np.asarray(values, dtype=np.float64)
    return percentile_bootstrap(lambda idx: x[idx].mean(axis=1), len(x), n_resamples, spawned_rngs(seed)[0],
                                confidence, chunk_rows=chunk_rows)


def mean_ci(values: Sequence[float]) -> dict[str, float]:
    """Mean with the half-width of its normal 95 % confidence interval ``1.96 s / sqrt(n)``."""
    n = len(values)
    if n == 0:
        return {"mean": float("nan"), "ci95": float("nan"), "n": 0}
    mean = float(np.mean(values))
    sd = float(np.std(values, ddof=1)) if n > 1 else float("nan")
    return {"mean": mean, "ci95": 1.96 * sd / math.sqrt(n) if n > 1 else float("nan"), "n": n}


def bootstrap_ci(values: Sequence[float], resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95 % interval of the mean (``resamples`` resamples, seeded): the
    ``integers`` draw of ``default_rng(seed)`` in blocks of 100 resamples, percentiles 2.5 and 97.5."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return float("nan"), float("nan")
    return percentile_bootstrap(lambda idx: x[idx].mean(1), len(x), resamples, np.random.default_rng(seed),
                                draw="integers", chunk_rows=100, percentiles=(2.5, 97.5))


def mean_boot(values: Sequence[float], seed: int = 0) -> dict[str, float]:
    """:func:`mean_ci` plus the bootstrap interval ``low`` / ``high`` (:func:`bootstrap_ci`)."""
    out = mean_ci(values)
    out["low"], out["high"] = bootstrap_ci(values, seed=seed) if len(values) > 1 else (float("nan"), float("nan"))
    return out


__all__ = ["DRAWS", "bootstrap_ci", "draw_indices", "mean_boot", "mean_ci", "mean_interval", "percentile_bootstrap",
           "percentile_interval", "resample", "spawned_rngs"]
