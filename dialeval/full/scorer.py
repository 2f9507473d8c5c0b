"""FULL: dialogue quality from the likelihood of negative follow-ups.

De Bruyn, Lotfi, Buhmann & Daelemans (2022), "Open-domain Dialog Evaluation using Follow-Ups
Likelihood", COLING (arXiv 2209.05185; code github.com/maximedb/full). FED's successor keeps FED's
idea (a dialogue model plays the user and reacts) but scores only *negative* follow-ups, by the
likelihood of the follow-up tokens alone given the conversation.

The released rule, for the turns ``t_1..t_n`` of a conversation and negative follow-ups ``F``::

    c = "\\t" + "\\t".join(t_1..t_n)            (speaker tags stripped; the last ``lookback`` = 50 turns)
    FULL(c) = 1/|F| * sum_{f in F} exp(-log P(f | c) / |f|)

``log P(f | c) = sum_j log P(f_j | c, f_<j)`` over the follow-up's tokens only, so each term is the
perplexity of one follow-up after the conversation (HF ``exp(model(input_ids=c, labels=f).loss)``).
Higher is better: after a good response the negative follow-ups are unlikely. Turn level scores the
context's last ``lookback`` turns plus the response, dialog level the conversation's last
``lookback`` turns. With the paper's encoder-decoder (``facebook/blenderbot-400M-distill``) the
conversation is the encoder input, truncated on the right (its start is kept, the tokenizer's
``truncation=True``), and the follow-up the decoder target, both tokenised by the model's tokenizer
with its special tokens.

The released follow-up list has five strings but misses a comma, so the 2nd and 3rd are one
string, ``"You're really confusing.You're really boring."``: the published numbers come from 4
follow-ups (:data:`RELEASED_FOLLOWUPS`; the intended five are :data:`FOLLOWUPS`).

Variants (``variant``, named in the signature; higher = better in all; :data:`VARIANTS`):

* ``"paper"`` -- the released rule above: the 4 released follow-ups, mean perplexity, ``"\\t"`` text.
* ``"five"`` -- the same with the 5 intended follow-ups.
* ``"loglik"`` -- the 5 follow-ups' summed negative log-likelihood, averaged:
  ``1/|F| * sum_f -log P(f | c)`` (not length-normalised, no exp).
* ``"dialogue"`` -- ``"five"`` on the text a dialogue LM such as DialoGPT (and the bundled stand-in)
  reads, FED's ``eos + " " + (" " + eos + " ").join(turns)`` (:func:`dialeval.core.lm.conversation_text`).
* ``"dialogue-loglik"`` -- ``"loglik"`` on that text (added after the first FED-data run showed
  each of the two changes helping the stand-in on its own; benchmarks/results/full-fed-*).

A decoder-only model (the offline stand-in) reads ``c`` and ``f`` as one sequence: for the ``"\\t"``
text ``[eos] + ids(c) + ids("\\t") + ids(f)``, for the ``eos`` text ``ids(c) + ids(" " + eos) +
ids(" " + f)`` (each part tokenised on its own). A conversation that leaves no room for the longest
follow-up in the model window keeps its first tokens (right-side truncation, as the paper's
encoder does) and its separator. Scoring goes through :class:`dialeval.core.lm.LMScorer`: one
prefix pass per conversation with every follow-up packed on its cache (decoder-only), or one encoder
pass with the follow-ups decoded as one batch against it (encoder-decoder); one pass per text gives
every variant on it.

Degenerate responses (:mod:`dialeval.core.degenerate`): an empty or repetitive last turn (the rated
response; at dialog level the conversation's last turn) is not scored and gets the scale's worst
value, 0, with its flag in ``flags``. The released code refuses an empty response.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import torch

from dialeval.core.degenerate import apply_policy, reply_flags
from dialeval.core.lm import LogProb, conversation_text, is_encoder_decoder, lm_scorer
from dialeval.core.lm_calls import grouped_in_calls
from dialeval.core.options import check_choice, check_number
from dialeval.core.precision import signature_precision
from dialeval.core.progress import Progress
from dialeval.core.results import make_signature, summarize
from dialeval.core.text import check_texts
from dialeval.full.scales import scales as full_scales

DEFAULT_MODEL = "facebook/blenderbot-400M-distill"
FOLLOWUPS: tuple[str, ...] = (
    "Not really relevant here.",
    "You're really confusing.",
    "You're really boring.",
    "What are you trying to say?",
    "You don't seem interested.",
)
# The released list: a missing comma joins the 2nd and 3rd follow-ups into one string.
RELEASED_FOLLOWUPS: tuple[str, ...] = (FOLLOWUPS[0], FOLLOWUPS[1] + FOLLOWUPS[2], *FOLLOWUPS[3:])
SEPARATOR = "\t"
LOOKBACK = 50
LEVELS = ("turn", "dialog")
TEXTS = ("tab", "eos")
RULES = ("perplexity", "loglik")
ALL_VARIANTS = "all"  # benchmark option: every variant from one pass per text


@dataclass(frozen=True)
class Variant:
    """One way to score: the follow-ups, how their likelihoods become a score (``"perplexity"``:
    ``mean_f exp(-log P(f|c) / |f|)``; ``"loglik"``: ``mean_f -log P(f|c)``) and the conversation
    text (``"tab"``: the paper's; ``"eos"``: FED's)."""

    followups: tuple[str, ...]
    rule: str
    text: str


VARIANTS: dict[str, Variant] = {
    "paper": Variant(RELEASED_FOLLOWUPS, "perplexity", "tab"),
    "five": Variant(FOLLOWUPS, "perplexity", "tab"),
    "loglik": Variant(FOLLOWUPS, "loglik", "tab"),
    "dialogue": Variant(FOLLOWUPS, "perplexity", "eos"),
    "dialogue-loglik": Variant(FOLLOWUPS, "loglik", "eos"),
}
DEFAULT_VARIANT = "paper"


def check_variants(variants: str | Iterable[str]) -> tuple[str, ...]:
    """``"all"`` or one variant name -> a tuple of names from :data:`VARIANTS`; ValueError names a bad one."""
    if isinstance(variants, str):
        if variants == ALL_VARIANTS:
            return tuple(VARIANTS)
        return (check_choice("variant", variants, (*VARIANTS, ALL_VARIANTS)),)
    chosen = tuple(variants)
    if not chosen:
        raise ValueError(f"variants is empty: pass some of {list(VARIANTS)}")
    return tuple(check_choice("variant", v, VARIANTS) for v in chosen)


def aggregate(rule: str, logprobs: Sequence[LogProb]) -> float:
    """One item's score from its follow-ups' ``(log P(f|c), |f|)``: the mean perplexity
    ``mean_f exp(-log P / |f|)`` or the mean negative log-likelihood ``mean_f -log P``."""
    if rule == "perplexity":
        return sum(math.exp(-lp / n) for lp, n in logprobs) / len(logprobs)
    return sum(-lp for lp, _ in logprobs) / len(logprobs)


def check_turns(contexts: Any, responses: Any) -> list[list[str]]:
    """``context + [response]`` per item. ``contexts``: a non-empty list of lists of non-empty turns
    (a list may be empty: a response without context); ``responses``: strings, one per context (an
    empty one is an empty generation, flagged). ValueError names the bad input and index."""
    for name, value in (("contexts", contexts), ("responses", responses)):
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise ValueError(f"{name} must be a list, got {type(value).__name__}")
    if len(contexts) == 0:
        raise ValueError("contexts is empty: pass at least one item")
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
    responses = check_texts(responses, "responses", allow_empty=True)
    out = []
    for i, context in enumerate(contexts):
        if isinstance(context, str) or not isinstance(context, Sequence):
            raise ValueError(f"contexts[{i}] must be a list of turns, got {type(context).__name__}")
        turns = check_texts(context, f"contexts[{i}]") if len(context) else []
        out.append(turns + [responses[i]])
    return out


def split_conversations(conversations: Any) -> tuple[list[list[str]], list[str]]:
    """``(contexts, responses)`` of whole conversations: all turns but the last, and the last. A
    conversation must be a non-empty list of turns; only its last turn may be empty."""
    if isinstance(conversations, str) or not isinstance(conversations, Sequence):
        raise ValueError(f"conversations must be a list of lists of turns, got {type(conversations).__name__}")
    if len(conversations) == 0:
        raise ValueError("conversations is empty: pass at least one conversation")
    contexts, responses = [], []
    for i, turns in enumerate(conversations):
        if isinstance(turns, str) or not isinstance(turns, Sequence) or len(turns) == 0:
            raise ValueError(f"conversations[{i}] must be a non-empty list of turns, got {turns!r}")
        turns = check_texts(turns, f"conversations[{i}]", allow_empty=True)
        blank = [j for j, turn in enumerate(turns[:-1]) if not turn.strip()]
        if blank:
            raise ValueError(f"conversations[{i}][{blank[0]}] is an empty string; only the last turn may be empty")
        contexts.append(turns[:-1])
        responses.append(turns[-1])
    return contexts, responses


def window(turns: list[str], level: str, lookback: int) -> list[str]:
    """The turns FULL reads: turn level the last ``lookback`` turns of the context plus the response,
    dialog level the last ``lookback`` turns of the conversation."""
    if level == "turn":
        return turns[:-1][-lookback:] + turns[-1:]
    return turns[-lookback:]


class FULLScorer:
    """FULL scores of conversations (``context + [response]`` lists of turns).

    ``model`` is a name/path (loaded by :func:`dialeval.core.lm.load_causal_lm`, an encoder-decoder
    checkpoint as one) on ``device`` (``None``: CUDA when available, else CPU) or a loaded
    ``(model, tokenizer)`` pair. ``variant`` is what :meth:`score` uses unless told otherwise;
    ``lookback`` the number of turns read; ``batch_size`` follow-ups per model call; ``dtype``,
    ``max_length`` (default: the model window) and ``precision`` (:mod:`dialeval.core.precision`,
    named in the signature unless float32) go to :class:`dialeval.core.lm.LMScorer`;
    ``share_prefix=False`` scores every follow-up with a full forward pass of its own (the plain loop).
    """

    def __init__(
        self,
        model: str | tuple[Any, Any] = DEFAULT_MODEL,
        device: str | None = None,
        batch_size: int = 32,
        variant: str = DEFAULT_VARIANT,
        lookback: int = LOOKBACK,
        dtype: torch.dtype | None = None,
        max_length: int | None = None,
        share_prefix: bool = True,
        precision: str = "float32",
    ):
        self.variant = check_choice("variant", variant, VARIANTS)
        self.lookback = int(check_number("lookback", lookback, minimum=1, integer=True))
        check_number("batch_size", batch_size, minimum=1, integer=True)
        self.scorer, self.model_name = lm_scorer(model, device, dtype, encoder_decoder=True, batch_size=batch_size,
                                                 max_length=max_length, share_prefix=share_prefix,
                                                 precision=precision)
        tokenizer = self.tokenizer = self.scorer.tokenizer
        self.seq2seq = is_encoder_decoder(self.scorer.model)
        self.eos = tokenizer.eos_token
        if not self.eos:
            raise ValueError("the tokenizer has no eos_token; FULL needs one to start and separate the text")
        self._followup_ids = {(text, f): self._followup(text, f) for text in TEXTS for v in VARIANTS.values()
                              for f in v.followups}

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def _followup(self, text: str, followup: str) -> list[int]:
        if self.seq2seq:
            return list(self.tokenizer(text_target=followup)["input_ids"])
        return self._ids(followup if text == "tab" else " " + followup)

    def conversation_ids(self, turns: list[str], text: str, room: int) -> list[int]:
        """The token ids before the follow-up: the encoder input (encoder-decoder) or the decoder
        prefix (decoder-only), the conversation cut on the right to fit ``room`` tokens."""
        if text == "tab":
            written = SEPARATOR + SEPARATOR.join(turns)
        else:
            written = conversation_text(turns, self.eos)
        if self.seq2seq:
            whole = list(self.tokenizer(written)["input_ids"])
            _warn_cut(len(whole), room)
            return list(self.tokenizer(written, truncation=True, max_length=room)["input_ids"])
        start = self._ids(self.eos) if text == "tab" else []
        separator = self._ids(SEPARATOR if text == "tab" else " " + self.eos)
        conversation = start + self._ids(written)
        _warn_cut(len(conversation), max(room - len(separator), 1))
        return conversation[: max(room - len(separator), 1)] + separator

    def score(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], level: str = "turn",
              variant: str | None = None, progress: bool = True) -> dict[str, Any]:
        """``full`` (mean), ``full_scores`` (per item), ``flags`` and the signature, under ``variant``
        (default: the scorer's) at ``level`` (``"turn"``: the response after its context;
        ``"dialog"``: the whole conversation ``context + [response]``)."""
        variant = self.variant if variant is None else check_choice("variant", variant, VARIANTS)
        return self.score_all(contexts, responses, level, (variant,), progress)[variant]

    def score_all(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], level: str = "turn",
                  variants: str | Iterable[str] = tuple(VARIANTS), progress: bool = True) -> dict[str, dict[str, Any]]:
        """``{variant: result of score(..., variant=variant)}`` from one pass per item and text."""
        chosen = check_variants(variants)
        check_choice("level", level, LEVELS)
        conversations = check_turns(contexts, responses)
        flags = [reply_flags(turns[:-1], turns[-1]) for turns in conversations]
        needed: dict[str, list[str]] = {}
        for name in chosen:
            spec = VARIANTS[name]
            needed.setdefault(spec.text, [])
            needed[spec.text] += [f for f in spec.followups if f not in needed[spec.text]]
        per_variant: dict[str, list[float]] = {name: [] for name in chosen}
        windows = [None if flagged else window(turns, level, self.lookback) for turns, flagged in zip(conversations, flags)]
        for scored in self.followup_logprobs(windows, needed, progress):
            for name in chosen:
                spec = VARIANTS[name]
                value = aggregate(spec.rule, [scored[spec.text][f] for f in spec.followups]) if scored else math.nan
                per_variant[name].append(value)
        scales = full_scales()
        return {
            name: summarize(apply_policy({"full": values}, flags, scales), self.signature(name, level), flags, scales)
            for name, values in per_variant.items()
        }

    def followup_logprobs(self, conversations: list[list[str] | None], needed: dict[str, list[str]],
                          progress: bool = True) -> list[dict[str, dict[str, LogProb]]]:
        """Per conversation (``{}`` for ``None``, a flagged one): text kind -> follow-up ->
        ``(log P(f | c), |f|)``. A decoder-only model scores the conversations of a call together
        (:meth:`LMScorer.grouped_logprobs`: several conversations with their follow-ups in one
        forward); an encoder-decoder one encodes each conversation once and decodes its follow-ups."""
        jobs = []  # (conversation, text kind, follow-ups, source ids, target ids)
        for index, turns in enumerate(conversations):
            for text, followups in ({} if turns is None else needed).items():
                targets = [self._followup_ids[(text, f)] for f in followups]
                room = self.scorer.max_length - (0 if self.seq2seq else max(len(t) for t in targets))
                jobs.append((index, text, followups, self.conversation_ids(turns, text, room), targets))
        if self.seq2seq:
            with Progress(len(jobs), "full", unit="conversation", enabled=progress) as bar:
                values = [self.scorer.target_logprobs(source, targets) for _, _, _, source, targets in bar.each(jobs)]
        else:
            scored = grouped_in_calls(self.scorer, [(j[3], j[4]) for j in jobs], progress=progress, desc="full",
                                      unit="conversation")
            values = [conts for _, conts in scored]
        out: list[dict[str, dict[str, LogProb]]] = [{} for _ in conversations]
        for (index, text, followups, _, _), scored in zip(jobs, values):
            out[index][text] = dict(zip(followups, scored))
        return out

    def signature(self, variant: str, level: str) -> str:
        """``metric:full|model:<id@hash>|variant:...|followups:<n>|rule:...|text:...|lookback:...|level:...``."""
        spec = VARIANTS[variant]
        return make_signature("full", model=self.model_name, variant=variant, followups=len(spec.followups),
                              rule=spec.rule, text=spec.text, lookback=self.lookback, level=level,
                              precision=signature_precision(self.scorer.precision))


def _warn_cut(tokens: int, room: int) -> None:
    """Warn that a conversation of ``tokens`` tokens keeps its first ``room`` (right-side truncation)."""
    if tokens > room:
        warnings.warn(f"full: a conversation of {tokens} tokens keeps its first {room} (the model window less the "
                      f"longest follow-up); {tokens - room} tokens at its end were cut", stacklevel=4)
