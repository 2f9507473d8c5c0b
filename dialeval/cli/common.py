"""What several ``dialeval`` commands share: ``--option`` parsing, the report arguments, the scoring input."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from dialeval.data import JudgmentItem, read_numbered_jsonl, record_hash


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``--option key=value``; values are JSON when they parse as JSON, else strings."""
    options = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--option expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def read_items(path: str | Path) -> tuple[list[dict], list[int], list[str]]:
    """The scoring input as item dicts (no human score needed), each item's file line and the hash
    of its record (:func:`dialeval.data.record_hash`)."""
    items, lines, hashes = [], [], []
    for line, row in read_numbered_jsonl(path):
        hashes.append(record_hash(row))
        row = {"score": 0.0, **row} if isinstance(row, dict) else row
        item = vars(JudgmentItem.from_dict(row, f"{path}:{line}"))
        item.pop("score")
        items.append(item)
        lines.append(line)
    if not items:
        raise ValueError(f"{path}: no records (expected one JSON object per line)")
    return items, lines, hashes


def metric_options(pairs: Sequence[str], metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--option [METRIC:]KEY=VALUE``: without ``METRIC:`` the option goes to the one metric compared."""
    options: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key = pair.split("=", 1)[0]
        if ":" in key:
            metric, rest = pair.split(":", 1)
        elif len(metrics) == 1:
            metric, rest = metrics[0], pair
        else:
            raise ValueError(f"--option {pair!r}: with several metrics write METRIC:KEY=VALUE")
        options.setdefault(metric, {}).update(parse_options([rest]))
    return options


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    """``--refresh``, ``--json``, ``--save`` and ``--markdown``, as ``compare`` and ``behaviour`` take them."""
    p.add_argument("--refresh", action="store_true", help="rescore instead of reading cached scores")
    p.add_argument("--json", action="store_true", help="print the JSON result instead of the Markdown report")
    p.add_argument("--save", metavar="FILE.json", help="also write the JSON result to this file")
    p.add_argument("--markdown", metavar="FILE.md", help="also write the Markdown report to this file")
