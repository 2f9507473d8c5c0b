"""From a (context, response) pair to the padded tensors of GRADE's graph branch
(Huang et al. 2020, Sections 3.2-3.3).

:meth:`GraphFeaturizer.pair_graph`: the ``context_keywords`` most salient keywords of the joined
context turns and the ``response_keywords`` of the response (:mod:`dialeval.grade.keywords`), each
mapped to its ConceptNet node (:meth:`KnowledgeGraph.concept`), and the weighted context-response
adjacency (:func:`dialeval.grade.graph.dialogue_adjacency`). A keyword in both halves gives two
nodes joined by a weight-1 edge. :meth:`GraphFeaturizer.batch` pads a list of such graphs into
``inputs (B, n, K + 1, d)`` (:meth:`NodeVectors.khop_inputs`, cached per node), ``adj (B, n, n)``
and ``mask (B, n)``; a pair without any keyword has no node (its graph vector is then the
pooled zero vector mapped by the output layer).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from dialeval.grade.graph import KnowledgeGraph, dialogue_adjacency
from dialeval.grade.keywords import KeywordExtractor
from dialeval.grade.nodes import NodeVectors


@dataclass(frozen=True)
class PairGraph:
    """One pair's keyword graph: node keys (concept, or the raw keyword outside the graph)."""

    context: tuple[str, ...]
    response: tuple[str, ...]
    in_graph: tuple[bool, ...]
    adj: np.ndarray

    @property
    def nodes(self) -> tuple[str, ...]:
        return self.context + self.response


class GraphFeaturizer:
    """Keywords -> concepts -> adjacency and node inputs (see module docstring)."""

    def __init__(self, extractor: KeywordExtractor, graph: KnowledgeGraph, vectors: NodeVectors,
                 neighbours: Sequence[int], context_keywords: int, response_keywords: int) -> None:
        self.extractor, self.graph, self.vectors = extractor, graph, vectors
        self.neighbours = tuple(neighbours)
        self.limits = (context_keywords, response_keywords)
        self.keywords = functools.lru_cache(maxsize=200_000)(self._keywords)
        self.node_inputs = functools.lru_cache(maxsize=200_000)(self._node_inputs)

    def _keywords(self, text: str, limit: int) -> tuple[str, ...]:
        return tuple(self.extractor.extract(text, limit))

    def _key(self, keyword: str) -> tuple[str, bool]:
        concept = self.graph.concept(keyword)
        return (concept, True) if concept is not None else (keyword, False)

    def _node_inputs(self, key: str, in_graph: bool) -> np.ndarray:
        return self.vectors.khop_inputs(self.graph, key if in_graph else None, key, self.neighbours)

    def pair_graph(self, context: Sequence[str], response: str) -> PairGraph:
        ctx = [self._key(k) for k in self.keywords(" ".join(context), self.limits[0])]
        resp = [self._key(k) for k in self.keywords(response, self.limits[1])]
        adj = dialogue_adjacency(self.graph, [k if g else None for k, g in ctx], [k if g else None for k, g in resp])
        return PairGraph(tuple(k for k, _ in ctx), tuple(k for k, _ in resp), tuple(g for _, g in ctx + resp), adj)

    def prefetch_vectors(self, graphs: Sequence[PairGraph]) -> None:
        """Hand the node vector source every concept the graphs' node inputs will read (nodes and
        their sampled k-hop neighbours) at once (:meth:`NodeVectors.prefetch`)."""
        nodes = {node for g in graphs for node in zip(g.nodes, g.in_graph)}
        names = {key for key, _ in nodes}
        for key in {key for key, in_graph in nodes if in_graph}:
            for k, limit in enumerate(self.neighbours, 1):
                names.update(self.graph.sample_neighbours(key, k, limit) if limit > 0 else ())
        self.vectors.prefetch(sorted(names))

    def batch(self, graphs: Sequence[PairGraph]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(inputs, adj, mask)`` padded to the largest graph (at least one slot)."""
        self.prefetch_vectors(graphs)
        n = max([len(g.nodes) for g in graphs] + [1])
        rows = len(self.neighbours) + 1
        inputs = np.zeros((len(graphs), n, rows, self.vectors.dim), dtype=np.float32)
        adj = np.zeros((len(graphs), n, n), dtype=np.float32)
        mask = np.zeros((len(graphs), n), dtype=np.float32)
        for b, g in enumerate(graphs):
            m = len(g.nodes)
            for i, (key, in_graph) in enumerate(zip(g.nodes, g.in_graph)):
                inputs[b, i] = self.node_inputs(key, in_graph)
            adj[b, :m, :m] = g.adj
            mask[b, :m] = 1.0
        return torch.from_numpy(inputs), torch.from_numpy(adj), torch.from_numpy(mask)

    def coverage(self, graphs: Sequence[PairGraph]) -> dict[str, float]:
        """Share of keyword nodes that are ConceptNet concepts, overall and per half."""
        def share(flags: list[bool]) -> float:
            return sum(flags) / len(flags) if flags else float("nan")

        ctx = [f for g in graphs for f in g.in_graph[: len(g.context)]]
        resp = [f for g in graphs for f in g.in_graph[len(g.context):]]
        return {"all": share(ctx + resp), "context": share(ctx), "response": share(resp),
                "keywords_per_context": len(ctx) / max(len(graphs), 1),
                "keywords_per_response": len(resp) / max(len(graphs), 1),
                "responses_without_keywords": sum(1 for g in graphs if not g.response) / max(len(graphs), 1)}
