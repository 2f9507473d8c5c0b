"""Training corpora readers (never the human-judgment sets).

* DailyDialog (Li et al. 2017): ``$DIALEVAL_DATA/corpora/dailydialog/dialogues_<split>.txt``,
  one dialogue a line, turns separated by ``__eou__``.
* Chit-chat (BYU PCC lab; PyPI ``chitchat-dataset``): 7,168 conversations whose messages carry
  persistent sender ids; consecutive messages of one sender form a turn.
* NLI pairs (:func:`nli_pairs`, for the NLI classifier of Holistic's logical self-consistency):
  ``$DIALEVAL_DATA/corpora/nli/``, see :data:`NLI_FILES`.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

from dialeval.data.items import data_file, read_jsonl

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


NLI_LABELS = ("entailment", "neutral", "contradiction")
# source -> (file under corpora/nli/, premise column, hypothesis column, label column).
NLI_FILES = {
    "mnli": ("mnli_dev_matched.jsonl", "premise", "hypothesis", "label"),  # MultiNLI dev matched
    "snli": ("snli_dev.jsonl", "premise", "hypothesis", "label"),  # SNLI dev (no "-" labels left)
    "anli": ("anli_test.jsonl", "premise", "hypothesis", "label"),  # ANLI R1-R3 test
    "sick": ("SICK.txt", "sentence_A", "sentence_B", "entailment_judgment"),  # SICK, tab-separated
}
NLI_SOURCES = tuple(NLI_FILES)


class NLIPair(NamedTuple):
    premise: str
    hypothesis: str
    label: str  # one of NLI_LABELS
    source: str  # one of NLI_SOURCES


def _nli_rows(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return read_jsonl(path)
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def nli_pairs(sources: Sequence[str] = NLI_SOURCES) -> list[NLIPair]:
    """Three-way NLI pairs ``(premise, hypothesis, label, source)`` from ``$DIALEVAL_DATA/corpora/nli/``.

    Labels as stored: ``entailment`` / ``neutral`` / ``contradiction`` (MNLI, SNLI, ANLI) and
    ``ENTAILMENT`` / ``NEUTRAL`` / ``CONTRADICTION`` (SICK's ``entailment_judgment``, sentence A as
    premise, B as hypothesis); both are lower-cased into :data:`NLI_LABELS`. Any other label raises
    ``ValueError`` naming the file and row. Texts are whitespace-normalised.

    ``rte_train_dev.jsonl`` is not read: RTE is two-way (``entailment`` / ``not_entailment``) and
    ``not_entailment`` lumps neutral and contradiction together, so it cannot be mapped to the
    three-way labels without inventing them; its entailment pairs alone would only skew the class
    balance.
    """
    unknown = sorted(set(sources) - set(NLI_FILES))
    if unknown:
        raise ValueError(f"unknown NLI source(s) {unknown}; choose from {NLI_SOURCES}")
    pairs = []
    for source in sources:
        file, premise, hypothesis, label = NLI_FILES[source]
        path = data_file("corpora", "nli", file)
        for i, row in enumerate(_nli_rows(path), 1):
            gold = str(row[label]).strip().lower()
            if gold not in NLI_LABELS:
                raise ValueError(f"{path} row {i}: label {row[label]!r} is not one of {NLI_LABELS}")
            pairs.append(NLIPair(" ".join(row[premise].split()), " ".join(row[hypothesis].split()), gold, source))
    return pairs
