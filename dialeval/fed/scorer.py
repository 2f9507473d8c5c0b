"""FED: unsupervised, reference-free dialogue evaluation with follow-up utterances.

Mehri & Eskenazi (2020), "Unsupervised Evaluation of Interactive Dialog with DialoGPT" (SIGDIAL).
For each quality q there are positive follow-ups ``p_q`` ("That's really interesting!") and negative
ones ``n_q`` ("That's really boring."), stored in ``followups.json`` beside this module exactly as in the
authors' code: 8 turn-level qualities (scored after the last turn, the response) and 10 dialog-level
ones (scored after the whole dialog). The model is DialoGPT-large by default.

Text, as in the authors' demo: ``c = eos + " " + (" " + eos + " ").join(turns)``
(:func:`dialeval.core.lm.conversation_text`) and a follow-up ``f`` is appended as ``c + " " + eos + " " + f``.
``log P(f | c) = sum_j log P(f_j | c, eos, f_<j)`` is the summed (not length-normalised) natural-log
likelihood of the follow-up tokens only.

Three variants (``mode``; higher = better in all):

* ``"paper"`` -- the paper as written: Eq. 1 with sums,
  ``score_q = sum_{f in p_q} log P(f | c_q) - sum_{f in n_q} log P(f | c_q)``, and the context rule
  of Section 6.1: ``c_q`` is the last turn alone (the system response) for the turn-level qualities
  except *relevant* and *correct*, and the whole conversation for *relevant*, *correct* and every
  dialog-level quality.
* ``"conditional"`` -- Eq. 1 with means over the follow-up lists and the whole conversation as the
  context of every quality: ``score_q = mean_{f in p_q} log P(f | c) - mean_{f in n_q} log P(f | c)``
  (dialeval's earlier reading of the paper). After the same context, means and sums rank
  conversations differently only where both lists are non-empty and of different sizes
  (*semantically appropriate*, *understandable*, *fluent*, *informative*), and in ``<level>_overall``.
* ``"reference"`` -- the authors' released code: ``L(f) = model(x, labels=x).loss``, the mean token NLL
  of the whole string ``x = c + " " + eos + " " + f`` over all its positions 1..n-1 (context
  included), whole conversation as context, and ``score_q = mean_{f in n_q} L(f) - mean_{f in p_q} L(f)``.

A list that is empty (no positive follow-ups for *relevant*, *coherent*, ...) contributes 0, as in
the authors' code (``sum / max(len, 1)``), so such qualities are a plain, uncentred term.
``<level>_overall`` is the mean of that level's selected qualities (the paper's "Overall" row).

Implementation: per conversation and context the text before the follow-ups, ``c + " " + eos``, is
run through the model once together with all distinct follow-ups (``" " + f``), the prefixes and
follow-ups of several conversations packed into one forward with a block mask
(:meth:`dialeval.core.lm.LMScorer.grouped_logprobs`, each follow-up scored exactly as ``c + f``
alone), which also returns ``log P(prefix)``, so one pass gives every variant: ``log P(f | c)`` directly and the whole-string loss as
``-(log P(prefix) + log P(f | prefix)) / (n - 1)``; ``"paper"`` at turn level adds one short pass
with the last turn as context (:meth:`FEDScorer.score_all`). Prefix and follow-up are tokenised
separately and the ids concatenated. This equals tokenising the whole string because the split is
right after ``eos``, a special token that the tokenizer cuts out before BPE (checked for every
prefix; a tokenizer for which it fails raises ``ValueError``).

Differences from the original code: (1) the spaces around ``eos`` are kept, as modern fast
tokenizers do (``" <|endoftext|> Hi"`` gives a lone space token and ``"ĠHi"``); the 2020 slow GPT-2
tokenizer stripped them. (2) It had no truncation; here a prefix longer than the model window minus
the longest FED follow-up is left-truncated, keeping its first token (``eos``) and its last tokens
(the same cut for every quality and variant); the reference-mode loss then covers the kept tokens.
(3) Empty earlier turns are errors; an empty last turn (an empty generation) is flagged (below).
A cut prefix is reported with a warning naming the conversation and how many tokens were dropped.

Degenerate responses (:mod:`dialeval.core.degenerate`): when the last turn is empty, word-less or
repetitive, the conversation is not run through the model; every quality gets its scale's worst
value (0 for the qualities without positive follow-ups, the floor
:data:`dialeval.fed.scales.FLOOR` for the unbounded log-likelihood differences and the overall
scores), so it counts in every mean as the worst item; the item's flag is in ``flags``. Scored as
``eos`` alone, an empty reply used to be rated more interesting, engaging and specific than the
real one.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import torch

from dialeval.core.lm import LogProb, conversation_text, lm_scorer
from dialeval.core.lm_calls import grouped_in_calls
from dialeval.core.options import check_choice, check_number
from dialeval.core.precision import signature_precision
from dialeval.core.degenerate import apply_policy, reply_flags
from dialeval.core.results import make_signature, mean, summarize
from dialeval.core.text import check_texts
from dialeval.fed.scales import FOLLOWUPS_PATH
from dialeval.fed.scales import scales as fed_scales

DEFAULT_MODEL = "microsoft/DialoGPT-large"
MODES = ("paper", "conditional", "reference")
# The default variant of the module, CLI, benchmark and examples: the best measured one against the
# FED human ratings with the local models (turn-level overall 0.371 vs. 0.166 for "paper" and -0.031
# for "reference", dialog level tied with "paper"; metrics/fed/README.md, benchmarks/results/fed-*).
DEFAULT_MODE = "conditional"
ALL_MODES = "all"  # benchmark option: every variant from one pass
LEVELS = ("turn", "dialog", "both")
# Section 6.1: "For relevant, correct and dialog-level metrics, the entire conversation was used."
FULL_CONTEXT_TURN = ("relevant", "correct")

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


def context_of(mode: str, level: str, quality: str) -> str:
    """``"last"`` (the last turn alone) or ``"full"`` (the whole conversation): the context a variant
    scores a quality's follow-ups after. Only ``"paper"`` uses ``"last"`` (Section 6.1)."""
    if mode == "paper" and level == "turn" and quality not in FULL_CONTEXT_TURN:
        return "last"
    return "full"


