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
    scored in saved chunks with per-item progress and an estimate, through the score cache
    (:func:`dialeval.scoring.cache.scores_for`: a re-run or a run after Ctrl-C scores only what is
    new); a flagged item's floor value is left out (:func:`dialeval.core.degenerate.floors_as_missing`)."""
    from dialeval.scoring.cache import scores_for
    from dialeval.scoring.chunks import check_options

    items = load_judgment_file(path)
    check_options(metric, options)
    entry = scores_for(metric, options, items_as_dicts(items), progress=progress, desc=f"{metric} on {Path(path).name}")
    signature = entry["signature"]
    per_item = floors_as_missing(entry["per_item"], entry["flags"], registry.spec(metric).scales())
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
