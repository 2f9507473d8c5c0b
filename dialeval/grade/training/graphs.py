"""GRADE's keyword graphs for training, built once per split and cached compactly: node ids into one
shared table of k-hop node inputs, plus the context-response hop weights (:class:`CompactGraphs`)."""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np
import torch

from dialeval.grade.features import GraphFeaturizer, PairGraph


class CompactGraphs:
    """The keyword graphs of many pairs, compactly: node ids into a shared node table (context slots
    ``0..C-1``, response slots ``C..C+R-1``, -1 = no node) and the context-response hop weights."""

    def __init__(self, ids: np.ndarray, weights: np.ndarray, n_context: int) -> None:
        self.ids, self.weights, self.n_context = ids, weights, n_context

    @classmethod
    def build(cls, graphs: Sequence[PairGraph], node_row: Callable[[str, bool], int], limits: tuple[int, int]) -> "CompactGraphs":
        c, r = limits
        ids = np.full((len(graphs), c + r), -1, dtype=np.int32)
        weights = np.zeros((len(graphs), c, r), dtype=np.float32)
        for b, g in enumerate(graphs):
            nc, nr = len(g.context), len(g.response)
            for i, (key, in_graph) in enumerate(zip(g.nodes, g.in_graph)):
                ids[b, i if i < nc else c + i - nc] = node_row(key, in_graph)
            weights[b, :nc, :nr] = g.adj[:nc, nc : nc + nr]
        return cls(ids, weights, c)

    def batch(self, table: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(inputs (B, n, K + 1, d), adj (B, n, n), mask (B, n))`` of the pairs ``idx``; ``table``
        ends with a zero row for the empty slots."""
        ids = torch.from_numpy(self.ids[idx.numpy()]).long()
        mask = (ids >= 0).float()
        inputs = table[torch.where(ids >= 0, ids, table.shape[0] - 1)]
        w = torch.from_numpy(self.weights[idx.numpy()])
        n, c = ids.shape[1], self.n_context
        adj = torch.zeros(len(idx), n, n)
        adj[:, :c, c:] = w
        adj[:, c:, :c] = w.transpose(1, 2)
        return inputs, adj, mask


def build_graphs(featurizer: GraphFeaturizer, examples: dict[str, Any], kinds: Sequence[str]
                 ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, int]], np.ndarray, dict[str, float]]:
    """The keyword graph of every (context, response of each kind) pair, the table of k-hop node
    inputs they index (``(ids, weights, n_context)`` of :class:`CompactGraphs` per kind), and the keyword coverage of the true pairs. Keywords first, then the hop
    distances between all context and response concepts in one block (:meth:`KnowledgeGraph.prefetch`),
    then the graphs."""
    t = time.time()
    graph, (lc, lr) = featurizer.graph, featurizer.limits
    contexts = [" ".join(c) for c in examples["contexts"]]
    first = {featurizer.graph.concept(k) for c in set(contexts) for k in featurizer.keywords(c, lc)}
    second = {featurizer.graph.concept(k) for kind in kinds for r in set(examples[kind]) for k in featurizer.keywords(r, lr)}
    print(f"  keywords: {time.time() - t:.0f} s", flush=True)
    t = time.time()
    shape = graph.prefetch(first - {None}, second - {None})
    print(f"  hop distances {shape}: {time.time() - t:.0f} s", flush=True)
    t = time.time()
    rows: dict[tuple[str, bool], int] = {}
    inputs: list[np.ndarray] = []

    def node_row(key: str, in_graph: bool) -> int:
        if (key, in_graph) not in rows:
            rows[(key, in_graph)] = len(inputs)
            inputs.append(featurizer.node_inputs(key, in_graph))
        return rows[(key, in_graph)]

    out, coverage = {}, {}
    for kind in kinds:
        pair_graphs = [featurizer.pair_graph(c, r) for c, r in zip(examples["contexts"], examples[kind])]
        if kind == "positive":
            coverage = featurizer.coverage(pair_graphs)
        featurizer.prefetch_vectors(pair_graphs)
        built = CompactGraphs.build(pair_graphs, node_row, featurizer.limits)
        out[kind] = (built.ids, built.weights, built.n_context)  # plain arrays: the pickle needs no class
    graph._block = None
    print(f"  graphs: {time.time() - t:.0f} s", flush=True)
    dim = featurizer.vectors.dim
    table = np.stack(inputs) if inputs else np.zeros((0, len(featurizer.neighbours) + 1, dim), np.float32)
    return out, table, coverage
