"""The five papers' published numbers, read from ``paper_tables.json`` in the shared data folder.

``$DIALEVAL_DATA/paper_tables.json`` (guide: ``paper_tables.md`` beside it) holds every results table
of the five papers as ``paper -> table id -> {caption, columns, rows, notes}``; each row is a list
aligned with ``columns``, ``null`` where the printed cell is empty or unreadable. Benchmarks print
these values beside the measured ones; they are never a training target.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from dialeval.data.items import data_file

PAPERS = {
    "gupta2019_multiref": "Gupta et al. 2019, SIGDIAL",
    "mehri2020_fed": "Mehri & Eskenazi 2020, SIGDIAL",
    "pang2020_holistic": "Pang et al. 2020, ACL",
    "huang2020_grade": "Huang et al. 2020, EMNLP",
    "bak2020_ssrem": "Bak & Oh 2020, ACL",
}


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, Any]:
    return json.loads(data_file("paper_tables.json").read_text(encoding="utf-8"))


def table(paper: str, table_id: str) -> dict[str, Any]:
    """One published table ``{caption, columns, rows, notes}``; ``KeyError`` naming what exists."""
    tables = _tables()
    if paper not in tables:
        raise KeyError(f"no paper {paper!r} in paper_tables.json; have {sorted(PAPERS)}")
    if table_id not in tables[paper]:
        raise KeyError(f"{paper} has no table {table_id!r}; have {sorted(tables[paper])}")
    return tables[paper][table_id]


def value(paper: str, table_id: str, row: str, column: str) -> float | None:
    """The published cell ``row`` x ``column`` (``None`` where the paper prints nothing readable)."""
    t = table(paper, table_id)
    if row not in t["rows"]:
        raise KeyError(f"{paper} {table_id} has no row {row!r}; rows: {list(t['rows'])}")
    if column not in t["columns"]:
        raise KeyError(f"{paper} {table_id} has no column {column!r}; columns: {t['columns']}")
    return t["rows"][row][t["columns"].index(column)]


def source(paper: str, table_id: str) -> str:
    """``"Gupta et al. 2019, SIGDIAL, table4"``: how a printed table names where its numbers come from."""
    return f"{PAPERS.get(paper, paper)}, {table_id.replace('table', 'Table ').replace('_', ' ')}"
