"""The frozen encoder under U and S: pooled token states of a response, of a context, or of a (context, response) pair.

The paper fine-tunes BERT-base and max-pools its last hidden states (over the real tokens) into a
linear layer. Here the encoder is frozen (all-MiniLM-L6-v2 by default, or all-mpnet-base-v2, BERT-base
size; :mod:`dialeval.core.encoders`), so training reads cached features and only the heads learn
(:mod:`dialeval.usl.heads`); the feature of a text is ``[max; mean]`` of the last hidden states over
its real tokens (the paper's max-pooling, and the mean the sentence encoders were trained for).

* ``single(texts)``: U's input, ``[CLS] response [SEP]``, at most :data:`RESPONSE_TOKENS` tokens.
* ``pairs(contexts, responses)``: S's input read together (``s_input="pair"``), ``[CLS] context [SEP]
  response [SEP]`` (the authors' ``encode_truncate``: the context's turns joined by spaces keep their
  *last* :data:`CONTEXT_TOKENS` tokens, the response its *first* :data:`RESPONSE_TOKENS`; a cut text
  is decoded back to text and tokenised again with the pair).
* ``contexts(contexts)``: the context alone, cut as in a pair; with a response's ``single`` feature it
  gives S's dual input (``s_input="dual"``, :func:`dual`): ``[c; r; c*r; |c-r|]``, the siamese
  classifier's features (Conneau et al. 2017's InferSent). On a frozen encoder it tells the true next
  turn from a random one better than the pair read together (whose pooled states the encoder was never
  trained to compare), and a response's ``r`` is U's feature, so S costs one context encoding more.

Texts are cut into length batches (:func:`dialeval.core.batching.length_batches` over their token
counts: fewer pads); results come back in input order, float32.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dialeval.core.batching import default_overhead, length_batches
from dialeval.core.encoders import minilm_dir, mpnet_dir
from dialeval.core.progress import Progress

MINILM = "minilm-l6"
MPNET = "mpnet-base"
ENCODERS = {MINILM: minilm_dir, MPNET: mpnet_dir}
CONTEXT_TOKENS = 64
RESPONSE_TOKENS = 32
S_INPUTS = ("dual", "pair")  # S's features: context and response encoded apart, or read together


def dual(context_features: np.ndarray, response_features: np.ndarray) -> np.ndarray:
    """S's dual input ``[c; r; c*r; |c-r|]`` per row (four times the feature size)."""
    c, r = context_features, response_features
    return np.concatenate([c, r, c * r, np.abs(c - r)], axis=1)


