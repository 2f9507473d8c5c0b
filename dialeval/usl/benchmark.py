"""USL-H on the shared human-judgment sets beside Yeh et al.'s (2021) numbers for the authors' weights.

Each set (FED's, GRADE's and holistic's, read by name through :func:`dialeval.registry.judgment_sets`)
is scored as generic items (a FED dialog: its last turn given the turns before it); the table gives
Spearman, Pearson and Kendall of ``usl``, of each part and of the other hierarchy's combination of the
same parts (``usl[H]`` beside the default ``"HS"``, :mod:`dialeval.usl.formula`) with the human rating,
and Yeh's Spearman of USL-H (:data:`dialeval.usl.spec.YEH`).
"""

from __future__ import annotations

from typing import Any

from dialeval import registry
from dialeval.core.tables import fmt, format_table
from dialeval.stats.correlation import correlate

PARTS = ("usl", "usl_u", "usl_s", "usl_l")


def yeh(set_name: str, model: str | None = None, hierarchy: str | None = None, device: str | None = None) -> dict[str, Any]:
    """USL-H's and its parts' correlations with the human rating of ``set_name``."""
    from dialeval.usl.formula import DEFAULT_HIERARCHY, HIERARCHIES, usl_h
    from dialeval.usl.heads import DEFAULT_MODEL
    from dialeval.usl.scorer import cached_scorer
    from dialeval.usl.spec import YEH, YEH_SOURCE

    items = registry.judgment_sets()[set_name]()
    hierarchy = hierarchy or DEFAULT_HIERARCHY
    result = cached_scorer(model or DEFAULT_MODEL, device, "float32").score(
        [it.context for it in items], [it.response for it in items], hierarchy)
    human = [it.score for it in items]
    scores = {part: result[f"{part}_scores"] for part in PARTS}
    parts = list(zip(scores["usl_u"], scores["usl_s"], scores["usl_l"]))
    for other in (h for h in HIERARCHIES if h != hierarchy):
        scores[f"usl[{other}]"] = [usl_h(u, s, l, other) for u, s, l in parts]
    return {"dataset": set_name, "metric": "usl", "n": len(items), "signature": result["signature"],
            "rows": {part: correlate(values, human).as_dict() for part, values in scores.items()},
            "flagged": result["flagged"], "paper": {"source": YEH_SOURCE, "spearman": YEH[set_name]}}


def format_yeh(result: dict[str, Any]) -> str:
    """One row per part: Spearman (``*``: p < 0.05), Pearson, Kendall, n; Yeh's Spearman beside USL-H."""
    rows = []
    for part, c in result["rows"].items():
        starred = fmt(c["spearman"]) + ("*" if c["spearman_p"] < 0.05 else "")
        rows.append([part, starred, c["pearson"], c["kendall"], c["n"], fmt(result["paper"]["spearman"]) if part == "usl" else ""])
    return "\n".join([
        f"USL-H on {result['dataset']} (n={result['n']}, {result['flagged']} flagged); *: Spearman p < 0.05",
        format_table(["score", "spearman", "pearson", "kendall", "n", "Yeh et al. spearman"], rows),
        result["signature"], f"published: {result['paper']['source']}",
    ])
