"""Data loaders: the multi-reference DailyDialog test set and human-judgment sets.

Human-judgment sets are read from ``$DIALEVAL_DATA`` (default: ``../shared/data`` beside the
checkout). Every benchmark reads them as :class:`JudgmentItem` s in one generic format, also
readable from any JSON-lines file (``dialeval score`` and ``dialeval benchmark`` inputs) with the
fields

* ``context`` -- the earlier turns, a non-empty list of non-empty strings (a string is one turn);
* ``response`` -- the rated or scored reply, a string; empty is allowed (a generation may be empty);
* ``references`` -- optional list of non-empty reference replies (multiref needs them);
* ``score`` -- the human rating, a number (benchmarks only);
* ``system`` -- optional name of the model that wrote the response;
* ``group`` -- optional: items with the same ``group`` are the responses to one query and its
  paraphrases, which holistic diversity scores together (without it, identical contexts group);
* ``id`` -- optional, copied to the output.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from dialeval.shipped import CHECKOUT_ROOT



def data_dir() -> Path:
    """``$DIALEVAL_DATA``, else ``../shared/data`` beside the checkout (a wheel ships no data)."""
    env = os.environ.get("DIALEVAL_DATA")
    return Path(env).expanduser() if env else CHECKOUT_ROOT.parent / "shared" / "data"


def data_file(*parts: str) -> Path:
    """A file under :func:`data_dir`; ``FileNotFoundError`` saying where it was looked for."""
    path = data_dir().joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"data file not found: {path} (set $DIALEVAL_DATA to the folder holding "
            f"{'/'.join(parts)}; the human-judgment sets and corpora are not part of dialeval's "
            "wheel, a checkout finds them in ../shared/data)"
        )
    return path


@dataclass
class JudgmentItem:
    """One human-rated response: the generic benchmark format."""

    context: list[str]
    response: str
    score: float
    references: list[str] = field(default_factory=list)
    system: Optional[str] = None
    id: Optional[str] = None
    group: Optional[str] = None

    @classmethod
    def from_dict(cls, row: dict, where: str) -> "JudgmentItem":
        """Validate one record (see the module docstring); ``ValueError`` starting with ``where``."""
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
        missing = [k for k in ("context", "response", "score") if k not in row]
        if missing:
            raise ValueError(f"{where}: missing field(s) {missing}")
        context = row["context"]
        if isinstance(context, str):
            context = [context]
        if not isinstance(context, list) or not context or not all(isinstance(t, str) for t in context):
            raise ValueError(f"{where}: 'context' must be a non-empty list of strings")
        if not all(t.strip() for t in context):
            raise ValueError(f"{where}: 'context' turn {[t.strip() for t in context].index('')} is empty")
        if not isinstance(row["response"], str):
            raise ValueError(f"{where}: 'response' must be a string, got {row['response']!r}")
        try:
            score = float(row["score"])
        except (TypeError, ValueError):
            raise ValueError(f"{where}: 'score' must be a number, got {row['score']!r}") from None
        refs = row.get("references")
        refs = [refs] if isinstance(refs, str) else ([] if refs is None else refs)
        if not isinstance(refs, list) or not all(isinstance(r, str) and r.strip() for r in refs):
            raise ValueError(f"{where}: 'references' must be a list of non-empty strings, got {row['references']!r}")
        group = row.get("group")
        return cls(context, row["response"], score, list(refs), row.get("system"), row.get("id"),
                   None if group is None else str(group))


def read_numbered_jsonl(path: str | Path) -> list[tuple[int, dict]]:
    """``(line number, record)`` for every non-blank line of a JSON-lines file; ``ValueError`` naming
    the line of a malformed record."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append((line_no, json.loads(line)))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{line_no}: not valid JSON ({e.msg})") from None
    return rows


def read_jsonl(path: str | Path) -> list[dict]:
    """Parse a JSON-lines file (blank lines skipped); ``ValueError`` naming the line of a malformed record."""
    return [row for _, row in read_numbered_jsonl(path)]


def completed_lines(path: Path) -> int:
    """Count finished JSON lines of a previous run; drop a half-written last line."""
    if not path.exists():
        return 0
    data = path.read_bytes()
    keep = data[: data.rfind(b"\n") + 1]
    if len(keep) != len(data):
        path.write_bytes(keep)
    return keep.count(b"\n")


def load_judgment_file(path: str | Path) -> list[JudgmentItem]:
    """The generic human-judgment JSONL format (see module docstring); errors name the file line."""
    items = [JudgmentItem.from_dict(r, f"{path}:{line}") for line, r in read_numbered_jsonl(path)]
    if not items:
        raise ValueError(f"{path}: no records (expected one JSON object per line)")
    return items


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


# FED data annotation names -> FED follow-up quality names (dialeval.fed), per level.
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


# GRADE (Huang et al. 2020) human-judgment sets: data set name -> folder under $DIALEVAL_DATA/grade/.
GRADE_SETS = {"convai2": "convai2", "dailydialog": "dailydialog", "empatheticdialogues": "empatheticdialogues",
              "empathetic": "empatheticdialogues"}


def load_grade(dataset: str) -> list[JudgmentItem]:
    """Huang et al. (2020) coherence ratings of one set (``convai2``, ``dailydialog``,
    ``empatheticdialogues`` / ``empathetic``; a ``grade-`` prefix is accepted): for every dialogue
    model folder under ``$DIALEVAL_DATA/grade/<set>/`` (sorted) the aligned 150-line files
    ``human_ctx.txt`` (turns split by ``|||``), ``human_hyp.txt``, ``human_ref.txt`` and
    ``human_score.txt`` (mean rating 1-5) as :class:`JudgmentItem` s with ``system`` = the model
    folder and ``id`` = ``"<set>/<model>/<line>"``."""
    name = dataset[len("grade-"):] if dataset.startswith("grade-") else dataset
    if name not in GRADE_SETS:
        raise ValueError(f"unknown GRADE data set {dataset!r}; choose from {sorted(GRADE_SETS)}")
    folder = GRADE_SETS[name]
    root = data_file("grade", "human_judgement.json").parent / folder
    if not root.is_dir():
        raise FileNotFoundError(f"GRADE data folder not found: {root}")
    items = []
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        columns = {
            part: data_file("grade", folder, model_dir.name, f"human_{part}.txt").read_text(encoding="utf-8").splitlines()
            for part in ("ctx", "hyp", "ref", "score")
        }
        sizes = {part: len(lines) for part, lines in columns.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"{model_dir}: files are not aligned (line counts {sizes})")
        for i, (ctx, hyp, ref, score) in enumerate(zip(*(columns[p] for p in ("ctx", "hyp", "ref", "score")))):
            items.append(JudgmentItem(
                context=[" ".join(t.split()) for t in ctx.split("|||")], response=hyp.strip(),
                score=float(score), references=[ref.strip()], system=model_dir.name,
                id=f"{folder}/{model_dir.name}/{i}",
            ))
    return items


def load_dataset(name_or_path: str | Path):
    """A human-judgment set (``"fed-turn"``, ``"grade-convai2"``, ... or a generic JSONL file) as a
    ``datasets.Dataset``; the sets and their columns are listed in :mod:`dialeval.judgments`."""
    from dialeval.judgments import load_dataset as load

    return load(name_or_path)
