"""GRADE scores of (context, response) pairs from a checkpoint folder (Huang et al. 2020).

``GradeScorer(model).score(contexts, responses, graph=True)`` -> ``{"grade": mean,
"grade_scores": [per item in [0, 1]], "signature": ...}``. ``model`` is ``dialeval/grade-dailydialog-cross``
(the default: all-mpnet-base-v2 fine-tuned as a cross-encoder through LoRA adapters, as the paper
fine-tunes BERT), ``dialeval/grade-dailydialog`` (the frozen-encoder model before it, an option;
both bundled, :mod:`dialeval.models.hub`) or a folder written by
``training/grade.py``. ``graph=False`` uses the checkpoint's no-graph head (the Table 3 ablation,
trained in the same run). Inputs: ``contexts`` a list of turn lists (a string is one turn),
``responses`` a list of non-empty strings, same length; anything else is a ``ValueError`` naming it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from dialeval.grade.encoder import PairEncoder, load_encoder
from dialeval.grade.features import GraphFeaturizer, PairGraph
from dialeval.grade.graph import KnowledgeGraph
from dialeval.grade.keywords import IDFTable, KeywordExtractor
from dialeval.grade.model import GradeConfig, GradeHead, encoder_adapter_dir
from dialeval.grade.nodes import NodeVectors, SentenceVectors, encoder_vectors, glove_vectors, numberbatch_vectors
from dialeval.core.degenerate import apply_policy, reply_flags, unknown_words
from dialeval.core.held import held
from dialeval.core.resources import load_word_vectors
from dialeval.core.precision import resolve_precision, signature_precision
from dialeval.core.results import make_signature, summarize
from dialeval.core.text import check_same_length, check_texts
from dialeval.grade.scales import SCALES

DEFAULT_MODEL = "dialeval/grade-dailydialog-cross"


def resolve_checkpoint(model: str | os.PathLike) -> tuple[str, Path]:
    """``(name, folder)`` of a bundled ``dialeval/<name>`` or a local checkpoint folder."""
    from dialeval.models.hub import bundled_dir

    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ValueError(f"model must be a GRADE checkpoint folder or {DEFAULT_MODEL!r}, got {model!r}")
    folder = bundled_dir(str(model))
    if folder is not None:
        return str(model) if str(model).startswith("dialeval/") else f"dialeval/{model}", folder
    path = Path(model).expanduser()
    if (path / "config.json").is_file():
        return path.name, path
    raise ValueError(f"model {model!r}: not a bundled dialeval model and not a folder with a GRADE config.json "
                     "(train one with `python training/grade.py`)")


def check_pairs(contexts: Any, responses: Any) -> tuple[list[list[str]], list[str]]:
    """Validated ``(contexts, responses)`` (see module docstring)."""
    responses = check_texts(responses, "responses", allow_empty=True)  # a generation may be empty
    if isinstance(contexts, str) or not isinstance(contexts, Sequence):
        raise ValueError(f"contexts must be a list of turn lists, got {type(contexts).__name__}")
    check_same_length(contexts=contexts, responses=responses)
    out = []
    for i, ctx in enumerate(contexts):
        turns = [ctx] if isinstance(ctx, str) else ctx
        if not isinstance(turns, Sequence) or not turns:
            raise ValueError(f"contexts[{i}] must be a non-empty list of turns, got {ctx!r}")
        out.append(check_texts(list(turns), f"contexts[{i}]"))  # an empty turn is refused, as SSREM does
    return out, responses


def make_vectors(config: GradeConfig, encoder: PairEncoder | None) -> NodeVectors:
    """The node-vector source the checkpoint was trained with (``encoder`` is needed for ``"encoder"`` only)."""
    if config.node_vectors == "glove":
        return glove_vectors()
    if config.node_vectors in ("encoder", "sentence"):
        if encoder is None:
            raise ValueError(f"node_vectors {config.node_vectors!r} needs the encoder it reads")
        if config.node_vectors == "sentence":
            return SentenceVectors(encoder.embed, encoder.dim, f"sentence:{encoder.name}")
        return encoder_vectors(encoder.tokenizer, encoder.word_embeddings(), f"encoder:{encoder.name}")
    if config.node_vectors.startswith("numberbatch:"):
        return numberbatch_vectors(config.node_vectors.split(":", 1)[1])
    raise ValueError(f"config node_vectors {config.node_vectors!r}: expected glove, encoder, sentence or numberbatch:<path>")


@held(maxsize=4)
def load_graph(path: str, max_hops: int) -> KnowledgeGraph:
    return KnowledgeGraph.from_file(path, max_hops)


class GradeScorer:
    """Loads a GRADE checkpoint once; scores batches of pairs."""

    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, device: str | None = None, batch_size: int = 32,
                 knowledge_graph: str | None = None, precision: str = "float32") -> None:
        self.name, self.folder = resolve_checkpoint(model)
        self.precision = resolve_precision(precision, device or "cpu")  # the encoder's; the small head stays float32
        self.config = GradeConfig.load(self.folder)
        self.device, self.batch_size = device or "cpu", batch_size
        graph_path = knowledge_graph or str(self.folder / self.config.graph_file)
        self.graph = load_graph(graph_path, self.config.max_hops)
        # node vectors from the encoder's word-piece table need an encoder (LoRA leaves that table as it is)
        encoder = self.encoder_for(True) if self.config.node_vectors in ("encoder", "sentence") else None
        self.featurizer = GraphFeaturizer(
            KeywordExtractor(IDFTable.load(self.folder), self.graph.multiword()), self.graph,
            make_vectors(self.config, encoder), self.config.neighbours,
            self.config.context_keywords, self.config.response_keywords,
        )
        self._heads: dict[bool, GradeHead] = {}

    def encoder_for(self, graph: bool) -> PairEncoder:
        """The encoder of the graph / no-graph head: the base with that head's LoRA adapter, if any
        (loaded on first use, then kept by :func:`load_encoder`)."""
        adapter = str(self.folder / encoder_adapter_dir(graph)) if self.config.encoder_lora else None
        return load_encoder(self.config.encoder, self.config.max_length, self.device, self.batch_size, adapter,
                            self.precision)

    def head(self, graph: bool) -> GradeHead:
        if graph not in self._heads:
            self._heads[graph] = GradeHead.load(self.folder, graph, self.config).to(self.device)
        return self._heads[graph]

    @torch.inference_mode()
    def score_features(self, encodings: np.ndarray, graphs: Sequence[PairGraph] | None, head: GradeHead) -> list[float]:
        """Head scores of pair encodings (and, for a graph head, the pairs' keyword graphs), in batches."""
        scores: list[float] = []
        for s in range(0, len(encodings), self.batch_size):
            enc = torch.from_numpy(encodings[s : s + self.batch_size]).to(self.device)
            if head.use_graph:
                inputs, adj, mask = (t.to(self.device) for t in self.featurizer.batch(graphs[s : s + self.batch_size]))
                out = head(enc, inputs, adj, mask)
            else:
                out = head(enc)
            scores += out.tolist()
        return scores

    def signature(self, graph: bool) -> str:
        from dialeval.models.hub import weights_id

        return make_signature("grade", model=weights_id(self.name, self.folder), encoder=self.config.encoder,
                              pair=self.config.pair_encoding, lora=self.config.encoder_lora, graph=graph,
                              nodes=self.config.node_vectors, kg=Path(self.config.graph_file).stem,
                              hops=len(self.config.neighbours), skip=self.config.similarity_skip,
                              departures="+".join(self.config.departures()) or "none",
                              precision=signature_precision(self.precision))

    def score(self, contexts: Any, responses: Any, graph: bool = True) -> dict[str, Any]:
        """``grade`` per pair (in [0, 1]) and its mean, the signature and per-item ``flags``: an empty
        word-less or repetitive response, one that copies a context turn (``echo``) or shuffles its words
        (``salad``), or one made mostly
        of unknown words (:mod:`dialeval.core.degenerate`) gets 0, where the head gave "The the the the the" 0.917 and "asdf qwer zxcv" 0.896."""
        if not isinstance(graph, bool):
            raise ValueError(f"graph must be True or False, got {graph!r}")
        contexts, responses = check_pairs(contexts, responses)
        vocabulary = load_word_vectors(None).index  # GloVe 6B, in frequency order
        flags = [reply_flags(c, r) or unknown_words(r, vocabulary) for c, r in zip(contexts, responses)]
        kept = [i for i, flagged in enumerate(flags) if not flagged]
        scores = [0.0] * len(responses)
        if kept:
            pairs = [contexts[i] for i in kept], [responses[i] for i in kept]
            encodings = self.encoder_for(graph).encode(*pairs, self.config.pair_encoding)
            graphs = [self.featurizer.pair_graph(c, r) for c, r in zip(*pairs)] if graph else None
            for i, value in zip(kept, self.score_features(encodings, graphs, self.head(graph))):
                scores[i] = value
        return summarize(apply_policy({"grade": scores}, flags, SCALES), self.signature(graph), flags, SCALES)


@held(maxsize=2)
def grade_scorer(model: str, device: str | None, batch_size: int, precision: str) -> GradeScorer:
    return GradeScorer(model, device, batch_size, precision=precision)
