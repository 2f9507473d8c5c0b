"""The Wilson score interval of a proportion (Wilson 1927; Brown, Cai & DasGupta 2001).

For ``k`` successes in ``n`` trials, ``p = k / n`` and ``z`` the standard normal quantile at
``1 - (1 - confidence) / 2`` (1.959964 at 95 %), the interval is ``centre -+ half`` with

    centre = (p + z^2 / (2 n)) / (1 + z^2 / n)
    half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

Unlike the normal approximation ``p -+ z sqrt(p (1 - p) / n)`` it stays inside [0, 1] and does not
shrink to a point at ``p = 0`` or ``1``. At 95 %: 9 of 10 -> [0.5958, 0.9821], 10 of 10 ->
[0.7225, 1], 180 of 200 -> [0.8506, 0.9343]. Computed by scipy's
``binomtest(k, n).proportion_ci(confidence, method="wilson")``; the formula above is what it computes
(``tests/test_proportion.py`` checks it by hand).
"""

from __future__ import annotations

from scipy.stats import binomtest


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """``(low, high)``: the Wilson score interval of ``successes / n`` (module docstring);
    ``ValueError`` unless ``0 <= successes <= n``, ``n >= 1`` and ``0 < confidence < 1``."""
    if not (isinstance(n, int) and isinstance(successes, int) and n >= 1 and 0 <= successes <= n):
        raise ValueError(f"wilson_interval needs integers 0 <= successes <= n and n >= 1, got {successes} of {n}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    interval = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(interval.low), float(interval.high)
