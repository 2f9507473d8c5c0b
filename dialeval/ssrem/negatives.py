"""SSREM's speaker-sensitive negative sampling (Bak & Oh 2020, Section 3.1).

Training (Section 3.3, ``training/ssrem.py``): for each (context, true response) pair the model
must pick the true response among candidates that add speaker-sensitive negatives of the responding
speaker A talking to partner B (:class:`NegativeSampler`): A's other utterances in the same
conversation (SC), A's utterances in other conversations with B (SP), A's utterances with other
partners (SS), and utterances of other speakers (RN); loss ``-log softmax_true f(c, .)``. RSREM,
the paper's ablation, draws every negative at random (RN). Pools hold only utterances with at least
``min_tokens`` word tokens (3 in the bundled model): "lol", "yes", "ok" occur at every level alike,
say nothing about the speaker and would make every level look the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from dialeval.data.corpora import Turn
from dialeval.core.text import tokenize

NEGATIVE_TYPES = ("SC", "SP", "SS", "RN")
NEGATIVE_NAMES = {"SC": "same conversation", "SP": "same partner", "SS": "same speaker", "RN": "random"}
# A type whose pool is empty for an utterance is replaced by the next wider pool (documented in
# NegativeSampler): same conversation -> same partner -> same speaker -> random.
FALLBACK = {"SC": ("SC", "SP", "SS", "RN"), "SP": ("SP", "SS", "RN"), "SS": ("SS", "RN"), "RN": ("RN",)}
NEGATIVE_MODES = ("speaker", "random")  # SSREM, RSREM
MIN_TOKENS = 3  # pool membership (NegativeSampler); recorded in the checkpoint's config


@dataclass(frozen=True)
class Utterance:
    conversation: int
    turn: int
    speaker: str
    partner: str | None  # the other speaker of a two-party conversation, None otherwise
    text: str


class NegativeSampler:
    """Speaker-sensitive negatives (Section 3.1) for utterance ``u`` of speaker A to partner B.

    Pools (never ``u`` itself, never a text equal to one already among the candidates):

    * ``SC``: A's other utterances in ``u``'s conversation;
    * ``SP``: A's utterances in other conversations with B (B must be the only other speaker);
    * ``SS``: A's utterances in conversations with other partners;
    * ``RN``: any utterance of a speaker other than A.

    :meth:`draw` falls back along :data:`FALLBACK` when a pool is empty (SC -> SP -> SS -> RN), e.g.
    a speaker met in no other conversation gets SS/RN instead of SP, and reports the type drawn.

    ``min_tokens``: only utterances with at least that many word tokens (tokens with a letter or
    digit) enter the pools; every utterance can still be a target.
    """

    def __init__(self, conversations: Sequence[Sequence[Turn]], min_tokens: int = 0):
        self.min_tokens = min_tokens
        self.utterances: list[Utterance] = []
        self._by_conversation: dict[tuple[int, str], list[int]] = {}
        self._by_pair: dict[tuple[str, str], list[int]] = {}
        self._by_speaker: dict[str, list[int]] = {}
        for c, conversation in enumerate(conversations):
            speakers = {t.speaker for t in conversation}
            for j, turn in enumerate(conversation):
                others = speakers - {turn.speaker}
                partner = next(iter(others)) if len(others) == 1 else None
                i = len(self.utterances)
                self.utterances.append(Utterance(c, j, turn.speaker, partner, turn.text))
                if min_tokens and word_count(turn.text) < min_tokens:
                    continue  # a target, never a negative
                self._by_conversation.setdefault((c, turn.speaker), []).append(i)
                self._by_speaker.setdefault(turn.speaker, []).append(i)
                if partner is not None:
                    self._by_pair.setdefault((turn.speaker, partner), []).append(i)
        self._all = [i for ids in self._by_speaker.values() for i in ids]
        self._all.sort()

    def _base_and_test(self, kind: str, target: int) -> tuple[Sequence[int], Callable[[int], bool]]:
        u = self.utterances[target]
        at = self.utterances
        if kind == "SC":
            return self._by_conversation.get((u.conversation, u.speaker), ()), lambda i: i != target
        if kind == "SP":
            if u.partner is None:
                return (), lambda i: False
            return self._by_pair.get((u.speaker, u.partner), ()), lambda i: at[i].conversation != u.conversation
        if kind == "SS":
            return self._by_speaker.get(u.speaker, ()), lambda i: (
                at[i].conversation != u.conversation and (u.partner is None or at[i].partner != u.partner)
            )
        if kind == "RN":
            return self._all, lambda i: at[i].speaker != u.speaker
        raise ValueError(f"unknown negative type {kind!r}; choose from {NEGATIVE_TYPES}")

    def pool(self, kind: str, target: int, avoid: Iterable[str] = ()) -> list[int]:
        """Every utterance id of ``kind``'s pool for ``target`` (texts in ``avoid`` left out)."""
        avoid = {text_key(t) for t in avoid} | {text_key(self.utterances[target].text)}
        base, ok = self._base_and_test(kind, target)
        return [i for i in base if ok(i) and text_key(self.utterances[i].text) not in avoid]

    def level_sizes(self, target: int) -> dict[str, int]:
        """The size of every level's pool for ``target`` (no fallback)."""
        return {kind: len(self.pool(kind, target)) for kind in NEGATIVE_TYPES}

    def draw_from(self, kind: str, target: int, rng: random.Random, avoid: set[str], tries: int = 20) -> int | None:
        """One random utterance of ``kind``'s pool, ``None`` when it is empty. ``avoid`` holds
        :func:`text_key` s of texts already chosen. Rejection sampling first; the exact pool if that fails."""
        base, ok = self._base_and_test(kind, target)
        if not base:
            return None
        for _ in range(tries):
            i = base[rng.randrange(len(base))]
            if ok(i) and text_key(self.utterances[i].text) not in avoid:
                return i
        exact = [i for i in base if ok(i) and text_key(self.utterances[i].text) not in avoid]
        return rng.choice(exact) if exact else None

    def draw(self, kind: str, target: int, rng: random.Random, avoid: set[str]) -> tuple[int, str] | None:
        """A negative of ``kind`` or of the first non-empty pool after it in :data:`FALLBACK`;
        ``(utterance id, type drawn)``, ``None`` if even RN is empty."""
        for level in FALLBACK[kind]:
            i = self.draw_from(level, target, rng, avoid)
            if i is not None:
                return i, level
        return None

    def candidates(self, target: int, per_type: int, mode: str, rng: random.Random) -> tuple[list[int], list[str]]:
        """``[target] + negatives`` and their types (``"GT"`` first): ``per_type`` of each of
        SC, SP, SS, RN (``mode="speaker"``, SSREM) or ``4 * per_type`` RN (``"random"``, RSREM)."""
        kinds = [k for k in NEGATIVE_TYPES for _ in range(per_type)] if mode == "speaker" else ["RN"] * (
            len(NEGATIVE_TYPES) * per_type)
        ids, types = [target], ["GT"]
        avoid = {text_key(self.utterances[target].text)}
        for kind in kinds:
            got = self.draw(kind, target, rng, avoid)
            if got is None:
                raise ValueError(f"utterance {target}: no negative at all (a corpus needs >= 2 speakers)")
            ids.append(got[0])
            types.append(got[1])
            avoid.add(text_key(self.utterances[got[0]].text))
        return ids, types

    def responses(self, min_turn: int = 1) -> list[int]:
        """Utterances with at least ``min_turn`` turns of context: the training targets."""
        return [i for i, u in enumerate(self.utterances) if u.turn >= min_turn]

    def context_ids(self, target: int, turns: int) -> range:
        """The indices of the up to ``turns`` utterances before ``target`` in its conversation."""
        first = target - self.utterances[target].turn
        return range(max(first, target - turns), target)

    def context(self, target: int, turns: int) -> list[str]:
        """The up to ``turns`` turns before ``target`` in its conversation."""
        return [self.utterances[i].text for i in self.context_ids(target, turns)]


def text_key(text: str) -> str:
    """The tokens of ``text`` joined by spaces: two texts with the same key count as one candidate."""
    return " ".join(tokenize(text))


def word_count(text: str) -> int:
    """Tokens with at least one letter or digit (what ``min_tokens`` counts)."""
    return sum(any(ch.isalnum() for ch in t) for t in tokenize(text))
