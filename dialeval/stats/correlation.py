"""Agreement of metric scores with human judgment (moved from ``dialeval.stats.correlation``).

* :func:`correlate`: Spearman's rho, Pearson's r and Kendall's tau-b with two-sided p-values
  (scipy), over the pairs where both values are finite.
* :func:`bootstrap_interval`: a seeded percentile bootstrap confidence interval of one of them
  (items resampled with replacement, ``n_resamples`` times; :mod:`dialeval.stats.bootstrap`).
* :func:`rowwise`: Pearson or Spearman of each row of one array with the same row of another, all
  rows at once (for many resamples of the same items).
* :func:`system_level`: the correlation of per-system means (one point per dialogue model).
* :func:`williams_test`: whether two metrics' correlations with the same human scores differ
  (Williams 1959, as recommended for dependent correlations by Graham & Baldwin 2014);
  :func:`williams_spearman` applies it to Spearman correlations of per-item scores.
* :func:`inter_rater`: leave-one-rater-out agreement between human raters (Pang et al. 2020).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from dialeval.stats.bootstrap import percentile_bootstrap

STATISTICS = ("spearman", "pearson", "kendall")


@dataclass(frozen=True)
class Correlation:
    spearman: float
    spearman_p: float
    pearson: float
    pearson_p: float
    n: int
    kendall: float = math.nan
    kendall_p: float = math.nan

    def as_dict(self) -> dict[str, float]:
        return {
            "spearman": self.spearman, "spearman_p": self.spearman_p,
            "pearson": self.pearson, "pearson_p": self.pearson_p,
            "kendall": self.kendall, "kendall_p": self.kendall_p, "n": self.n,
        }


def finite_pairs(metric: Sequence[float], human: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs where both values are finite, as two arrays; ``ValueError`` on a length mismatch."""
    if len(metric) != len(human):
        raise ValueError(f"{len(metric)} metric scores vs {len(human)} human scores")
    x, y = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def correlate(metric: Sequence[float], human: Sequence[float]) -> Correlation:
    """Spearman, Pearson and Kendall (tau-b) with two-sided p-values over the finite pairs."""
    xs, ys = finite_pairs(metric, human)
    if len(xs) < 3:
        raise ValueError(f"need at least 3 scored pairs to correlate, got {len(xs)}")
    rho, rho_p = stats.spearmanr(xs, ys)
    r, r_p = stats.pearsonr(xs, ys)
    tau, tau_p = stats.kendalltau(xs, ys)
    return Correlation(float(rho), float(rho_p), float(r), float(r_p), len(xs), float(tau), float(tau_p))


def _statistic(name: str, x: np.ndarray, y: np.ndarray) -> float:
    if name == "pearson":
        return float(stats.pearsonr(x, y)[0])
    if name == "spearman":
        return float(stats.spearmanr(x, y)[0])
    if name == "kendall":
        return float(stats.kendalltau(x, y)[0])
    raise ValueError(f"statistic must be one of {STATISTICS}, got {name!r}")


