"""SSREM's ``g`` (Clark et al. 2019's word / sentence mover's similarity on word vectors) and
``h``, the mean of the min-max scaled ``f`` and ``g`` (Section 3.4)."""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np

from dialeval.core.options import check_choice
from dialeval.core.resources import WordVectors

MOVER_MODES = ("sms", "wms", "s+wms")
SENTENCE_END = frozenset(".!?")
_EPS = 1e-9


def _bag(tokens: list[str], vectors: WordVectors, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The weighted points of a text for the mover's similarity (see module docstring)."""
    points: list[np.ndarray] = []
    weights: list[float] = []
    sentences: list[list[str]] = [[]]
    for t in tokens:
        if t in SENTENCE_END:
            sentences.append([])
        elif any(ch.isalnum() for ch in t):
            sentences[-1].append(t)
    words = [t for s in sentences for t in s if t in vectors.index]
    if mode in ("wms", "s+wms"):
        for w in dict.fromkeys(words):
            points.append(vectors.matrix[vectors.index[w]])
            weights.append(words.count(w))
    if mode in ("sms", "s+wms"):
        for s in sentences:
            found = vectors.lookup(s)
            if len(found):
                points.append(found.mean(0))
                weights.append(len(found))
    if not points:
        return np.zeros((0, vectors.dim), dtype=np.float32), np.zeros(0)
    w = np.asarray(weights, dtype=np.float64)
    return np.stack(points).astype(np.float64), w / w.sum()


def earth_movers_distance(a: np.ndarray, b: np.ndarray, cost: np.ndarray, backend: str | None = None) -> float:
    """``min_T sum_ij T_ij cost_ij`` s.t. ``T 1 = a``, ``T^T 1 = b``, ``T >= 0`` (``a``, ``b`` sum to 1).

    An exact linear program either way: POT's network simplex (``backend="pot"``, PyPI ``pot``, about
    30x faster on these small problems) when it is installed, else SciPy's HiGHS (``"scipy"``).
    """
    n, m = cost.shape
    if n == 1:
        return float(b @ cost[0])
    if m == 1:
        return float(a @ cost[:, 0])
    backend = backend or ("pot" if _has_pot() else "scipy")
    if backend == "pot":
        import ot

        return float(ot.emd2(a, b, np.ascontiguousarray(cost)))
    from scipy.optimize import linprog
    from scipy.sparse import eye, kron, vstack

    rows = kron(eye(n), np.ones((1, m)))
    cols = kron(np.ones((1, n)), eye(m))
    solved = linprog(cost.ravel(), A_eq=vstack([rows, cols]).tocsr(), b_eq=np.concatenate([a, b]),
                     bounds=(0, None), method="highs")
    if not solved.success:
        raise RuntimeError(f"earth mover's distance: the transport problem failed ({solved.message})")
    return float(solved.fun)


@functools.lru_cache(maxsize=1)
def _has_pot() -> bool:
    import importlib.util

    return importlib.util.find_spec("ot") is not None


def mover_similarity(hypothesis: list[str], reference: list[str], vectors: WordVectors, mode: str = "sms") -> float:
    """Clark et al. (2019) ``exp(-EMD)`` between the bags of two token lists; 0 if either is empty."""
    check_choice("mover", mode, MOVER_MODES)
    (x, a), (y, b) = _bag(hypothesis, vectors, mode), _bag(reference, vectors, mode)
    if len(x) == 0 or len(y) == 0:
        return 0.0
    cost = np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0.0))
    return math.exp(-earth_movers_distance(a, b, cost))


def minmax(values: Sequence[float], low: float, high: float) -> list[float]:
    """``clip((x - low) / (high - low), 0, 1)``; 0.5 for every item when ``high - low`` is ~0."""
    if high - low < _EPS:
        return [0.5] * len(values)
    return [min(1.0, max(0.0, (v - low) / (high - low))) for v in values]


def combine(f: Sequence[float], g: Sequence[float], f_range: tuple[float, float],
            g_range: tuple[float, float]) -> list[float]:
    """Section 3.4: ``h = (minmax(f) + minmax(g)) / 2``."""
    return [(a + b) / 2 for a, b in zip(minmax(f, *f_range), minmax(g, *g_range))]
