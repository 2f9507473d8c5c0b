"""Negative responses for GRADE's ranking training (Huang et al. 2020, Section 3.5).

* **Lexical sampling** (:class:`LexicalSampler`): BM25 (``bm25s``, Lù 2024: sparse-matrix BM25,
  scikit-learn tokenisation, English stop words removed) over the training responses, queried with
  the context; of the ``depth`` best-ranked responses the middle one (rank ``depth // 2``) is the
  negative: related in words, unlikely to be a valid reply. The paper used Lucene.
* **Embedding sampling** (:func:`embedding_negative`): ``pool`` (1,000) random candidate
  utterances, the ``top`` (5) with the highest cosine similarity to the true response, one of them
  drawn at random.
* **Random sampling** (:func:`random_negative`): a uniformly drawn training response (ablation).

Every sampler skips candidates equal to the true response (after whitespace/case normalisation).
"""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


class LexicalSampler:
    """BM25 over ``responses``; :meth:`sample` returns the index of the mid-ranked response."""

    def __init__(self, responses: Sequence[str], depth: int = 30) -> None:
        import bm25s

        if not responses:
            raise ValueError("LexicalSampler: responses is empty")
        if depth < 3:
            raise ValueError(f"depth must be >= 3, got {depth}")
        self.responses, self.depth = list(responses), min(depth, len(responses))
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(self.responses, stopwords="en", show_progress=False), show_progress=False)

    def sample(self, queries: Sequence[str], positives: Sequence[str], rng: random.Random) -> list[int]:
        """One negative index per query (a random response where BM25 finds too few matches)."""
        import bm25s

        tokens = bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
        docs, scores = self.retriever.retrieve(tokens, k=self.depth, show_progress=False)
        out = []
        for q, positive in enumerate(positives):
            ranked = [int(d) for d, s in zip(docs[q], scores[q]) if s > 0 and _norm(self.responses[d]) != _norm(positive)]
            out.append(ranked[len(ranked) // 2] if len(ranked) >= 3 else random_negative(self.responses, positive, rng))
        return out


def embedding_negative(positive: np.ndarray, candidates: np.ndarray, candidate_texts: Sequence[str], positive_text: str,
                       rng: random.Random, pool: int = 1000, top: int = 5) -> int:
    """Index (into ``candidates``) of one of the ``top`` of ``pool`` random candidates most similar
    (cosine; rows L2-normalised) to ``positive``."""
    picks = rng.sample(range(len(candidates)), min(pool, len(candidates)))
    picks = [i for i in picks if _norm(candidate_texts[i]) != _norm(positive_text)]
    if not picks:
        raise ValueError("embedding_negative: no candidate differs from the true response")
    sims = candidates[picks] @ positive
    best = [picks[i] for i in np.argsort(-sims)[:top]]
    return rng.choice(best)


def random_negative(responses: Sequence[str], positive: str, rng: random.Random) -> int:
    """Index of a uniformly drawn response different from ``positive``."""
    for _ in range(100):
        i = rng.randrange(len(responses))
        if _norm(responses[i]) != _norm(positive):
            return i
    raise ValueError("random_negative: every response equals the true response")
