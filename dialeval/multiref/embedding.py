"""Word-embedding similarity of two token lists (Liu et al. 2016; Sharma et al. 2017's nlg-eval).

With word vectors ``e(w)`` (GloVe 6B 50d by default, see :mod:`dialeval.core.resources`) and
out-of-vocabulary tokens skipped (``oov="skip"``) or given the mean vector (``oov="mean"``, as
nlg-eval does):

* Embedding Average: ``cos(sum_w e(w) / |sum_w e(w)|, ...)`` of hypothesis and reference.
* Vector Extrema: per dimension d keep the most extreme value ``max_w |e(w)_d|`` with its sign
  (the larger-magnitude of the max and the min; the min on a tie); cosine of the two extrema
  vectors. nlg-eval's rule is the same except that it keeps a minimum of exactly 0.
* Greedy Matching: ``G(a, b) = mean_{w in a} max_{v in b} cos(e(w), e(v))``; the score is
  ``(G(hyp, ref) + G(ref, hyp)) / 2``.

A side with no vector (no token, or only unknown ones with ``oov="skip"``) scores 0.
"""

from __future__ import annotations

import numpy as np

from dialeval.core.resources import WordVectors

_EPS = 1e-12


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    denom = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / denom if denom > _EPS else 0.0


def embedding_average(hyp: list[str], ref: list[str], vectors: WordVectors, oov: str = "skip") -> float:
    h, r = vectors.lookup(hyp, oov), vectors.lookup(ref, oov)
    if len(h) == 0 or len(r) == 0:
        return 0.0
    return _cosine(h.sum(0), r.sum(0))


def _extrema(m: np.ndarray) -> np.ndarray:
    hi, lo = m.max(0), m.min(0)
    return np.where(hi > -lo, hi, lo)


def vector_extrema(hyp: list[str], ref: list[str], vectors: WordVectors, oov: str = "skip") -> float:
    h, r = vectors.lookup(hyp, oov), vectors.lookup(ref, oov)
    if len(h) == 0 or len(r) == 0:
        return 0.0
    return _cosine(_extrema(h), _extrema(r))


def greedy_matching(hyp: list[str], ref: list[str], vectors: WordVectors, oov: str = "skip") -> float:
    h, r = vectors.lookup(hyp, oov), vectors.lookup(ref, oov)
    if len(h) == 0 or len(r) == 0:
        return 0.0
    hn = h / np.maximum(np.linalg.norm(h, axis=1, keepdims=True), _EPS)
    rn = r / np.maximum(np.linalg.norm(r, axis=1, keepdims=True), _EPS)
    sim = hn @ rn.T  # (|hyp|, |ref|)
    return float((sim.max(1).mean() + sim.max(0).mean()) / 2)
