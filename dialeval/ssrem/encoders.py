"""SSREM's utterance encoders ``v(.)``: the (centred) average word vector, or a frozen sentence
encoder (MiniLM-L6, or all-mpnet-base-v2, GRADE's encoder)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from dialeval.core.encoders import minilm_dir, mpnet_dir
from dialeval.core.progress import Progress
from dialeval.core.resources import GLOVE_NAME, WordVectors, load_word_vectors
from dialeval.core.text import tokenize

CENTERED = "-centered"  # suffix of a centred word-average encoder's name
MINILM = "minilm-l6"
MPNET = "mpnet-base"
SENTENCE_ENCODERS = {MINILM: minilm_dir, MPNET: mpnet_dir}  # name -> the folder it loads from
CONTEXT_POOLINGS = ("joined", "turns")  # v(c): one text of the turns, or the mean of the turns' vectors


class WordAverageEncoder:
    """``v(text)``: the mean word vector of the text's in-vocabulary tokens, minus ``center`` when
    one is given (0 when there is no such token, centred or not)."""

    precision = "float32"  # no model: the word vectors as stored

    def __init__(self, vectors: WordVectors, name: str, center: Sequence[float] | None = None):
        self.vectors, self.dim = vectors, vectors.dim
        self.center = None if center is None else np.asarray(center, dtype=np.float32)
        if self.center is not None and self.center.shape != (self.dim,):
            raise ValueError(f"center has shape {self.center.shape}, the word vectors {self.dim} dims")
        self.name = name + CENTERED if self.center is not None else name

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            found = self.vectors.lookup(tokenize(text))
            if len(found):
                out[i] = found.mean(0) - (self.center if self.center is not None else 0.0)
        return out


class SentenceEncoder:
    """``v(text)``: a frozen sentence-transformers encoder's embedding (mean over tokens,
    L2-normalised): ``name`` one of :data:`SENTENCE_ENCODERS` (MiniLM-L6 by default), loaded from
    ``folder`` or from its offline PyPI copy, run in ``precision`` (:mod:`dialeval.core.precision`;
    pooled in float32)."""

    def __init__(self, name: str = MINILM, folder: str | os.PathLike | None = None, device: str | None = None,
                 batch_size: int = 64, max_length: int = 128, precision: str = "float32"):
        from transformers import AutoModel, AutoTokenizer

        from dialeval.core.precision import with_precision
        from dialeval.core.quiet import quiet_third_party

        quiet_third_party(models_next=True)  # no loading bars unless asked
        if name not in SENTENCE_ENCODERS:
            raise ValueError(f"unknown sentence encoder {name!r}; known: {sorted(SENTENCE_ENCODERS)}")
        folder = Path(folder) if folder else SENTENCE_ENCODERS[name]()
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModel.from_pretrained(folder, local_files_only=True).to(self.device)
        self.model, self.precision = with_precision(model, precision, self.device)
        self.name, self.dim = name, int(self.model.config.hidden_size)
        self.batch_size, self.max_length = batch_size, max_length

    def encode(self, texts: Sequence[str], progress: bool = True) -> np.ndarray:
        """The embeddings of ``texts``, in batches of similar lengths; progress once a call is long
        (:mod:`dialeval.core.progress`; ``progress=False``: none)."""
        import torch

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths, less padding
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with Progress(len(texts), self.name, unit="text", enabled=progress) as bar:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                       max_length=self.max_length, return_tensors="pt").to(self.device)
                with torch.no_grad():
                    hidden = self.model(**batch).last_hidden_state.float()  # pooled in float32 whatever the precision
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out[idx] = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
                bar.update(len(idx))
        return out


def make_encoder(name: str | None, device: str | None = None, center: Sequence[float] | None = None,
                 precision: str = "float32"):
    """``"minilm-l6"`` or ``"mpnet-base"`` -> :class:`SentenceEncoder` (in ``precision``); ``None`` /
    ``"glove-6b-50d"`` / a word-vector file -> :class:`WordAverageEncoder` (centred on ``center`` when
    given; float32 word vectors, whatever ``precision`` says)."""
    if name in SENTENCE_ENCODERS:
        return SentenceEncoder(name, device=device, precision=precision)
    return WordAverageEncoder(load_word_vectors(name), name or GLOVE_NAME, center)


def pool_turns(vectors: np.ndarray, rows: Sequence[Sequence[int]]) -> np.ndarray:
    """Per row of indices, the mean of those ``vectors`` rescaled to unit length (a zero mean stays zero)."""
    out = np.zeros((len(rows), vectors.shape[1]), dtype=np.float32)
    for i, row in enumerate(rows):
        mean = vectors[list(row)].mean(0)
        norm = float(np.linalg.norm(mean))
        out[i] = mean / norm if norm > 0 else mean
    return out


def check_pooling(encoder, pooling: str) -> None:
    """``ValueError`` for a pooling outside :data:`CONTEXT_POOLINGS`, or ``"turns"`` on a word average."""
    if pooling not in CONTEXT_POOLINGS:
        raise ValueError(f"unknown context pooling {pooling!r}; known: {CONTEXT_POOLINGS}")
    if pooling == "turns" and not isinstance(encoder, SentenceEncoder):
        raise ValueError(f"context pooling 'turns' needs a sentence encoder ({sorted(SENTENCE_ENCODERS)}), "
                         f"not {encoder.name!r}")


def encode_contexts(encoder, contexts: Sequence[Sequence[str]], pooling: str = "joined") -> np.ndarray:
    """``v(c)`` of each context (its turns, already cut to the last few).

    ``"joined"``: the turns joined by spaces, encoded as one text (for a word average, the paper's
    average over all their words); a context that occurs several times is encoded once. ``"turns"`` (sentence encoders only): the mean of the turns' own
    unit vectors, rescaled to unit length; each distinct turn is encoded once, so the contexts of one
    dialogue share their turns' encodings, and training reuses its table of encoded utterances
    instead of encoding every context again (for mpnet, three CPU hours saved on the chit-chat corpus).
    """
    check_pooling(encoder, pooling)
    if pooling == "joined":  # each distinct joined text encoded once
        joined = [" ".join(context) for context in contexts]
        index = {text: i for i, text in enumerate(dict.fromkeys(joined))}
        return encoder.encode(list(index))[[index[text] for text in joined]]
    index = {}
    for context in contexts:
        for turn in context:
            index.setdefault(turn, len(index))
    return pool_turns(encoder.encode(list(index)), [[index[turn] for turn in context] for context in contexts])
