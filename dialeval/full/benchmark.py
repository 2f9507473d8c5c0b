"""De Bruyn et al. 2022: FULL against the FED data's overall human ratings (turn and dialog level).

The human-judgment sets are FED's (``fed-turn``: 375 rated responses, ``fed-dialog``: 125 rated
conversations), read through :func:`dialeval.registry.judgment_sets`; the rating is the mean
"Overall" annotation. Every requested variant (``variant``: one of
:data:`dialeval.full.scorer.VARIANTS` or ``"all"``) comes from one scoring pass per text
(:meth:`dialeval.full.scorer.FULLScorer.score_all`); the table prints Spearman, Pearson and Kendall
per variant beside the paper's Spearman (:data:`dialeval.full.spec.PUBLISHED`).
"""

from __future__ import annotations

from typing import Any

from dialeval import registry
from dialeval.core.tables import fmt, format_table
from dialeval.stats.correlation import correlate


def full(level: str, model: str | None = None, variant: str | None = None, lookback: int = 50,
         batch_size: int = 32, device: str | None = None) -> dict[str, Any]:
    """FULL's correlation with the FED set of ``level`` for ``variant`` (default
    :data:`dialeval.full.scorer.DEFAULT_VARIANT`) or every variant (``"all"``)."""
    from dialeval.full.runner import full_scorer
    from dialeval.full.scorer import DEFAULT_VARIANT, check_variants
    from dialeval.full.spec import PAPER_SOURCE, PUBLISHED

    set_name = f"fed-{level}"
    items = registry.judgment_sets()[set_name]()
    scorer = full_scorer(model, batch_size, device, lookback, "float32")
    results = scorer.score_all([it.context for it in items], [it.response for it in items], level=level,
                               variants=check_variants(variant or DEFAULT_VARIANT), progress=True)
    human = [it.score for it in items]
    variants = {name: {"signature": r["signature"], "overall": correlate(r["full_scores"], human).as_dict(),
                       "scores": r["full_scores"]}
                for name, r in results.items()}
    return {"dataset": set_name, "metric": "full", "n": len(items), "model": scorer.model_name,
            "variants": variants, "paper": {"source": PAPER_SOURCE, "spearman": PUBLISHED[set_name]}}


def format_full(result: dict[str, Any]) -> str:
    """One row per variant: Spearman (``*``: p < 0.05), Pearson, Kendall and n, then the paper's Spearman."""
    rows = []
    for name, entry in result["variants"].items():
        c = entry["overall"]
        starred = fmt(c["spearman"]) + ("*" if c["spearman_p"] < 0.05 else "")
        paper = fmt(result["paper"]["spearman"]) if name == "paper" else ""
        rows.append([name, starred, c["pearson"], c["kendall"], c["n"], paper])
    return "\n".join([
        f"FULL on {result['dataset']} (n={result['n']}), model: {result['model']}; "
        "overall rating, *: Spearman p < 0.05",
        format_table(["variant", "spearman", "pearson", "kendall", "n", "paper spearman"], rows),
        *[entry["signature"] for entry in result["variants"].values()],
        f"paper: {result['paper']['source']}",
    ])
