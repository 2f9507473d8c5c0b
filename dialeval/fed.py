"""FED: unsupervised, reference-free dialogue evaluation with follow-up utterances.

Mehri & Eskenazi (2020), "Unsupervised Evaluation of Interactive Dialog with DialoGPT" (SIGDIAL).
For each quality q there are positive follow-ups ``p_q`` ("That's really interesting!") and negative
ones ``n_q`` ("That's really boring."), stored in ``data/fed_followups.json`` exactly as in the
authors' code: 8 turn-level qualities (scored after the last turn, the response) and 10 dialog-level
ones (scored after the whole dialog). The model is DialoGPT-large by default.

Text, as in the authors' demo: ``c = eos + " " + (" " + eos + " ").join(turns)``
(:func:`dialeval.lm.conversation_text`) and a follow-up ``f`` is appended as ``c + " " + eos + " " + f``.

Two modes (higher = better in both):

* ``"reference"`` -- the authors' code: ``L(f) = model(x, labels=x).loss`` of the whole string ``x``,
  the mean token NLL over all its positions 1..n-1 (context included), and
  ``score_q = mean_{f in n_q} L(f) - mean_{f in p_q} L(f)``, the positive term being 0 when ``p_q``
  is empty (so such qualities are a plain, uncentred mean loss, as in the original).
* ``"conditional"`` -- the paper's Eq. 1 with means: ``log P(f | c)`` is the summed (not
  length-normalised) log-likelihood of the follow-up tokens only, and
  ``score_q = mean_{f in p_q} log P(f | c) - mean_{f in n_q} log P(f | c)`` (positive term 0 when
  ``p_q`` is empty).

``<level>_overall`` is the mean of that level's selected qualities (the authors have no overall).

Implementation: per conversation the text before the follow-ups, ``c + " " + eos``, is run through
the model once and all distinct follow-ups (``" " + f``) are scored against its cache
(:class:`dialeval.lm.LMScorer`); the whole-string loss is ``-(log P(prefix) + log P(f | prefix)) / (n-1)``.
Prefix and follow-up are tokenised separately and the ids concatenated. This equals tokenising the
whole string because the split is right after ``eos``, a special token that the tokenizer cuts out
before BPE (checked for every conversation; a tokenizer for which it fails raises ``ValueError``).

Differences from the original code: (1) the spaces around ``eos`` are kept, as modern fast
tokenizers do (``" <|endoftext|> Hi"`` gives a lone space token and ``"ĠHi"``); the 2020 slow GPT-2
tokenizer stripped them. (2) It had no truncation; here a text longer than the model window is
left-truncated by :meth:`LMScorer.continuation_logprobs`, keeping its first token (``eos``), so that
the longest follow-up scored still fits; the reference-mode loss then covers the kept tokens only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import torch
from tqdm.auto import tqdm

from dialeval.lm import LMScorer, causal_lm_and_name, conversation_text
from dialeval.results import make_signature, mean, summarize
from dialeval.text import check_texts

DEFAULT_MODEL = "microsoft/DialoGPT-large"
FOLLOWUPS_PATH = Path(__file__).parent / "data" / "fed_followups.json"
MODES = ("reference", "conditional")
LEVELS = ("turn", "dialog", "both")

_DATA = json.loads(FOLLOWUPS_PATH.read_text(encoding="utf-8"))
_FOLLOWUPS: dict[str, dict[str, dict[str, list[str]]]] = {"turn": _DATA["turn_level"], "dialog": _DATA["dialog_level"]}
QUALITIES_TURN: tuple[str, ...] = tuple(_FOLLOWUPS["turn"])
QUALITIES_DIALOG: tuple[str, ...] = tuple(_FOLLOWUPS["dialog"])


def followups(level: str, quality: str) -> dict[str, list[str]]:
    """``{"positive": [...], "negative": [...]}`` for a quality of level ``"turn"`` or ``"dialog"``."""
    return _FOLLOWUPS[level][quality]


def score_name(level: str, quality: str) -> str:
    """Result key of a quality: ``turn_semantically_appropriate``, ``dialog_error_recovery``, ..."""
    return f"{level}_{quality.replace(' ', '_')}"


def check_conversations(conversations: Any) -> list[list[str]]:
    """Validate a non-empty list of non-empty lists of non-empty strings; ValueError names the item."""
    if isinstance(conversations, str) or not isinstance(conversations, Sequence):
        raise ValueError(f"conversations must be a list of lists of turns, got {type(conversations).__name__}")
    if len(conversations) == 0:
        raise ValueError("conversations is empty: pass at least one conversation")
    return [check_texts(turns, f"conversations[{i}]") for i, turns in enumerate(conversations)]


class FEDScorer:
    """FED scores of conversations (lists of turns; the last turn is the response being rated).

    ``model`` is a name/path for :func:`dialeval.lm.load_causal_lm` or a loaded ``(model, tokenizer)``
    pair (kept on its device unless ``device`` is given). ``eos_token`` (default
    ``tokenizer.eos_token``) must be one special token of the tokenizer. ``qualities`` selects
    qualities by name (both levels mixed, e.g. ``["interesting", "coherent"]``). ``batch_size``
    follow-ups go through the model per call; ``dtype`` (e.g. ``torch.bfloat16`` on CUDA) and
    ``max_length`` (default: the model window) are passed to :class:`dialeval.lm.LMScorer`.
    """

    def __init__(
        self,
        model: str | tuple[Any, Any] = DEFAULT_MODEL,
        device: str | None = None,
        batch_size: int = 32,
        mode: str = "reference",
        eos_token: str | None = None,
        qualities: Sequence[str] | None = None,
        dtype: torch.dtype | None = None,
        max_length: int | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.qualities = self._select(qualities)
        lm, tokenizer, self.model_name = causal_lm_and_name(model, device, dtype)
        self.scorer = LMScorer(lm, tokenizer, batch_size=batch_size, device=device, max_length=max_length, dtype=dtype)
        self.tokenizer = tokenizer
        self.eos = eos_token if eos_token is not None else tokenizer.eos_token
        if not self.eos or len(self._ids(self.eos)) != 1 or self.eos not in tokenizer.all_special_tokens:
            raise ValueError(f"eos_token {self.eos!r} must be one special token of the tokenizer")

    @staticmethod
    def _select(qualities: Sequence[str] | None) -> dict[str, list[str]]:
        if qualities is None:
            return {"turn": list(QUALITIES_TURN), "dialog": list(QUALITIES_DIALOG)}
        if isinstance(qualities, str) or len(qualities) == 0:
            raise ValueError("qualities must be a non-empty list of quality names")
        valid = QUALITIES_TURN + QUALITIES_DIALOG
        for name in qualities:
            if name not in valid:
                raise ValueError(f"unknown FED quality {name!r}; valid: {', '.join(valid)}")
        return {level: [q for q in _FOLLOWUPS[level] if q in qualities] for level in ("turn", "dialog")}

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def score(
        self, conversations: Sequence[Sequence[str]], level: str = "turn", progress: bool = False
    ) -> dict[str, Any]:
        """Per-quality scores (``turn_interesting``, ``dialog_coherent``, ...) and ``<level>_overall``.

        ``level="both"`` scores both sets on the same text, as the authors' ``evaluate`` does; levels
        without a selected quality are left out of ``"both"``.
        """
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        levels = [lv for lv in (("turn", "dialog") if level == "both" else (level,)) if self.qualities[lv]]
        if not levels:
            raise ValueError(f"no {level}-level quality selected (selected: {self.qualities})")
        convs = check_conversations(conversations)
        per_item: dict[str, list[float]] = {}
        for index, turns in enumerate(tqdm(convs, disable=not progress, desc="fed")):
            for name, value in self._score_one(index, turns, levels).items():
                per_item.setdefault(name, []).append(value)
        signature = make_signature("fed", model=self.model_name, mode=self.mode, level=level)
        return summarize(per_item, signature)

    def _score_one(self, index: int, turns: list[str], levels: list[str]) -> dict[str, float]:
        conversation = conversation_text(turns, self.eos)
        prefix = self._ids(conversation + " " + self.eos)
        texts = list(dict.fromkeys(f for lv in levels for q in self.qualities[lv] for f in _both(followups(lv, q))))
        suffixes = [self._ids(" " + f) for f in texts]
        if self._ids(conversation + " " + self.eos + " " + texts[0]) != prefix + suffixes[0]:
            raise ValueError(
                f"conversations[{index}]: tokenising prefix and follow-up separately differs from the whole "
                f"string; the tokenizer does not split at {self.eos!r}"
            )
        reference = self.mode == "reference"
        scored = self.scorer.continuation_logprobs(prefix, suffixes, with_prefix=reference)
        # reference: mean token loss of the whole string; conditional: log P(f | c).
        value = {f: (-lp / n if reference else lp) for f, (lp, n) in zip(texts, scored)}
        out: dict[str, float] = {}
        for lv in levels:
            for q in self.qualities[lv]:
                pos = [value[f] for f in followups(lv, q)["positive"]]
                neg = [value[f] for f in followups(lv, q)["negative"]]
                good, bad = (neg, pos) if reference else (pos, neg)
                out[score_name(lv, q)] = _mean0(good) - _mean0(bad)
            out[f"{lv}_overall"] = mean([out[score_name(lv, q)] for q in self.qualities[lv]])
        return out


def _both(entry: dict[str, list[str]]) -> list[str]:
    return entry["positive"] + entry["negative"]


def _mean0(values: list[float]) -> float:
    """Mean, 0 for an empty list (the authors' ``sum / max(len, 1)``)."""
    return sum(values) / max(len(values), 1)
