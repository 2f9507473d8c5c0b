"""The generic JSON-lines benchmark: any metric on any rated set in the format of :mod:`dialeval.data`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.core.degenerate import floors_as_missing
from dialeval.stats.correlation import correlate_all
from dialeval.data import items_as_dicts, load_judgment_file
from dialeval.core.tables import fmt, fmt_p, format_table


def generic(metric: str, path: str | Path, progress: bool = True, **options: Any) -> dict[str, Any]:
    """Any metric on a generic human-judgment JSONL file: one correlation per sub-metric. Items are
    scored in chunks behind a progress bar with an estimate (scores do not depend on the chunks); a
    flagged item's floor value is left out (:func:`dialeval.core.degenerate.floors_as_missing`)."""
    from dialeval.scoring import score_all

    items = load_judgment_file(path)
    scores = score_all(metric, items_as_dicts(items), options, progress=progress)
    per_item, signature = scores
    per_item = floors_as_missing(per_item, scores.flags, registry.spec(metric).scales())
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
