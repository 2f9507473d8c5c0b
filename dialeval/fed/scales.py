"""Range, direction and meaning of every FED sub-score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.core.scales import Scale, raw

# The value a flagged response counts as on an unbounded FED score, and the clip of a real one
# (dialeval.core.scales). Measured with the bundled adapter: every variant stays within -14..+79 on
# a plain reply and five odd ones (docs/inputs.md), so the floor is far below any reply that says something.
FLOOR = -1000.0

# dialeval.fed.scorer reads the same file (importing it here would load torch)
FOLLOWUPS_PATH = Path(__file__).resolve().parent / "followups.json"

# What each FED quality asks of the response (turn level) or of the system's side (dialog level).
_FED_QUESTIONS = {
    "turn": {
        "interesting": "is the response interesting",
        "engaging": "does the response make the partner want to go on",
        "specific": "is the response specific rather than generic",
        "relevant": "is the response on topic",
        "correct": "does the response understand the partner",
        "semantically appropriate": "does the response make sense here",
        "understandable": "is the response understandable",
        "fluent": "is the response fluent",
    },
    "dialog": {
        "coherent": "does the system stay coherent, without topic jumps",
        "error recovery": "does the system recover from confusion",
        "consistent": "does the system avoid contradicting itself",
        "diverse": "does the system avoid repeating itself",
        "depth": "does the system go into a topic rather than hop between topics",
        "likeable": "is the system likeable",
        "understand": "does the system understand the partner",
        "flexible": "does the system adapt to what the partner wants to talk about",
        "informative": "does the system give information",
        "inquisitive": "does the system ask questions",
    },
}


def _fed_followups() -> dict[str, dict[str, dict[str, list[str]]]]:
    data = json.loads(FOLLOWUPS_PATH.read_text(encoding="utf-8"))
    return {"turn": data["turn_level"], "dialog": data["dialog_level"]}


def _fed_quality(level: str, quality: str, positives: list[str]) -> Scale:
    """The positive follow-ups' log-likelihood minus the negative ones' (sums or means of values ``<= 0``;
    the reference variant: mean losses ``>= 0`` of the negatives minus the positives'): unbounded. A
    quality without positive follow-ups keeps the negatives' term alone, so it is 0 or more."""
    question = f"FED {level} level: {_FED_QUESTIONS[level][quality]}?"
    if positives:
        return raw(f"{question} log P(positive follow-ups) - log P(negative ones)", floor=FLOOR)
    return raw(f"{question} -log P(negative follow-ups) (it has no positive ones)", low=0.0)


def scales() -> dict[str, Scale]:
    out: dict[str, Scale] = {}
    for level, qualities in _fed_followups().items():
        for quality, lists in qualities.items():
            out[f"{level}_{quality.replace(' ', '_')}"] = _fed_quality(level, quality, lists["positive"])
        out[f"{level}_overall"] = raw(f"FED {level} level: mean of the {len(qualities)} {level}-level qualities",
                                    floor=FLOOR)
    return out
