"""Gupta et al. (2019) data: the multi-reference DailyDialog test set (``multireftest.json``) and the
500 rated responses (``mturk_rating_processed_output.csv``), both under ``$DIALEVAL_DATA/multiref/``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable

from dialeval.data import JudgmentItem, data_file, read_jsonl

def _multiref_dialogues(path: Path | None = None) -> list[dict]:
    return read_jsonl(path or data_file("multiref", "multireftest.json"))


def iter_multiref_contexts(path: Path | None = None) -> Iterable[dict]:
    """Every (context, references) pair of the multi-reference DailyDialog test set.

    ``id`` is ``"<dialogue index>_<turn index>"`` (the authors' context id); ``references[0]`` is
    the original DailyDialog reply, the other four were written by crowd workers.
    """
    for dialogue in _multiref_dialogues(path):
        turns = dialogue["dialogue"]
        for j, turn in enumerate(turns):
            if turn.get("responses"):
                yield {
                    "id": f"{dialogue['index']}_{j}",
                    "context": [t["text"] for t in turns[: j + 1]],
                    "references": list(turn["responses"]),
                }


def load_multiref_test(path: str | Path | None = None):
    """The multi-reference DailyDialog test set (6,740 contexts x 5 references) as a Dataset.

    Columns: ``id``, ``context`` (list of turns), ``references`` (list of 5 replies).
    """
    from datasets import Dataset

    rows = list(iter_multiref_contexts(Path(path) if path else None))
    return Dataset.from_dict({k: [r[k] for r in rows] for k in ("id", "context", "references")})


def load_multiref_mturk(multi_reference: bool = True) -> list[JudgmentItem]:
    """Gupta et al.'s 500 rated responses (100 contexts x 5 systems), mean appropriateness 1-5.

    References: with ``multi_reference`` the file's ``all_references`` (4 replies: the original
    and 3 crowd-written ones), else only the original reply (``prevgt``), the single-reference
    setting of the paper.
    """
    path = data_file("multiref", "mturk_rating_processed_output.csv")
    items = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            refs = row["all_references"].split("\t") if multi_reference else [row["prevgt"]]
            items.append(
                JudgmentItem(
                    context=row["context"].split("||||"),
                    response=row["response"],
                    score=float(row["human_average_rating"]),
                    references=refs,
                    system=row["model"],
                    id=row["context_id"],
                )
            )
    return items


def with_five_references(items: list[JudgmentItem]) -> list[JudgmentItem]:
    """Gupta et al.'s five references for the rated items of :func:`load_multiref_mturk`: the
    ``responses`` of the item's context in ``multireftest.json`` (the original reply + 4 crowd
    replies; the CSV's ``all_references`` lacks the fourth crowd reply)."""
    five = {c["id"]: c["references"] for c in iter_multiref_contexts()}
    for item in items:
        if item.id not in five:
            raise ValueError(f"context_id {item.id!r} is not in multireftest.json")
        item.references = list(five[item.id])
    return items
