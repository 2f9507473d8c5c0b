"""The contexts of the behavioural suite and their real replies: :class:`Case`.

By default ``n`` contexts are drawn from DailyDialog's *test* split (Li et al. 2017; never a
training split of the bundled models): among the dialogues of at least four turns, ``n`` are drawn
in a seeded shuffled order (so the first ``m`` of ``n`` cases are the ``m`` cases of a smaller run, and
their scores are shared through the score cache), and in each a seeded reply position ``t`` with
``2 <= t <= len - 2``, so
that the responder has an earlier turn of its own (``context[-2]``, the ``echo_own`` reply) and the
dialogue goes on after the reply (``next_turn``, the ``continuation`` control).

A user's own file (:func:`read_cases`) is JSON lines with ``context`` (a list of turns, or one
string), ``response`` (the real reply, non-empty) and, optionally, ``next_turn`` (a further turn of
the same dialogue); other fields are ignored. Errors name the file line.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from dialeval.data.corpora import dailydialog
from dialeval.data import JudgmentItem, read_numbered_jsonl

DEFAULT_N = 200
DEFAULT_SPLIT = "test"
MIN_TURNS = 4  # two turns before the reply, the reply, one turn after it


@dataclass(frozen=True)
class Case:
    """One context of the suite: its turns, the real reply, the dialogue's next turn (``None``:
    unknown) and where it comes from (a file line or a DailyDialog dialogue)."""

    context: tuple[str, ...]
    reply: str
    next_turn: str | None = None
    where: str = ""


def dailydialog_cases(n: int = DEFAULT_N, seed: int = 0, split: str = DEFAULT_SPLIT) -> list[Case]:
    """``n`` cases from DailyDialog ``split`` (module docstring); the same seed gives the same cases."""
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2 (other_reply needs another dialogue), got {n!r}")
    dialogues = dailydialog(split)
    eligible = [i for i, turns in enumerate(dialogues) if len(turns) >= MIN_TURNS]
    if n > len(eligible):
        raise ValueError(f"n = {n}, but DailyDialog {split} has only {len(eligible)} dialogues of "
                         f">= {MIN_TURNS} turns")
    order = list(eligible)
    random.Random(f"{seed}:contexts").shuffle(order)
    cases = []
    for index in order[:n]:
        turns = dialogues[index]
        t = random.Random(f"{seed}:turn:{index}").randint(2, len(turns) - 2)
        cases.append(Case(tuple(turns[:t]), turns[t], turns[t + 1],
                          f"dailydialog {split} dialogue {index + 1} turn {t + 1}"))
    return cases


def read_cases(path: str | Path, n: int | None = None) -> list[Case]:
    """The cases of a JSON-lines file (module docstring), the first ``n`` when given."""
    cases = []
    for line, row in read_numbered_jsonl(path):
        where = f"{path}:{line}"
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
        item = JudgmentItem.from_dict({**row, "score": 0.0}, where)
        if not item.response.strip():
            raise ValueError(f"{where}: 'response' is empty: the real reply must say something")
        next_turn = row.get("next_turn")
        if next_turn is not None and (not isinstance(next_turn, str) or not next_turn.strip()):
            raise ValueError(f"{where}: 'next_turn' must be a non-empty string, got {next_turn!r}")
        cases.append(Case(tuple(item.context), item.response, next_turn, where))
        if n is not None and len(cases) == n:
            break
    if len(cases) < 2:
        raise ValueError(f"{path}: {len(cases)} record(s); the suite needs at least 2 (other_reply takes "
                         "another line's reply)")
    return cases