def rowwise(statistic: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``statistic`` (``"pearson"`` or ``"spearman"``) of each row of ``x`` with the same row of ``y``
    (2-D, same shape), vectorised over the rows; Spearman is Pearson's r of the rows' average ranks
    (ties shared, as :func:`scipy.stats.spearmanr`). A constant row gives NaN."""
    if statistic == "spearman":
        x, y = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
    elif statistic != "pearson":
        raise ValueError(f"statistic must be 'pearson' or 'spearman', got {statistic!r}")
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))


def bootstrap_interval(metric: Sequence[float], human: Sequence[float], statistic: str = "spearman",
                       n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over items resampled with replacement.

    Resamples whose values are constant (the statistic is undefined) are dropped; the same
    ``seed`` gives the same interval (``default_rng(seed).integers``, one resample per call).
    """
    xs, ys = finite_pairs(metric, human)
    if len(xs) < 3:
        raise ValueError(f"need at least 3 scored pairs for a bootstrap interval, got {len(xs)}")

    def one(idx: np.ndarray) -> np.ndarray:  # one resample per block: the draw this interval always used
        x, y = xs[idx[0]], ys[idx[0]]
        return np.array([_statistic(statistic, x, y) if np.ptp(x) > 0 and np.ptp(y) > 0 else math.nan])

    return percentile_bootstrap(one, len(xs), n_resamples, np.random.default_rng(seed), confidence,
                                draw="integers", chunk_rows=1, percent=True, drop_nan=True)


def system_level(metric: Sequence[float], human: Sequence[float], systems: Sequence[str | None]) -> Correlation | None:
    """Correlation of per-system mean metric score with per-system mean human score (finite pairs
    only); ``None`` when fewer than 3 systems are named."""
    if len(systems) != len(metric):
        raise ValueError(f"{len(systems)} system names for {len(metric)} scores")
    groups: dict[str, list[tuple[float, float]]] = {}
    for m, h, s in zip(metric, human, systems):
        if s is not None and math.isfinite(m) and math.isfinite(h):
            groups.setdefault(s, []).append((m, h))
    if len(groups) < 3:
        return None
    means = [tuple(np.mean(pairs, axis=0)) for pairs in groups.values()]
    return correlate([m for m, _ in means], [h for _, h in means])


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' t and its one-sided p-value for ``r12 > r13`` (dependent correlations sharing
    variable 1, the human scores; ``r23`` is the correlation between the two metrics):

    ``t = (r12 - r13) sqrt((n - 1)(1 + r23)) / sqrt(2 K (n - 1)/(n - 3) + (r12 + r13)^2 / 4 (1 - r23)^3)``
    with ``K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23``, Student t with ``n - 3`` degrees of freedom.
    ``K`` is the determinant of the three variables' correlation matrix, never negative; rounding below
    0 (two metrics that rank alike, ``r23 = 1``) counts as 0. NaN when the denominator is 0.
    """
    if n <= 3:
        raise ValueError(f"Williams' test needs more than 3 items, got {n}")
    k = max(0.0, 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23)
    denominator = math.sqrt(2 * k * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
    if denominator == 0:
        return math.nan, math.nan
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / denominator
    return float(t), float(stats.t.sf(t, n - 3))


def williams_spearman(a: Sequence[float], b: Sequence[float], human: Sequence[float]) -> float | None:
    """One-sided p of "Spearman(a, human) > Spearman(b, human)": :func:`williams_test` on the
    Spearman correlations over the items where all three are finite; ``None`` with 3 items or
    fewer, when ``a`` and ``b`` do not correlate (a constant one) or when they rank the items alike
    (one a monotone function of the other: no difference to test)."""
    keep = [i for i in range(len(human)) if all(math.isfinite(v[i]) for v in (a, b, human))]
    if len(keep) <= 3:
        return None
    pick = lambda xs: [xs[i] for i in keep]  # noqa: E731
    r12, r13 = stats.spearmanr(pick(a), pick(human))[0], stats.spearmanr(pick(b), pick(human))[0]
    r23 = stats.spearmanr(pick(a), pick(b))[0]
    if not math.isfinite(r23):
        return None
    p = williams_test(r12, r13, r23, len(keep))[1]
    return p if math.isfinite(p) else None


def inter_rater(ratings: Sequence[Sequence[float]]) -> dict[str, float]:
    """Leave-one-rater-out agreement (Pang et al. 2020, Tables 3-4): correlate each rater's scores
    with the mean of the other raters'; return the mean and max of Spearman and Pearson over raters.

    ``ratings[i][j]`` is rater ``j``'s rating of item ``i``; at least two raters are needed.
    """
    n_raters = {len(r) for r in ratings}
    if len(n_raters) != 1 or min(n_raters) < 2:
        raise ValueError(f"inter-rater agreement needs the same number (>= 2) of raters per item, got {sorted(n_raters)}")
    k = n_raters.pop()
    per_rater = []
    for j in range(k):
        own = [r[j] for r in ratings]
        others = [(sum(r) - r[j]) / (k - 1) for r in ratings]
        per_rater.append(correlate(own, others))
    spearman = [c.spearman for c in per_rater]
    pearson = [c.pearson for c in per_rater]
    return {
        "raters": k,
        "spearman_mean": sum(spearman) / k, "spearman_max": max(spearman),
        "pearson_mean": sum(pearson) / k, "pearson_max": max(pearson),
    }


def correlate_all(per_item: dict[str, list[float]], human: Sequence[float]) -> dict[str, dict]:
    """:func:`correlate` of every sub-score's per-item list with the human scores, as dicts."""
    return {name: correlate(scores, human).as_dict() for name, scores in per_item.items()}
