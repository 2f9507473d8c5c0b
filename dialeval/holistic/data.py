"""Pang et al. (2020) human judgments, ``$DIALEVAL_DATA/holistic/``, and their human-judgment items.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from dialeval.data import JudgmentItem, data_file

HOLISTIC_SETS = {
    "coherence": ("context_data_release.csv",),
    "fluency": ("fluency_data_release.csv",),
    "consistency": ("consistency_CTG.txt", "consistency_WS.txt"),
}
_CONSISTENCY_SCORE = re.compile(r"SCORE(?: IS)?:\s*(\d+)")


def _holistic_csv(path: Path, with_query: bool) -> list[dict]:
    items = []
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            n_text = 3 if with_query else 2
            item = {"id": row[0], "response": row[n_text - 1], "ratings": [float(v) for v in row[n_text:]]}
            if with_query:
                item["query"] = row[1]
            items.append(item)
    return items


def _holistic_consistency(path: Path, source: str) -> list[dict]:
    """Parse ``sample N:`` blocks: ``history:`` (first turn), tab-indented further turns, ``pred:``
    (the rated reply, continuing the alternation) and ``YOUR SCORE: s``."""
    items: list[dict] = []
    current: dict | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text.startswith("sample "):
            current = {"id": f"{source}-{text[len('sample '):].rstrip(':')}", "history": [], "source": source}
        elif current is None or not text:
            continue
        elif text.startswith("history:"):
            current["history"].append(text[len("history:"):].strip())
        elif text.startswith("pred:"):
            current["response"] = text[len("pred:"):].strip()
        elif (match := _CONSISTENCY_SCORE.search(text)) is not None:
            current["ratings"] = [float(match.group(1))]
            items.append(current)
            current = None
        else:
            current["history"].append(text)
    return items


def load_holistic(aspect: str) -> list[dict]:
    """Pang et al. (2020) human judgments in ``$DIALEVAL_DATA/holistic/``.

    * ``coherence``: 200 items ``{id, query, response, ratings}`` (10 ratings 1-5 each);
    * ``fluency``: 200 items ``{id, response, ratings}`` (10 ratings);
    * ``consistency``: 100 CTG + 100 WS items ``{id, history, response, ratings, source}``
      (one rating; the history's turns alternate and the response continues them).
    """
    if aspect not in HOLISTIC_SETS:
        raise ValueError(f"holistic human-judgment sets exist for {sorted(HOLISTIC_SETS)}, not {aspect!r}")
    if aspect == "consistency":
        return [
            item for name in HOLISTIC_SETS[aspect]
            for item in _holistic_consistency(data_file("holistic", name), name.split("_")[1].split(".")[0])
        ]
    return _holistic_csv(data_file("holistic", HOLISTIC_SETS[aspect][0]), with_query=aspect == "coherence")


def judgments(aspect: str) -> list[JudgmentItem]:
    """The Pang et al. set of ``aspect`` as generic items: the history (or the query) as ``context``,
    the mean rating as ``score``, the source (CTG / WS) as ``system``."""
    items = []
    for it in load_holistic(aspect):
        context = it.get("history") or ([it["query"]] if "query" in it else [])
        score = sum(it["ratings"]) / len(it["ratings"])
        items.append(JudgmentItem(list(context), it["response"], score, system=it.get("source"), id=it["id"]))
    return items
