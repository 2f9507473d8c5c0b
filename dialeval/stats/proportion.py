"""The Wilson score interval of a proportion (Wilson 1927; Brown, Cai & DasGupta 2001).

For ``k`` successes in ``n`` trials, ``p = k / n`` and ``z`` the standard normal quantile at
``1 - (1 - confidence) / 2`` (1.959964 at 95 %), the interval is ``centre -+ half`` with

    centre = (p + z^2 / (2 n)) / (1 + z^2 / n)
    half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

Unlike the normal approximation ``p -+ z sqrt(p (1 - p) / n)`` it stays inside [0, 1] and does not
shrink to a point at ``p = 0`` or ``1``. At 95 %: 9 of 10 -> [0.5958, 0.9821], 10 of 10 ->
[0.7225, 1], 180 of 200 -> [0.8506, 0.9343]. scipy's ``binomtest(k, n).proportion_ci(method="wilson")``
gives the same numbers; this one says its formula and takes only the normal quantile from scipy.
"""

from __future__ import annotations

import math

from scipy.stats import norm


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """``(low, high)``: the Wilson score interval of ``successes / n`` (module docstring);
    ``ValueError`` unless ``0 <= successes <= n``, ``n >= 1`` and ``0 < confidence < 1``."""
    if not (isinstance(n, int) and isinstance(successes, int) and n >= 1 and 0 <= successes <= n):
        raise ValueError(f"wilson_interval needs integers 0 <= successes <= n and n >= 1, got {successes} of {n}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    p, z2 = successes / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # at p = 0 (p = 1) the low (high) end is exactly 0 (1); the float arithmetic leaves ~1e-17
    return (0.0 if successes == 0 else centre - half), (1.0 if successes == n else centre + half)
