"""Gupta et al. 2019, Table 4: multi-reference metrics vs. human appropriateness ratings."""

from __future__ import annotations

from typing import Any

from dialeval import paper
from dialeval.benchmark.common import correlate_all, items_as_dicts
from dialeval.data import load_multiref_mturk
from dialeval.runners import get_runner
from dialeval.tables import fmt, fmt_p, format_table


def multiref_mturk(**options: Any) -> dict[str, Any]:
    """Gupta et al. 2019 Table 4: single (original reply) vs. multiple references, 500 ratings."""
    run = get_runner("multiref")
    out: dict[str, Any] = {"dataset": "multiref-mturk", "metric": "multiref"}
    for setting, multi in (("single", False), ("multi", True)):
        items = load_multiref_mturk(multi_reference=multi)
        per_item, signature = run(items_as_dicts(items), **options)
        out[setting] = correlate_all(per_item, [it.score for it in items])
        out[f"signature_{setting}"] = signature
    out["n"] = len(items)
    out["paper"] = paper.table("gupta2019_multiref", "table4")
    return out


def format_multiref_mturk(result: dict[str, Any]) -> str:
    paper = result["paper"]
    rows = []
    for name, single in result["single"].items():
        multi = result["multi"][name]
        rows.append([
            name,
            fmt(single["spearman"]), fmt_p(single["spearman_p"]),
            fmt(single["pearson"]), fmt_p(single["pearson_p"]),
            fmt(multi["spearman"]), fmt_p(multi["spearman_p"]),
            fmt(multi["pearson"]), fmt_p(multi["pearson_p"]),
            fmt((paper.get("spearman_single") or {}).get(name)),
            fmt((paper.get("spearman_multi") or {}).get(name)),
        ])
    headers = ["metric", "single rho", "p", "single r", "p", "multi rho", "p", "multi r", "p",
               "paper single rho", "paper multi rho"]
    return "\n".join([
        f"Correlation with human appropriateness ratings (n={result['n']}), single vs. multiple references",
        format_table(headers, rows),
        f"single: {result['signature_single']}",
        f"multi:  {result['signature_multi']}",
        f"paper: {paper.get('source', 'n/a')}" + ("" if paper.get("spearman_multi") else
            " -- values not transcribed (no readable copy of the table offline)"),
    ])
