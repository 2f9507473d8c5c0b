"""The frozen encoder under U and S: pooled token states of a response, or of a (context, response) pair.

The paper fine-tunes BERT-base and max-pools its last hidden states (over the real tokens) into a
linear layer. Here the encoder is frozen (all-MiniLM-L6-v2 by default, or all-mpnet-base-v2, BERT-base
size; :mod:`dialeval.core.encoders`), so training reads cached features and only the heads learn
(:mod:`dialeval.usl.heads`); the feature of a text is ``[max; mean]`` of the last hidden states over
its real tokens (the paper's max-pooling, and the mean the sentence encoders were trained for).

* ``single(texts)``: U's input, ``[CLS] response [SEP]``, at most :data:`RESPONSE_TOKENS` tokens.
* ``pairs(contexts, responses)``: S's input, ``[CLS] context [SEP] response [SEP]`` (the authors'
  ``encode_truncate``: the context's turns joined by spaces keep their *last*
  :data:`CONTEXT_TOKENS` tokens, the response its *first* :data:`RESPONSE_TOKENS`; a cut text is
  decoded back to text and tokenised again with the pair).

Texts are batched by length (fewer pads); results come back in input order, float32.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from dialeval.core.encoders import minilm_dir, mpnet_dir
from dialeval.core.progress import Progress

MINILM = "minilm-l6"
MPNET = "mpnet-base"
ENCODERS = {MINILM: minilm_dir, MPNET: mpnet_dir}
CONTEXT_TOKENS = 64
RESPONSE_TOKENS = 32


class FrozenEncoder:
    """``name`` one of :data:`ENCODERS`, on ``device`` in ``precision`` (:mod:`dialeval.core.precision`;
    pooled in float32)."""

    def __init__(self, name: str = MINILM, device: str | None = None, batch_size: int = 32,
                 precision: str = "float32"):
        from transformers import AutoModel, AutoTokenizer

        from dialeval.core.precision import with_precision
        from dialeval.core.quiet import quiet_third_party

        if name not in ENCODERS:
            raise ValueError(f"unknown USL encoder {name!r}; known: {sorted(ENCODERS)}")
        quiet_third_party(models_next=True)
        folder = ENCODERS[name]()
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModel.from_pretrained(folder, local_files_only=True).to(self.device).eval()
        self.model, self.precision = with_precision(model, precision, self.device)
        self.name, self.batch_size = name, batch_size
        self.dim = 2 * int(self.model.config.hidden_size)

    def _cut(self, text: str, keep: int, from_end: bool) -> str:
        """``text`` cut to its last (``from_end``) or first ``keep`` tokens, decoded back to text."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) <= keep:
            return text
        return self.tokenizer.decode(ids[-keep:] if from_end else ids[:keep])

    def single(self, texts: Sequence[str], progress: bool = True) -> np.ndarray:
        """``[max; mean]`` features of each text alone."""
        return self._pooled([self._cut(t, RESPONSE_TOKENS, False) for t in texts], None, progress, "response")

    def pairs(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], progress: bool = True) -> np.ndarray:
        """``[max; mean]`` features of each (context, response) pair read together."""
        return self._pooled([self._cut(" ".join(c), CONTEXT_TOKENS, True) for c in contexts],
                            [self._cut(r, RESPONSE_TOKENS, False) for r in responses], progress, "pair")

    def _pooled(self, first: list[str], second: list[str] | None, progress: bool, unit: str) -> np.ndarray:
        """The features of texts, or of pairs of texts (BERT-like encoders read the pair's segment ids)."""
        import torch

        order = sorted(range(len(first)), key=lambda i: len(first[i]) + (len(second[i]) if second else 0))
        out = np.zeros((len(first), self.dim), dtype=np.float32)
        with Progress(len(first), f"usl {self.name}", unit=unit, enabled=progress) as bar:
            for start in range(0, len(order), self.batch_size):
                idx = order[start: start + self.batch_size]
                texts = ([first[i] for i in idx],) + (([second[i] for i in idx],) if second else ())
                batch = self.tokenizer(*texts, padding=True, return_tensors="pt").to(self.device)
                mask = batch["attention_mask"]
                with torch.no_grad():
                    hidden = self.model(**batch).last_hidden_state.float()
                keep = mask.unsqueeze(-1).bool()
                top = hidden.masked_fill(~keep, float("-inf")).max(1).values
                avg = (hidden * keep).sum(1) / keep.sum(1)
                out[idx] = torch.cat([top, avg], -1).cpu().numpy()
                bar.update(len(idx))
        return out