def check_modes(modes: str | Iterable[str]) -> tuple[str, ...]:
    """``"all"`` or one mode -> a tuple of modes from :data:`MODES`; ValueError names a bad one."""
    if isinstance(modes, str):
        return MODES if modes == ALL_MODES else (check_choice("mode", modes, MODES + (ALL_MODES,)),)
    chosen = tuple(modes)
    if not chosen:
        raise ValueError(f"modes is empty: pass some of {MODES}")
    for mode in chosen:
        check_choice("mode", mode, MODES)
    return chosen


def check_conversations(conversations: Any) -> list[list[str]]:
    """A non-empty list of non-empty lists of strings; only the last turn (the generation) may be
    empty, and not when it is the only turn. ValueError names the bad item."""
    if isinstance(conversations, str) or not isinstance(conversations, Sequence):
        raise ValueError(f"conversations must be a list of lists of turns, got {type(conversations).__name__}")
    if len(conversations) == 0:
        raise ValueError("conversations is empty: pass at least one conversation")
    checked = []
    for i, turns in enumerate(conversations):
        if isinstance(turns, Sequence) and not isinstance(turns, str) and len(turns) == 0:
            raise ValueError(f"conversations[{i}] is an empty conversation: give it at least one turn")
        turns = check_texts(turns, f"conversations[{i}]", allow_empty=True)
        for j, turn in enumerate(turns):
            if not turn.strip() and (j < len(turns) - 1 or len(turns) == 1):
                raise ValueError(
                    f"conversations[{i}][{j}] is an empty string; only the last turn of a longer "
                    "conversation (an empty generation) may be empty"
                )
        checked.append(turns)
    return checked


@dataclass
class ContextScores:
    """Log-likelihoods after one context: ``prefix`` = ``log P(c + " " + eos)`` (None unless the
    reference variant needs it) and ``followups[f]`` = ``log P(f | c)``, each ``(sum, token count)``."""

    prefix: LogProb | None
    followups: dict[str, LogProb]


def quality_score(mode: str, level: str, quality: str, contexts: dict[str, ContextScores]) -> float:
    """One quality's score under one variant (formulas in the module docstring)."""
    lists = followups(level, quality)
    scored = contexts[context_of(mode, level, quality)]
    if mode == "reference":
        prefix_lp, prefix_n = scored.prefix  # type: ignore[misc]

        def loss(f: str) -> float:
            lp, n = scored.followups[f]
            return -(prefix_lp + lp) / (prefix_n + n)

        return _mean0([loss(f) for f in lists["negative"]]) - _mean0([loss(f) for f in lists["positive"]])
    pos = [scored.followups[f][0] for f in lists["positive"]]
    neg = [scored.followups[f][0] for f in lists["negative"]]
    if mode == "paper":
        return sum(pos) - sum(neg)
    return _mean0(pos) - _mean0(neg)


