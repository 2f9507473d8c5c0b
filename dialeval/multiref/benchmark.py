"""Gupta et al. 2019, Table 4: multi-reference metrics vs. human appropriateness ratings.

The 500 rated responses (100 contexts x 5 systems) come from ``mturk_rating_processed_output.csv``.
Single reference: the original DailyDialog reply (``prevgt``). Multiple references, as in the paper
(``references="five"``, default): the original reply plus the four crowd-written ones, i.e. the
five ``responses`` of turn ``t`` of dialogue ``d`` in ``multireftest.json`` for the CSV's
``context_id`` ``"<d>_<t>"`` (``responses[0]`` is the original reply). The CSV's own
``all_references`` column holds only four of them (``responses[1..3]`` then ``responses[0]``;
``responses[4]`` is missing): ``references="file"`` scores against those.
"""

from __future__ import annotations

from typing import Any

from dialeval.data import paper
from dialeval.stats.correlation import correlate_all
from dialeval.data import items_as_dicts
from dialeval.multiref.data import load_multiref_mturk, with_five_references
from dialeval.core.options import check_choice
from dialeval.multiref.runner import run_multiref
from dialeval.core.tables import fmt, fmt_p, format_table

PAPER = ("gupta2019_multiref", "table4")
# dialeval sub-metric -> the row name in the paper's Table 4.
PAPER_ROWS = {
    "bleu1": "BLEU-1", "bleu2": "BLEU-2", "bleu3": "BLEU-3", "bleu4": "BLEU-4", "meteor": "METEOR",
    "rougeL": "ROUGE-L", "embedding_average": "Embedding Average", "vector_extrema": "Vector Extrema",
    "greedy_matching": "Greedy Matching",
}
REFERENCE_SETS = ("five", "file")


def mturk_items(setting: str, references: str = "five") -> list:
    """The 500 rated items with the references of ``setting`` (``"single"`` or ``"multi"``)."""
    check_choice("references", references, REFERENCE_SETS)
    items = load_multiref_mturk(multi_reference=setting == "multi")
    return with_five_references(items) if setting == "multi" and references == "five" else items


def multiref_mturk(references: str = "five", **options: Any) -> dict[str, Any]:
    """Gupta et al. 2019 Table 4: single (original reply) vs. multiple references, 500 ratings."""
    run = run_multiref
    out: dict[str, Any] = {"dataset": "multiref-mturk", "metric": "multiref", "references": references}
    for setting in ("single", "multi"):
        items = mturk_items(setting, references)
        per_item, signature = run(items_as_dicts(items), **options)
        out[setting] = correlate_all(per_item, [it.score for it in items])
        out[f"signature_{setting}"] = signature
    out["n"] = len(items)
    table = paper.table(*PAPER)
    out["paper"] = {
        name: dict(zip(table["columns"], table["rows"][row]))
        for name, row in PAPER_ROWS.items() if name in out["single"]
    }
    out["paper_source"] = paper.source(*PAPER)
    return out


def format_multiref_mturk(result: dict[str, Any]) -> str:
    rows = []
    for name, single in result["single"].items():
        multi = result["multi"][name]
        published = result["paper"].get(name, {})
        rows.append([
            name,
            fmt(single["spearman"], 4), fmt(published.get("single_turn_spearman"), 4),
            fmt(single["pearson"], 4), fmt(published.get("single_turn_pearson"), 4),
            fmt(multi["spearman"], 4), fmt(published.get("multi_turn_spearman"), 4),
            fmt(multi["pearson"], 4), fmt(published.get("multi_turn_pearson"), 4),
            fmt_p(multi["spearman_p"]),
        ])
    table = paper.table(*PAPER)
    for missing in ("Skip-Thought", "GenSen"):  # encoders not available offline: paper values only
        published = dict(zip(table["columns"], table["rows"][missing]))
        rows.append([missing, "n/a", fmt(published["single_turn_spearman"], 4), "n/a",
                     fmt(published["single_turn_pearson"], 4), "n/a", fmt(published["multi_turn_spearman"], 4),
                     "n/a", fmt(published["multi_turn_pearson"], 4), "n/a"])
    headers = ["metric", "single rho", "paper", "single r", "paper", "multi rho", "paper", "multi r", "paper",
               "multi rho p"]
    refs = {"five": "original + 4 crowd replies (multireftest.json)",
            "file": "the CSV's all_references (original + 3 crowd replies)"}[result.get("references", "five")]
    return "\n".join([
        f"Correlation with human appropriateness ratings (n={result['n']}): single reference vs. {refs}",
        format_table(headers, rows),
        f"single: {result['signature_single']}",
        f"multi:  {result['signature_multi']}",
        f"paper: {result['paper_source']} (Skip-Thought and GenSen: no encoder available offline, not computed)",
    ])
