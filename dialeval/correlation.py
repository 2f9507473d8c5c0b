"""Agreement of metric scores with human judgment: Pearson and Spearman with p-values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from scipy import stats


@dataclass(frozen=True)
class Correlation:
    spearman: float
    spearman_p: float
    pearson: float
    pearson_p: float
    n: int

    def as_dict(self) -> dict[str, float]:
        return {
            "spearman": self.spearman, "spearman_p": self.spearman_p,
            "pearson": self.pearson, "pearson_p": self.pearson_p, "n": self.n,
        }


def correlate(metric: Sequence[float], human: Sequence[float]) -> Correlation:
    """Spearman's rho and Pearson's r (two-sided p-values) over pairs where both are finite."""
    if len(metric) != len(human):
        raise ValueError(f"{len(metric)} metric scores vs {len(human)} human scores")
    pairs = [(m, h) for m, h in zip(metric, human) if math.isfinite(m) and math.isfinite(h)]
    if len(pairs) < 3:
        raise ValueError(f"need at least 3 scored pairs to correlate, got {len(pairs)}")
    xs, ys = zip(*pairs)
    rho, rho_p = stats.spearmanr(xs, ys)
    r, r_p = stats.pearsonr(xs, ys)
    return Correlation(float(rho), float(rho_p), float(r), float(r_p), len(pairs))


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