def s_dim(dim: int, s_input: str) -> int:
    """The size of S's input for features of size ``dim``."""
    if s_input not in S_INPUTS:
        raise ValueError(f"s_input must be one of {S_INPUTS}, got {s_input!r}")
    return 4 * dim if s_input == "dual" else dim


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
        self.folder = ENCODERS[name]()
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
        model = AutoModel.from_pretrained(self.folder, local_files_only=True).to(self.device).eval()
        self.model, self.precision = with_precision(model, precision, self.device)
        self.name, self.batch_size = name, batch_size
        self.dim = 2 * int(self.model.config.hidden_size)

    def _cut(self, text: str, keep: int, from_end: bool) -> str:
        """``text`` cut to its last (``from_end``) or first ``keep`` tokens, decoded back to text."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) <= keep:
            return text
        return self.tokenizer.decode(ids[-keep:] if from_end else ids[:keep])

    def single(self, texts: Sequence[str], progress: bool = True, tuned: Any = None) -> np.ndarray | tuple:
        """``[max; mean]`` features of each text alone; with ``tuned`` (U's own top layers,
        :mod:`dialeval.usl.tuned`, and how many: ``(model, top)``) also those of the tuned top over
        the same forward's lower layers: ``(frozen, tuned)``."""
        return self._pooled([self.cut_response(t) for t in texts], None, progress, "response", tuned)

    def contexts(self, contexts: Sequence[Sequence[str]], progress: bool = True, tuned: Any = None
                 ) -> np.ndarray | tuple:
        """``[max; mean]`` features of each context alone (:meth:`cut_context`); ``tuned`` as in :meth:`single`."""
        return self._pooled([self.cut_context(c) for c in contexts], None, progress, "context", tuned)

    def pairs(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], progress: bool = True) -> np.ndarray:
        """``[max; mean]`` features of each (context, response) pair read together."""
        return self._pooled([self.cut_context(c) for c in contexts], [self.cut_response(r) for r in responses],
                            progress, "pair")

    def _forward(self, first: list[str], second: list[str] | None, progress: bool, unit: str,
                 hidden_states: bool = False):
        """``(rows, the encoder's output, attention mask)`` per length batch of the texts, or of pairs of texts
        (BERT-like encoders read the pair's segment ids), run without gradients."""
        import torch

        if not first:
            return
        texts = (first,) + ((second,) if second else ())
        lengths = [len(ids) for ids in self.tokenizer(*texts)["input_ids"]]
        with Progress(len(first), f"usl {self.name}", unit=unit, enabled=progress) as bar:
            for idx in length_batches(lengths, self.batch_size, default_overhead(self.device)):
                batch = self.tokenizer(*([t[i] for i in idx] for t in texts), padding=True,
                                       return_tensors="pt").to(self.device)
                with torch.no_grad():
                    found = self.model(**batch, output_hidden_states=hidden_states)
                yield idx, found, batch["attention_mask"]
                bar.update(len(idx))

    def _pooled(self, first: list[str], second: list[str] | None, progress: bool, unit: str,
                tuned: Any = None) -> np.ndarray | tuple:
        """The features of texts, or of pairs of texts; with ``tuned``, also the tuned top's (:meth:`single`).
        Each distinct text (or pair) is encoded once, so a repeated one gets the same features wherever it
        stands (in a batch of other sizes its float32 sums would round otherwise, ~1e-6)."""
        import torch

        rows = list(zip(first, second)) if second else first
        distinct = list(dict.fromkeys(rows))
        if len(distinct) < len(rows):
            place = {row: n for n, row in enumerate(distinct)}
            found = self._pooled([r[0] for r in distinct] if second else distinct,
                                 [r[1] for r in distinct] if second else None, progress, unit, tuned)
            at = np.array([place[row] for row in rows], dtype=np.int64)
            return found[at] if tuned is None else (found[0][at], found[1][at])
        out = np.zeros((len(first), self.dim), dtype=np.float32)
        out_tuned = np.zeros_like(out)
        for idx, found, mask in self._forward(first, second, progress, unit, hidden_states=tuned is not None):
            out[idx] = max_mean(found.last_hidden_state.float(), mask).cpu().numpy()
            if tuned is not None:
                upper, top = tuned
                with torch.no_grad():
                    states = upper(inputs_embeds=found.hidden_states[-1 - top].float(), attention_mask=mask)
                out_tuned[idx] = max_mean(states.last_hidden_state, mask).cpu().numpy()
        return out if tuned is None else (out, out_tuned)

    def top_inputs(self, texts: Sequence[str], top: int, progress: bool = True, width: int = RESPONSE_TOKENS + 2
                   ) -> np.ndarray:
        """The hidden states entering the top ``top`` layers for each text, already cut (:meth:`cut_response`,
        :meth:`cut_context`), in float16, padded with zeros to ``width`` tokens (``[CLS]`` and ``[SEP]``
        included; a cut response has at most ``RESPONSE_TOKENS + 2``): what a tuned top learns from
        (:mod:`dialeval.usl.u_tuning`)."""
        cut = list(texts)
        out = np.zeros((len(cut), width, int(self.model.config.hidden_size)), dtype=np.float16)
        for idx, found, _ in self._forward(cut, None, progress, "text", hidden_states=True):
            hidden = found.hidden_states[-1 - top]
            out[idx, :hidden.shape[1]] = hidden.float().cpu().numpy().astype(np.float16)
        return out

    def token_counts(self, texts: Sequence[str]) -> np.ndarray:
        """Each (already cut) text's tokens, ``[CLS]`` and ``[SEP]`` included."""
        return np.array([len(ids) for ids in self.tokenizer(list(texts))["input_ids"]])

    def float32_model(self):
        """The encoder in float32 (itself, or loaded again when it runs in another precision)."""
        from transformers import AutoModel

        if self.precision == "float32":
            return self.model
        return AutoModel.from_pretrained(self.folder, local_files_only=True).to(self.device).eval()

    def cut_context(self, context: Sequence[str]) -> str:
        """A context as S reads it: its turns joined by spaces, its last :data:`CONTEXT_TOKENS` tokens."""
        return self._cut(" ".join(context), CONTEXT_TOKENS, True)

    def cut_response(self, text: str) -> str:
        """A response as U reads it: its first :data:`RESPONSE_TOKENS` tokens."""
        return self._cut(text, RESPONSE_TOKENS, False)


def max_mean(hidden, mask):
    """``[max; mean]`` of the last hidden states ``(batch, tokens, d)`` over the real tokens of ``mask``."""
    import torch

    keep = mask.unsqueeze(-1).bool()
    top = hidden.masked_fill(~keep, float("-inf")).max(1).values
    return torch.cat([top, (hidden * keep).sum(1) / keep.sum(1)], -1)
