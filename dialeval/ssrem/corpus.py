"""SSREM's training corpus: speaker-tagged conversations (JSON lines or PyPI ``chitchat-dataset``)
and their 80/10/10 split by conversation (a content hash, so it does not depend on the corpus order)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Sequence

from dialeval.data.corpora import Turn

SPLITS = ("train", "validation", "test")
SPLIT_SEED = "dialeval-ssrem-split"


def read_conversations(path: str | os.PathLike) -> list[list[Turn]]:
    """Conversations from JSON lines ``{"turns": [{"speaker": "...", "text": "..."}, ...]}``.

    Raises ``ValueError`` naming the line of a record without a list of turns or a turn without a
    string ``speaker`` and a non-empty string ``text``. Conversations of fewer than 2 turns are kept
    (they only serve as negatives).
    """
    from dialeval.data import read_jsonl

    conversations = []
    for line, row in enumerate(read_jsonl(path), 1):
        turns = row.get("turns") if isinstance(row, dict) else None
        if not isinstance(turns, list) or not turns:
            raise ValueError(f"{path}:{line}: expected {{\"turns\": [{{\"speaker\": ..., \"text\": ...}}, ...]}}")
        conversation = []
        for j, turn in enumerate(turns):
            speaker = turn.get("speaker") if isinstance(turn, dict) else None
            text = turn.get("text") if isinstance(turn, dict) else None
            if not isinstance(speaker, str) or not speaker or not isinstance(text, str) or not text.strip():
                raise ValueError(f"{path}:{line}: turn {j} needs a string 'speaker' and a non-empty 'text', got {turn!r}")
            conversation.append(Turn(speaker, " ".join(text.split())))
        conversations.append(conversation)
    return conversations


def load_corpus(name: str) -> list[list[Turn]]:
    """``"chitchat"`` (PyPI ``chitchat-dataset``, :func:`dialeval.data.corpora.chitchat`) or a JSONL file
    for :func:`read_conversations`."""
    if name == "chitchat":
        from dialeval.data.corpora import chitchat

        return chitchat()
    if not Path(name).is_file():
        raise FileNotFoundError(f"corpus {name!r} is neither 'chitchat' nor a JSONL file of conversations")
    return read_conversations(name)


def split_of(conversation: Sequence[Turn], seed: str = SPLIT_SEED) -> str:
    """80/10/10 train/validation/test by conversation, from a hash of its speakers and texts (stable
    under reordering of the corpus)."""
    key = "\n".join(f"{t.speaker}\t{t.text}" for t in conversation)
    bucket = int(hashlib.sha256(f"{seed}\n{key}".encode()).hexdigest(), 16) % 10
    return "train" if bucket < 8 else "validation" if bucket == 8 else "test"


def split_corpus(conversations: Sequence[Sequence[Turn]], seed: str = SPLIT_SEED) -> dict[str, list]:
    parts: dict[str, list] = {s: [] for s in SPLITS}
    for conversation in conversations:
        parts[split_of(conversation, seed)].append(list(conversation))
    return parts
