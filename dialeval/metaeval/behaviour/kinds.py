"""The replies the behavioural suite sets against each real reply (CheckList's invariance and
directional tests, Ribeiro et al. 2020; the adversarial irrelevant responses of DailyDialog++,
Sai et al. 2020; Khalid & Lee 2022's perturbations for fluency).

Kinds (:data:`dialeval.core.spec.BEHAVIOUR_KINDS`), which a metric may have to score below the real
reply:

* ``echo_last``: the context's last turn; ``echo_own``: the responder's own previous turn
  (``context[-2]``; none for a one-turn context);
* ``salad``: words of the context (whitespace tokens holding a letter or digit), shuffled, as many
  as the real reply has (the shuffled context is repeated when it has fewer);
* ``generic``: one of :data:`GENERIC_REPLIES`, its punctuation set off by a space when the real
  reply's is (DailyDialog writes ``"Okay ."``), so that no metric tells it by its spelling; ``other_reply``: the real reply of another case (a
  seeded derangement, Sattolo's algorithm: no case keeps its own);
* ``empty``: ``""``; ``repeated``: the real reply said :data:`REPEATS` times;
* ``gibberish``: random lower-case strings of 2 to 7 letters, as many as the reply's words;
* ``punctuation``: one of :data:`PUNCTUATION`.

Controls (:data:`dialeval.core.spec.BEHAVIOUR_CONTROLS`), which should barely move the score:
``lowercase`` (lower-cased, every character that is neither a word character nor white space
removed), ``paraphrase`` (the paraphraser a metric brings, :func:`dialeval.registry.paraphraser`)
and ``continuation`` (the reply, a space, the dialogue's next turn). A control identical to the
reply, or one that cannot be built, is ``None``: not scored.

Every random choice draws from ``random.Random(f"{seed}:{name}:{index}")`` (string seeds are hashed
with SHA-512, so the replies are the same on every machine and Python version): a case's replies do
not depend on the other cases, except ``other_reply``, which depends on their number.
"""

from __future__ import annotations

import random
import re
import string
from typing import Callable, Sequence

from dialeval import registry
from dialeval.metaeval.behaviour.cases import Case
from dialeval.core.degenerate import context_salad, word_tokens as words
from dialeval.core.spec import BEHAVIOUR_CONTROLS, BEHAVIOUR_KINDS

GENERIC_REPLIES = ("I don't know.", "That's nice.", "Okay.", "I see.", "Sure.", "Yes.", "No.", "Thank you.",
                   "That sounds good.", "Really?")
PUNCTUATION = ("?", "!", "...", ".")
REPEATS = 4
_NOT_WORD = re.compile(r"[^\w\s]")
_SPACED = re.compile(r"\w\s+[.,?!]")
_ATTACHED = re.compile(r"(\w)([.,?!])")

Replies = dict[str, list["str | None"]]  # kind or control -> one reply per case (None: not built)


def rng_for(seed: int, name: str, index: int) -> random.Random:
    """The random stream of reply ``name`` for case ``index``."""
    return random.Random(f"{seed}:{name}:{index}")


def salad(case: Case, rng: random.Random) -> str | None:
    return context_salad(case.context, max(1, len(words(case.reply))), rng) or None


def gibberish(case: Case, rng: random.Random) -> str:
    length = max(1, len(words(case.reply)))
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 7)))
                    for _ in range(length))


def generic(case: Case, rng: random.Random) -> str:
    reply = rng.choice(GENERIC_REPLIES)
    return _ATTACHED.sub(r"\1 \2", reply) if _SPACED.search(case.reply) else reply


def lowercase(case: Case, rng: random.Random) -> str | None:
    return " ".join(_NOT_WORD.sub("", case.reply.lower()).split()) or None


def derangement(n: int, rng: random.Random) -> list[int]:
    """A random permutation of ``range(n)`` without fixed points (Sattolo's algorithm: one cycle)."""
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 elements, got {n}")
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.randrange(i)
        order[i], order[j] = order[j], order[i]
    return order


Builder = Callable[[Case, random.Random], "str | None"]
BUILDERS: dict[str, Builder] = {
    "echo_last": lambda case, rng: case.context[-1],
    "echo_own": lambda case, rng: case.context[-2] if len(case.context) >= 2 else None,
    "salad": salad,
    "generic": generic,
    "empty": lambda case, rng: "",
    "repeated": lambda case, rng: " ".join([case.reply] * REPEATS),
    "gibberish": gibberish,
    "punctuation": lambda case, rng: rng.choice(PUNCTUATION),
    "lowercase": lowercase,
    "continuation": lambda case, rng: f"{case.reply} {case.next_turn}" if case.next_turn else None,
}


def paraphrase(case: Case, rng: random.Random) -> str | None:
    """The registry's paraphraser on the reply (``None`` when no metric brings one)."""
    paraphraser = registry.paraphraser()
    return paraphraser(case.reply, rng.randrange(2 ** 31)) if paraphraser else None


def build(cases: Sequence[Case], seed: int = 0, names: Sequence[str] = BEHAVIOUR_KINDS + BEHAVIOUR_CONTROLS) -> Replies:
    """Every reply ``names`` lists (kinds and controls) for every case; a control equal to the
    reply is ``None``."""
    unknown = sorted(set(names) - set(BEHAVIOUR_KINDS) - set(BEHAVIOUR_CONTROLS))
    if unknown:
        raise ValueError(f"unknown kind(s) or control(s) {unknown}; kinds: {BEHAVIOUR_KINDS}, "
                         f"controls: {BEHAVIOUR_CONTROLS}")
    replies: Replies = {}
    for name in names:
        if name == "other_reply":
            order = derangement(len(cases), rng_for(seed, name, 0))
            replies[name] = [cases[j].reply for j in order]
            continue
        builder = paraphrase if name == "paraphrase" else BUILDERS[name]
        made = [builder(case, rng_for(seed, name, i)) for i, case in enumerate(cases)]
        if name in BEHAVIOUR_CONTROLS:
            made = [None if text == case.reply else text for text, case in zip(made, cases)]
        replies[name] = made
    return replies
