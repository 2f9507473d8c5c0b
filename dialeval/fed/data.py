"""The FED data set (Mehri & Eskenazi 2020), ``$DIALEVAL_DATA/fed/fed_data.json``, and its human-judgment items.
"""

from __future__ import annotations

import json
import re

from dialeval.data import JudgmentItem, data_file

# FED data annotation names -> FED follow-up quality names (dialeval.fed.scorer), per level.
FED_QUALITY_NAMES = {
    "turn": {
        "Interesting": "interesting", "Engaging": "engaging", "Specific": "specific",
        "Relevant": "relevant", "Correct": "correct",
        "Semantically appropriate": "semantically appropriate",
        "Understandable": "understandable", "Fluent": "fluent", "Overall": "overall",
    },
    "dialog": {
        "Coherent": "coherent", "Error recovery": "error recovery", "Consistent": "consistent",
        "Diverse": "diverse", "Depth": "depth", "Likeable": "likeable",
        "Understanding": "understand", "Flexible": "flexible", "Informative": "informative",
        "Inquisitive": "inquisitive", "Overall": "overall",
    },
}
_SPEAKER_PREFIX = re.compile(r"^(User|System):\s?")


def _fed_turns(text: str) -> list[str]:
    return [_SPEAKER_PREFIX.sub("", line).strip() for line in text.split("\n") if line.strip()]


def load_fed(level: str) -> list[dict]:
    """The FED data set (Mehri & Eskenazi 2020): 375 turn-level or 125 dialog-level items.

    Each item: ``turns`` (speaker prefixes ``User:``/``System:`` removed; for turn level the rated
    system response is the last turn), ``system`` (Meena, Mitsuku or Human) and ``ratings``
    (quality name -> mean of the annotators' numeric ratings; "N/A ..." strings are skipped per
    rating, and a quality with no numeric rating is NaN).
    """
    if level not in FED_QUALITY_NAMES:
        raise ValueError(f"FED level must be 'turn' or 'dialog', got {level!r}")
    names = FED_QUALITY_NAMES[level]
    items = []
    for row in json.loads(data_file("fed", "fed_data.json").read_text(encoding="utf-8")):
        if ("response" in row) != (level == "turn"):
            continue
        turns = _fed_turns(row["context"]) + (_fed_turns(row["response"]) if level == "turn" else [])
        ratings = {}
        for key, values in row["annotations"].items():
            numeric = [float(v) for v in values if isinstance(v, (int, float))]
            ratings[names[key]] = sum(numeric) / len(numeric) if numeric else float("nan")
        items.append({"turns": turns, "system": row.get("system"), "ratings": ratings})
    return items


def judgments(level: str) -> list[JudgmentItem]:
    """The FED set of ``level`` as generic items: the conversation before the rated turn as
    ``context`` (dialog level: the whole conversation in ``context + [response]``), the mean
    "Overall" rating as ``score``."""
    return [
        JudgmentItem(it["turns"][:-1], it["turns"][-1], it["ratings"]["overall"], system=it["system"], id=str(i))
        for i, it in enumerate(load_fed(level))
    ]
