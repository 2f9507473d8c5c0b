"""USL-H's arithmetic, torch-free: L's normalisation and the hierarchical combination.

* **L** (the authors' ``normalize.py`` and ``Scorer.minmax_normalize``): the response's negative
  log-likelihood ``nll`` (summed over its tokens; higher = less likely = more specific, the paper's
  specificity) clipped to ``[q25, q75]``, the quartiles of the NLL of the training corpus's validation
  responses, then ``(nll - q25) / (q75 - q25)``, in ``[0, 1]``.
* **USL-H** (the paper's hierarchy, the authors' ``composite_one_instance``, coefficients
  ``(a, b, c) = (0.33, 0.33, 0.34)``): ``"HS"``, the default, ``a*U + b*S + c*S*L``: what the
  authors' released scorer (``Scorer.get_score``) computes and reports as ``USL-HS``, and so what
  Yeh et al. (2021) ran for every published USL-H number after the paper (their
  ``read_usl_result`` reads ``USL-HS``); ``"H"``, the paper's and the authors' README's formula (a
  response must first be understandable, then sensible, and only then does specificity count),
  ``a*U + b*U*S + c*U*S*L``. Both lie in ``[0, 1]`` for U, S, L in ``[0, 1]``.
"""

from __future__ import annotations

from typing import Sequence

HIERARCHIES = ("H", "HS")
DEFAULT_HIERARCHY = "HS"  # the numbers USL-H is compared with (Yeh et al.) were computed so
COEFFICIENTS = (0.33, 0.33, 0.34)
QUANTILES = (0.25, 0.75)  # the authors' min and max of L's normalisation


def normalise_nll(nll: float, low: float, high: float) -> float:
    """``(clip(nll, low, high) - low) / (high - low)``; ``ValueError`` unless ``low < high``."""
    if not low < high:
        raise ValueError(f"L's normalisation needs low < high, got {low} and {high}")
    return (min(max(nll, low), high) - low) / (high - low)


def usl_h(u: float, s: float, l: float, hierarchy: str = DEFAULT_HIERARCHY,
          coefficients: Sequence[float] = COEFFICIENTS) -> float:
    """The combined score of one response (see the module docstring)."""
    a, b, c = coefficients
    if hierarchy == "H":
        return a * u + b * u * s + c * u * s * l
    if hierarchy == "HS":
        return a * u + b * s + c * s * l
    raise ValueError(f"hierarchy must be one of {HIERARCHIES}, got {hierarchy!r}")


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """``(q25, q75)`` of ``values`` (numpy's default linear interpolation, as the authors)."""
    import numpy as np

    low, high = np.quantile(np.asarray(values, dtype=np.float64), QUANTILES)
    return float(low), float(high)
