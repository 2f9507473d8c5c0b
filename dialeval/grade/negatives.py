"""Negative responses for GRADE's ranking training (Huang et al. 2020, Section 3.5).

* **Lexical sampling** (:class:`LexicalSampler`): BM25 (``bm25s``, Lù 2024: sparse-matrix BM25,
  scikit-learn tokenisation, English stop words removed) over the training responses, queried with
  the ground-truth response (Section 3.5; ``queries=`` overrides, e.g. the context, the query of
  earlier dialeval versions); of the ``depth`` best-ranked responses other than the true one the
  middle one (rank ``depth // 2``) is the negative: related in words, unlikely to be a valid reply.
  The paper used Lucene and, depending on the number of hits, a rank near the end of a longer list.
* **Embedding sampling** (:func:`embedding_negative`): for every pair ``pool`` (1,000) candidates
  drawn at random from *all* training responses, the ``top`` (5) with the highest cosine similarity
  to the true response, one of them drawn at random (the paper's ``random_num = 1000, topk = 5``).
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

    def sample(self, positives: Sequence[str], rng: random.Random, queries: Sequence[str] | None = None) -> list[int]:
        """One negative index per true response, BM25 queried with that response (or with
        ``queries[i]`` when given); a random response where BM25 finds fewer than 3 matches."""
        import bm25s

        queries = list(positives) if queries is None else list(queries)
        if len(queries) != len(positives):
            raise ValueError(f"LexicalSampler.sample: {len(queries)} queries for {len(positives)} responses")
        if not queries:
            return []
        tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False)
        k = min(self.depth + 1, len(self.responses))  # + 1: the true response itself usually ranks first
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        out = []
        for q, positive in enumerate(positives):
            ranked = [int(d) for d, s in zip(docs[q], scores[q]) if s > 0 and _norm(self.responses[d]) != _norm(positive)]
            ranked = ranked[: self.depth]
            out.append(ranked[len(ranked) // 2] if len(ranked) >= 3 else random_negative(self.responses, positive, rng))
        return out


def embedding_negative(positive: np.ndarray, candidates: np.ndarray, candidate_texts: Sequence[str], positive_text: str,
                       rng: random.Random, pool: int = 1000, top: int = 5) -> int:
    """Index (into ``candidates``) of one of the ``top`` of ``pool`` random candidates most similar
    (cosine; rows L2-normalised) to ``positive``, candidates equal to the true response skipped."""
    picks = np.array(rng.sample(range(len(candidates)), min(pool, len(candidates))))
    sims = candidates[picks] @ positive
    target = _norm(positive_text)
    best = []
    for i in np.argsort(-sims, kind="stable"):
        if _norm(candidate_texts[picks[i]]) != target:
            best.append(int(picks[i]))
            if len(best) == top:
                break
    if not best:
        raise ValueError("embedding_negative: no candidate differs from the true response")
    return rng.choice(best)


def random_negative(responses: Sequence[str], positive: str, rng: random.Random) -> int:
    """Index of a uniformly drawn response different from ``positive``."""
    for _ in range(100):
        i = rng.randrange(len(responses))
        if _norm(responses[i]) != _norm(positive):
            return i
    raise ValueError("random_negative: every response equals the true response")
