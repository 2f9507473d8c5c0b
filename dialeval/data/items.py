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

import codecs
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from dialeval.models.shipped import CHECKOUT_ROOT

_SURROGATE = re.compile(r"[\ud800-\udfff]")  # lone UTF-16 halves: not text

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
        _refuse_surrogates(row, where)
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


def items_as_dicts(items: Sequence[JudgmentItem]) -> list[dict]:
    """Judgment items as the plain dicts runners take."""
    return [vars(it) for it in items]


def lone_surrogate_at(value: Any, where: str = "") -> str | None:
    """Where (``'context'[1]``, ``'response'``, a key) ``value`` holds a lone UTF-16 surrogate (a JSON
    ``"\\ud800"`` escape without its pair, which no UTF-8 file can hold), else ``None``."""
    if isinstance(value, str):
        return (where or "a value") if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(str(key)):
                return f"the key {ascii(key)}" + (f" of {where}" if where else "")
            found = lone_surrogate_at(item, f"{where}[{key!r}]" if where else repr(key))
            if found:
                return found
    if isinstance(value, list):
        return next((f for i, item in enumerate(value) if (f := lone_surrogate_at(item, f"{where}[{i}]"))), None)
    return None


def _decoded(raw: bytes, path: str | Path, line_no: int) -> str:
    """One line of a JSON-lines file as text: UTF-8, a byte-order mark on the first line dropped;
    ``ValueError`` naming the file line and the byte that is not UTF-8."""
    if line_no == 1 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}:{line_no}: not valid UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1}); "
                         "save the file as UTF-8") from None


def read_numbered_jsonl(path: str | Path) -> list[tuple[int, Any]]:
    """``(line number, record)`` for every non-blank line of a UTF-8 JSON-lines file (a byte-order
    mark is accepted); ``ValueError`` naming the line of a malformed record, of bytes that are not
    UTF-8, or of a lone surrogate escape (and its field)."""
    rows = []
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, 1):
            line = _decoded(raw, path, line_no)
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{line_no}: not valid JSON ({e.msg})") from None
            _refuse_surrogates(row, f"{path}:{line_no}")
            rows.append((line_no, row))
    return rows


def _refuse_surrogates(row: Any, where: str) -> None:
    """``ValueError`` naming ``where`` and the field of a lone surrogate in ``row``."""
    found = lone_surrogate_at(row)
    if found:
        raise ValueError(f"{where}: {found} holds a lone surrogate escape (\\ud800-\\udfff without its pair), "
                         "which is not text; fix the producer of the file")


def record_hash(row: Any) -> str:
    """The identity of one input record: sha256 of its canonical JSON (sorted keys, no spaces), the
    first 16 hex digits. Reformatting a line does not change it; editing a field does."""
    text = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


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
