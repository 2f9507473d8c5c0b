"""The training perturbations of U, valid utterance prediction (Phy et al. 2020, Section 3.1; the
authors' ``usl_score/datasets.py`` and ``data_utils.py``).

A real response ``x`` (a list of tokens) becomes

* a **negative** (label 0, invalid) when it has at least 3 tokens, by one syntactic corruption:
  word **reorder** (a random shuffle; probability 0.3), word **drop** (each token dropped with a
  probability ``t ~ U(0, 0.5)`` drawn once per response, redrawn until at least one token is dropped
  and one kept; 0.3) or word **repeat** (0.4: after each token, with probability 0.1, its last
  ``k`` tokens so far (``k`` = 1, 2, 3 with probabilities 0.7 / 0.2 / 0.1 when 3 are available,
  0.75 / 0.25 when 2) are appended ``n`` = 1, 2, 3 times (0.8 / 0.15 / 0.05); redrawn until
  something was repeated);
* a **positive** (label 1, valid) kept as it is (probability 0.7) or by a corruption that keeps it
  understandable: the final punctuation removed (0.1), the response **simplified** to its nouns,
  verbs and prepositions (``NN NNP NNS NNPS VB VBZ VBN VBG VBD IN``; 0.1) or its articles and clitics
  removed (the authors' ``a an the ve ' s ll d re m t`` over BERT pieces; here the Penn tokens ``a an
  the 've 's 'll 'd 're 'm n't``; 0.1); a corruption that leaves nothing
  (``"Hi !"`` simplified) keeps the response unchanged.

Departures: tokens are Penn-style words (:func:`dialeval.core.pos.token_spans`, ``don't`` -> ``do
n't``) tagged by :func:`dialeval.core.pos.pos_tag`, not BERT word pieces (which leave ``##`` marks in
the authors' perturbed text); each training response yields its positive **and** its negative
(the authors draw one of the two per response with probability 1/2), so the two classes are
balanced and share their responses. The authors' "remove punctuation" passes the raw string, so it
only ever drops a final character that is itself one of the marks; here it drops a final token among
``. ! ? ... !!! !! .. , ,,`` as its docstring says.
"""

from __future__ import annotations

import random
from typing import Callable

from dialeval.core.pos import pos_tag, token_spans

MIN_NEGATIVE_TOKENS = 3  # shorter responses give only a positive
NEGATIVE_KINDS = ("reorder", "drop", "repeat")
NEGATIVE_CUMULATIVE = (0.3, 0.6, 1.0)
POSITIVE_KINDS = ("no_final_punctuation", "simplify", "no_articles", "unchanged")
POSITIVE_CUMULATIVE = (0.1, 0.2, 0.3, 1.0)
FINAL_PUNCTUATION = frozenset({".", "!", "?", "...", "!!!", "!!", "..", ",", ",,"})
SIMPLIFY_TAGS = frozenset({"NN", "NNP", "NNS", "NNPS", "VB", "VBZ", "VBN", "VBG", "VBD", "IN"})
# the authors' list over BERT pieces (``a an the ve ' s ll d re m t``: the articles and the pieces of
# clitics split at the apostrophe) as Penn-style tokens: the articles and the clitics themselves
ARTICLES = frozenset({"a", "an", "the", "'ve", "'s", "'ll", "'d", "'re", "'m", "n't"})
REPEAT_PROBABILITY = 0.1  # a token is followed by a repetition with this probability
REPEAT_WIDTH = {1: (1.0,), 2: (0.75, 1.0), 3: (0.7, 0.9, 1.0)}  # cumulative, by the tokens available
REPEAT_TIMES = (0.8, 0.95, 1.0)  # cumulative: 1, 2 or 3 copies


def tokens_of(text: str) -> list[str]:
    """The Penn-style tokens of ``text``."""
    return [text[a:b] for a, b in token_spans(text)]


def pick(cumulative: tuple[float, ...], rng: random.Random) -> int:
    """The index of the first cumulative probability above a uniform draw."""
    u = rng.random()
    return next((i for i, c in enumerate(cumulative) if u < c), len(cumulative) - 1)


def reorder(tokens: list[str], rng: random.Random) -> list[str]:
    """A random permutation of the tokens."""
    out = list(tokens)
    rng.shuffle(out)
    return out


def drop(tokens: list[str], rng: random.Random) -> list[str]:
    """Each token dropped with one probability ``U(0, 0.5)``; redrawn until at least one is dropped
    and one kept (``ValueError`` under 2 tokens, where that cannot be)."""
    if len(tokens) < 2:
        raise ValueError(f"word drop needs at least 2 tokens, got {tokens!r}")
    while True:
        threshold = rng.random() / 2
        kept = [t for t in tokens if rng.random() >= threshold]
        if 0 < len(kept) < len(tokens):
            return kept


def repeat(tokens: list[str], rng: random.Random) -> list[str]:
    """After each token, with probability 0.1, the last 1-3 tokens so far appended 1-3 times (see the
    module docstring); redrawn until the result is longer (``ValueError`` for no token)."""
    if not tokens:
        raise ValueError("word repeat needs at least 1 token")
    while True:
        out: list[str] = []
        for token in tokens:
            out.append(token)
            if rng.random() >= REPEAT_PROBABILITY:
                continue
            width = pick(REPEAT_WIDTH[min(len(out), 3)], rng) + 1
            times = pick(REPEAT_TIMES, rng) + 1
            out += out[-width:] * times
        if len(out) > len(tokens):
            return out


def no_final_punctuation(tokens: list[str], rng: random.Random) -> list[str]:
    """The tokens without a final punctuation token (unchanged when the last is a word)."""
    return tokens[:-1] if tokens and tokens[-1] in FINAL_PUNCTUATION else list(tokens)


def simplify(tokens: list[str], rng: random.Random) -> list[str]:
    """Only the nouns, verbs and prepositions (:data:`SIMPLIFY_TAGS`), tagged in context."""
    return [t for t, tag in pos_tag(" ".join(tokens)) if tag in SIMPLIFY_TAGS]


def no_articles(tokens: list[str], rng: random.Random) -> list[str]:
    """The tokens without articles and clitic fragments (:data:`ARTICLES`, lower-cased match)."""
    return [t for t in tokens if t.lower() not in ARTICLES]


NEGATIVES: dict[str, Callable[[list[str], random.Random], list[str]]] = {
    "reorder": reorder, "drop": drop, "repeat": repeat}
POSITIVES: dict[str, Callable[[list[str], random.Random], list[str]]] = {
    "no_final_punctuation": no_final_punctuation, "simplify": simplify, "no_articles": no_articles,
    "unchanged": lambda tokens, rng: list(tokens)}


def negative(text: str, rng: random.Random) -> tuple[str, str] | None:
    """``(kind, corrupted text)`` of a response of at least :data:`MIN_NEGATIVE_TOKENS` tokens, else ``None``."""
    tokens = tokens_of(text)
    if len(tokens) < MIN_NEGATIVE_TOKENS:
        return None
    kind = NEGATIVE_KINDS[pick(NEGATIVE_CUMULATIVE, rng)]
    return kind, " ".join(NEGATIVES[kind](tokens, rng))


def positive(text: str, rng: random.Random) -> tuple[str, str]:
    """``(kind, text)``: the response kept, or corrupted in a way that keeps it valid."""
    kind = POSITIVE_KINDS[pick(POSITIVE_CUMULATIVE, rng)]
    kept = " ".join(POSITIVES[kind](tokens_of(text), rng)) if kind != "unchanged" else text
    return (kind, kept) if kept.strip() else ("unchanged", text)
