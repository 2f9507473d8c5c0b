"""GRADE's graph branch (Huang et al. 2020, Section 3.3): k-hop node initialisation, hop-scaled
graph attention, mean pooling.

* :class:`KHopInit`: ``h_i^0 = e_i + sum_{k=1..K} (W_k m_i^k + b_k)``, ``m_i^k`` the mean vector of
  the sampled k-hop ConceptNet neighbours of node ``i`` (:mod:`dialeval.grade.nodes`).
* :class:`HopGATLayer` (Eq. 7-9): for every head, ``z_i = W h_i``,
  ``e_ij = LeakyReLU(a^T [z_i || z_j]) * Â_ij`` (the attention logit scaled by the augmented
  normalised adjacency, i.e. by the hop weight of the edge), softmax over the ``j`` with ``Â_ij > 0``,
  ``h_i' = ELU(V h_i + ||_heads sum_j alpha_ij z_j)`` (Eq. 9; ``self_term=False`` drops ``V h_i``,
  the layer of earlier dialeval checkpoints). ``hop_scaled=False`` (the "no hop-attention weights"
  ablation of Table 3) leaves the logits unscaled: every edge, near or far in ConceptNet, counts the
  same in the softmax (the hop weights then only enter through which edges exist and the node degree).
* :class:`GraphBranch`: KHopInit, ``layers`` (3) HopGATLayers of ``heads`` (4) heads, the mean over
  the real nodes (zero for a graph without nodes) and ``FC0`` with an ELU (Eq. 10:
  ``h_g = ELU(FC0(mean_i h_i))``; ``out_elu=False``: no ELU, as earlier dialeval checkpoints).

Batches are padded: ``inputs (B, n, K + 1, d)``, ``adj (B, n, n)`` raw edge weights,
``mask (B, n)`` (1 = node). Training may drop each context-response edge with probability
``edge_drop`` (both directions) before normalisation.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from dialeval.grade.graph import normalized_adjacency

NEG_INF = -1e9


class KHopInit(nn.Module):
    """``h_i = e_i + sum_k (W_k m_i^k + b_k)`` over ``inputs[..., 0, :]`` and ``inputs[..., k, :]``."""

    def __init__(self, dim: int, hops: int) -> None:
        super().__init__()
        self.hops = nn.ModuleList(nn.Linear(dim, dim) for _ in range(hops))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.shape[-2] != len(self.hops) + 1:
            raise ValueError(f"KHopInit expects {len(self.hops) + 1} rows per node (e, m_1..m_K), got {inputs.shape[-2]}")
        h = inputs[..., 0, :]
        for k, layer in enumerate(self.hops, 1):
            h = h + layer(inputs[..., k, :])
        return h


class HopGATLayer(nn.Module):
    """One multi-head graph-attention layer with hop-scaled logits (see module docstring)."""

    def __init__(self, dim_in: int, dim_out: int, heads: int, hop_scaled: bool = True, self_term: bool = True) -> None:
        super().__init__()
        self.hop_scaled = hop_scaled
        self.self_proj = nn.Linear(dim_in, dim_out, bias=False) if self_term else None  # V_l of Eq. 9
        if dim_out % heads:
            raise ValueError(f"dim_out ({dim_out}) must be divisible by heads ({heads})")
        self.heads, self.head_dim = heads, dim_out // heads
        self.proj = nn.Linear(dim_in, dim_out, bias=False)
        self.att_src = nn.Parameter(torch.empty(heads, self.head_dim))
        self.att_dst = nn.Parameter(torch.empty(heads, self.head_dim))
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)

    def attention(self, h: torch.Tensor, norm_adj: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(alpha (B, heads, n, n), z (B, heads, n, head_dim))``; ``alpha_ij = 0`` where ``Â_ij = 0``."""
        b, n, _ = h.shape
        z = self.proj(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        logits = (z * self.att_src[None, :, None]).sum(-1).unsqueeze(-1) + (z * self.att_dst[None, :, None]).sum(-1).unsqueeze(-2)
        logits = F.leaky_relu(logits, 0.2)
        if self.hop_scaled:
            logits = logits * norm_adj.unsqueeze(1)
        edge = (norm_adj > 0).unsqueeze(1)
        alpha = torch.softmax(logits.masked_fill(~edge, NEG_INF), dim=-1) * edge
        return alpha, z

    def forward(self, h: torch.Tensor, norm_adj: torch.Tensor) -> torch.Tensor:
        alpha, z = self.attention(h, norm_adj)
        out = (alpha @ z).transpose(1, 2).reshape(h.shape[0], h.shape[1], -1)
        if self.self_proj is not None:
            out = out + self.self_proj(h)
        return F.elu(out)


class GraphBranch(nn.Module):
    """KHopInit -> ``layers`` x HopGATLayer -> masked mean pool -> FC0 (+ ELU)."""

    def __init__(self, node_dim: int, hops: int = 2, hidden: int = 128, heads: int = 4, layers: int = 3,
                 out_dim: int = 128, hop_scaled: bool = True, self_term: bool = True, out_elu: bool = True) -> None:
        super().__init__()
        self.init = KHopInit(node_dim, hops)
        self.layers = nn.ModuleList(HopGATLayer(node_dim if i == 0 else hidden, hidden, heads, hop_scaled, self_term)
                                    for i in range(layers))
        self.out = nn.Linear(hidden, out_dim)
        self.out_elu = out_elu

    def forward(self, inputs: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor, edge_drop: float = 0.0) -> torch.Tensor:
        if edge_drop > 0:
            keep = (torch.rand_like(adj) >= edge_drop).float()
            keep = torch.triu(keep, 1)
            adj = adj * (keep + keep.transpose(-1, -2))
        norm_adj = normalized_adjacency(adj, mask)
        h = self.init(inputs) * mask.unsqueeze(-1)
        for layer in self.layers:
            h = layer(h, norm_adj) * mask.unsqueeze(-1)
        pooled = h.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        out = self.out(pooled)
        return F.elu(out) if self.out_elu else out
