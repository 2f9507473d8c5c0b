"""One split's training inputs (:class:`Split`): texts, frozen encodings and keyword graphs."""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np
import torch

from dialeval.grade.encoder import dual_features
from dialeval.grade.training.graphs import CompactGraphs


class Split:
    """One split's training inputs per kind of response: the texts, the frozen encodings (context
    embeddings and a table of response embeddings, combined per batch; ``None`` when the encoder
    is fine-tuned, then encoded at every step) and the keyword graphs (:class:`CompactGraphs` over a
    shared table of k-hop node inputs)."""

    def __init__(self, examples: dict[str, Any], kinds: Sequence[str], context_emb: np.ndarray | None,
                 response_emb: np.ndarray | None, response_rows: dict[str, np.ndarray] | None,
                 graphs: dict[str, CompactGraphs], node_table: np.ndarray, hops: int) -> None:
        self.contexts = examples["contexts"]
        self.texts = {k: examples[k] for k in kinds}
        self.ctx = torch.from_numpy(context_emb) if context_emb is not None else None
        self.resp = torch.from_numpy(response_emb) if response_emb is not None else None
        self.rows = {k: torch.from_numpy(v) for k, v in response_rows.items()} if response_rows is not None else None
        self.graph = {k: graphs[k] for k in kinds}
        table = np.concatenate([node_table, np.zeros((1, *node_table.shape[1:]), np.float32)])
        self.table = torch.from_numpy(table[:, : hops + 1]).contiguous()
        self.n = len(self.contexts)

    @property
    def frozen(self) -> bool:
        return self.ctx is not None

    def encodings(self, kind: str, idx: torch.Tensor) -> torch.Tensor:
        return dual_features(self.ctx[idx], self.resp[self.rows[kind][idx]])

    def present(self, kind: str, idx: torch.Tensor) -> torch.Tensor:
        """Which of the contexts ``idx`` have a response of ``kind`` (a salad is built for a sample of
        the training contexts only: row -1 elsewhere)."""
        if self.rows is not None:
            return self.rows[kind][idx] >= 0
        return torch.tensor([self.texts[kind][i] is not None for i in idx.tolist()], dtype=torch.bool)

    def graph_batch(self, kind: str, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.graph[kind].batch(self.table, idx)

    def head(self, n: int) -> "Split":
        """The first ``n`` contexts only."""
        other = copy.copy(self)
        other.contexts, other.n = self.contexts[:n], min(n, self.n)
        other.texts = {k: v[:n] for k, v in self.texts.items()}
        if self.frozen:
            other.ctx = self.ctx[:n]
            other.rows = {k: v[:n] for k, v in self.rows.items()}
        other.graph = {k: CompactGraphs(g.ids[:n], g.weights[:n], g.n_context) for k, g in self.graph.items()}
        return other

    def with_hops(self, hops: int) -> "Split":
        """The same split with node inputs of the first ``hops`` hops only (the 1-hop and no-k-hop
        ablations: neighbour samples are seeded per hop, so this equals featurising with ``hops`` hops)."""
        other = copy.copy(self)
        other.table = self.table[:, : hops + 1].contiguous()
        return other
