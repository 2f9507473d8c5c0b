"""Training corpora readers (never the human-judgment sets).

* DailyDialog (Li et al. 2017): ``$DIALEVAL_DATA/corpora/dailydialog/dialogues_<split>.txt``,
  one dialogue a line, turns separated by ``__eou__``.
* Chit-chat (BYU PCC lab; PyPI ``chitchat-dataset``): 7,168 conversations whose messages carry
  persistent sender ids; consecutive messages of one sender form a turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from dialeval.data import data_file

DAILYDIALOG_SPLITS = ("train", "validation", "test")


def dailydialog(split: str = "train") -> list[list[str]]:
    """DailyDialog dialogues of ``split`` as lists of turns (whitespace-normalised)."""
    if split not in DAILYDIALOG_SPLITS:
        raise ValueError(f"unknown DailyDialog split {split!r}; choose from {DAILYDIALOG_SPLITS}")
    path = data_file("corpora", "dailydialog", f"dialogues_{split}.txt")
    dialogues = []
    for line in path.read_text(encoding="utf-8").splitlines():
        turns = [" ".join(t.split()) for t in line.split("__eou__")]
        turns = [t for t in turns if t]
        if len(turns) >= 2:
            dialogues.append(turns)
    return dialogues


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str


def chitchat() -> list[list[Turn]]:
    """The chit-chat conversations as lists of speaker turns (needs ``chitchat-dataset``)."""
    try:
        import chitchat_dataset
    except ImportError as e:
        raise FileNotFoundError("`pip install --no-deps chitchat-dataset` (install.sh does it)") from e
    raw = json.loads((Path(chitchat_dataset.__file__).parent / "dataset.json").read_text(encoding="utf-8"))
    conversations = []
    for convo in raw.values():
        turns = []
        for group in convo["messages"]:
            text = " ".join(" ".join(m["text"].split()) for m in group if m.get("text", "").strip())
            if text:
                turns.append(Turn(group[0]["sender"], text))
        if len(turns) >= 2:
            conversations.append(turns)
    return conversations


def iter_pairs(dialogues: list[list[str]]) -> Iterator[tuple[str, str]]:
    """Every (query, response) pair of consecutive turns."""
    for turns in dialogues:
        yield from zip(turns[:-1], turns[1:])
