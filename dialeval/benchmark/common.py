"""What every benchmark shares: items as dicts, correlating a table of per-item scores, the generic
JSON-lines benchmark (any metric on any rated set in the format of :mod:`dialeval.data`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from dialeval.correlation import correlate
from dialeval.data import JudgmentItem, load_judgment_file
from dialeval.tables import fmt, fmt_p, format_table


def items_as_dicts(items: Sequence[JudgmentItem]) -> list[dict]:
    return [vars(it) for it in items]


def correlate_all(per_item: dict[str, list[float]], human: Sequence[float]) -> dict[str, dict]:
    return {name: correlate(scores, human).as_dict() for name, scores in per_item.items()}


def generic(metric: str, path: str | Path, progress: bool = True, **options: Any) -> dict[str, Any]:
    """Any metric on a generic human-judgment JSONL file: one correlation per sub-metric. Items are
    scored in chunks behind a progress bar with an estimate (scores do not depend on the chunks)."""
    from dialeval.scoring import score_all

    items = load_judgment_file(path)
    per_item, signature = score_all(metric, items_as_dicts(items), options, progress=progress)
    return {
        "dataset": str(path), "metric": metric, "n": len(items), "signature": signature,
        "correlations": correlate_all(per_item, [it.score for it in items]),
    }


def format_generic(result: dict[str, Any]) -> str:
    rows = [
        [name, fmt(c["spearman"]), fmt_p(c["spearman_p"]), fmt(c["pearson"]), fmt_p(c["pearson_p"]), c["n"]]
        for name, c in result["correlations"].items()
    ]
    return "\n".join([
        f"{result['metric']} on {result['dataset']} (n={result['n']})",
        format_table(["sub-metric", "spearman", "p", "pearson", "p", "n"], rows),
        result["signature"],
    ])