class FEDScorer:
    """FED scores of conversations (lists of turns; the last turn is the response being rated).

    ``model`` is a name/path for :func:`dialeval.core.lm.load_causal_lm` (loaded on ``device``; ``None``:
    CUDA when available, else CPU) or a loaded ``(model, tokenizer)`` pair (kept on its device unless
    ``device`` is given). ``mode`` is the variant :meth:`score` uses unless told otherwise.
    ``eos_token`` (default ``tokenizer.eos_token``) must be one special token of the tokenizer.
    ``qualities`` selects qualities by name (both levels mixed, e.g. ``["interesting", "coherent"]``).
    ``batch_size`` follow-ups go through the model per call; ``dtype`` (e.g. ``torch.bfloat16`` on
    CUDA), ``max_length`` (default: the model window) and ``precision`` (:mod:`dialeval.core.precision`;
    a precision other than float32 is named in the signature) are passed to :class:`dialeval.core.lm.LMScorer`.
    """

    def __init__(
        self,
        model: str | tuple[Any, Any] = DEFAULT_MODEL,
        device: str | None = None,
        batch_size: int = 32,
        mode: str = DEFAULT_MODE,
        eos_token: str | None = None,
        qualities: Sequence[str] | None = None,
        dtype: torch.dtype | None = None,
        max_length: int | None = None,
        precision: str = "float32",
    ):
        self.mode = check_choice("mode", mode, MODES)
        check_number("batch_size", batch_size, minimum=1, integer=True)
        self.qualities = self._select(qualities)
        self.scorer, self.model_name = lm_scorer(model, device, dtype, batch_size=batch_size, max_length=max_length,
                                                 precision=precision)
        tokenizer = self.tokenizer = self.scorer.tokenizer
        self.eos = eos_token if eos_token is not None else tokenizer.eos_token
        if not self.eos or len(self._ids(self.eos)) != 1 or self.eos not in tokenizer.all_special_tokens:
            raise ValueError(f"eos_token {self.eos!r} must be one special token of the tokenizer")
        self._suffix_ids = {f: self._ids(" " + f) for lv in ("turn", "dialog") for q in _FOLLOWUPS[lv]
                            for f in _both(followups(lv, q))}
        # Room for every FED follow-up, so that the prefix cut is the same for every quality and variant.
        self._prefix_room = self.scorer.max_length - max(len(ids) for ids in self._suffix_ids.values())
        if self._prefix_room < 2:
            raise ValueError(f"max_length {self.scorer.max_length} leaves no room for a conversation")

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

    def _levels(self, level: str) -> list[str]:
        check_choice("level", level, LEVELS)
        levels = [lv for lv in (("turn", "dialog") if level == "both" else (level,)) if self.qualities[lv]]
        if not levels:
            raise ValueError(f"no {level}-level quality selected (selected: {self.qualities})")
        return levels

    def score(
        self, conversations: Sequence[Sequence[str]], level: str = "turn", progress: bool = True,
        mode: str | None = None,
    ) -> dict[str, Any]:
        """Per-quality scores (``turn_interesting``, ``dialog_coherent``, ...) and ``<level>_overall``
        under ``mode`` (default: the scorer's); the signature names model, mode and level.

        ``level="both"`` scores both sets on the same text, as the authors' ``evaluate`` does; levels
        without a selected quality are left out of ``"both"``.
        """
        mode = self.mode if mode is None else check_choice("mode", mode, MODES)
        return self.score_all(conversations, level, (mode,), progress)[mode]

    def score_all(
        self, conversations: Sequence[Sequence[str]], level: str = "turn", modes: str | Iterable[str] = MODES,
        progress: bool = True,
    ) -> dict[str, dict[str, Any]]:
        """``{mode: result of score(..., mode=mode)}`` for several variants from one pass per context."""
        modes = check_modes(modes)
        levels = self._levels(level)
        convs = check_conversations(conversations)
        needed = self._needed(modes, levels)
        flags = [reply_flags(turns[:-1], turns[-1]) for turns in convs]
        per_mode: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
        # a flagged response is not run through the model: apply_policy gives it the worst values
        scored = self._score_contexts(convs, flags, needed, "reference" in modes, progress)
        for contexts in scored:
            for m in modes:
                for lv in levels:
                    values = {score_name(lv, q): math.nan if contexts is None else quality_score(m, lv, q, contexts)
                              for q in self.qualities[lv]}
                    values[f"{lv}_overall"] = mean(list(values.values()))
                    for name, value in values.items():
                        per_mode[m].setdefault(name, []).append(value)
        scales = fed_scales()
        return {
            m: summarize(apply_policy(per_mode[m], flags, scales),
                         make_signature("fed", model=self.model_name, mode=m, level=level,
                                        precision=signature_precision(self.scorer.precision)), flags, scales)
            for m in modes
        }

    def _needed(self, modes: Sequence[str], levels: Sequence[str]) -> dict[str, list[str]]:
        """Context kind (``"full"``/``"last"``) -> the distinct follow-ups to score after it."""
        needed: dict[str, dict[str, None]] = {}
        for m in modes:
            for lv in levels:
                for q in self.qualities[lv]:
                    needed.setdefault(context_of(m, lv, q), {}).update(dict.fromkeys(_both(followups(lv, q))))
        return {kind: list(texts) for kind, texts in needed.items()}

    def _score_contexts(
        self, convs: list[list[str]], flags: list[list[str]], needed: dict[str, list[str]], prefix_logprob: bool,
        progress: bool = True,
    ) -> list[dict[str, ContextScores] | None]:
        """Per conversation (``None`` when flagged), its context kinds scored: one prefix per distinct
        context text (``"last"`` = ``"full"`` for a one-turn conversation) with its follow-ups, the
        prefixes of several conversations in one forward (:meth:`LMScorer.grouped_logprobs`)."""
        texts: list[dict[str, str] | None] = []
        jobs: list[tuple[int, str, list[str]]] = []  # (conversation, context text, follow-ups after it)
        for index, turns in enumerate(convs):
            if flags[index]:
                texts.append(None)
                continue
            kinds = {"full": conversation_text(turns, self.eos), "last": conversation_text(turns[-1:], self.eos)}
            by_text: dict[str, dict[str, None]] = {}
            for kind, fs in needed.items():
                by_text.setdefault(kinds[kind], {}).update(dict.fromkeys(fs))
            texts.append(kinds)
            jobs += [(index, text, list(fs)) for text, fs in by_text.items()]
        groups = [self._group(index, text, fs) for index, text, fs in jobs]
        results = grouped_in_calls(self.scorer, groups, prefix_logprob, progress, desc="fed", unit="context")
        found = {(index, text): ContextScores(prefix_lp, dict(zip(fs, scored)))
                 for (index, text, fs), (prefix_lp, scored) in zip(jobs, results)}
        return [None if kinds is None else {kind: found[index, kinds[kind]] for kind in needed}
                for index, kinds in enumerate(texts)]

    def _group(self, index: int, context: str, texts: list[str]) -> tuple[list[int], list[list[int]]]:
        """``(prefix ids, follow-up ids)`` of one context: the prefix left-truncated to the room every
        follow-up leaves in the window (with a warning), the tokenisation checked at the split."""
        prefix = self._ids(context + " " + self.eos)
        suffixes = [self._suffix_ids[f] for f in texts]
        if self._ids(context + " " + self.eos + " " + texts[0]) != prefix + suffixes[0]:
            raise ValueError(
                f"conversations[{index}]: tokenising prefix and follow-up separately differs from the whole "
                f"string; the tokenizer does not split at {self.eos!r}"
            )
        if len(prefix) > self._prefix_room:  # keep the first token (eos) and the most recent ones
            warnings.warn(f"fed: conversations[{index}] has {len(prefix)} tokens before its follow-ups, more than "
                          f"the {self._prefix_room} the model window leaves; its {len(prefix) - self._prefix_room} "
                          "earliest tokens after the first were cut", stacklevel=4)
            prefix = prefix[:1] + prefix[len(prefix) - self._prefix_room + 1 :]
        return prefix, suffixes


def _both(entry: dict[str, list[str]]) -> list[str]:
    return entry["positive"] + entry["negative"]


def _mean0(values: list[float]) -> float:
    """Mean, 0 for an empty list (the authors' ``sum / max(len, 1)``)."""
    return sum(values) / max(len(values), 1)
