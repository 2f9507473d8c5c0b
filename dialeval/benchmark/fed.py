"""Mehri & Eskenazi 2020, Table 6: FED qualities vs. human ratings (turn and dialog level)."""

from __future__ import annotations

from typing import Any

from dialeval import paper
from dialeval.correlation import correlate
from dialeval.tables import fmt, fmt_p, format_table


def fed(level: str, model: str | None = None, mode: str = "reference", batch_size: int = 32,
        device: str | None = None) -> dict[str, Any]:
    """FED data (Mehri & Eskenazi 2020, Table 6 layout): Spearman per quality at one level."""
    from dialeval.data import load_fed
    from dialeval.fed import score_name
    from dialeval.runners import fed_scorer

    items = load_fed(level)
    scorer = fed_scorer(model, mode, batch_size, device)
    result = scorer.score([it["turns"] for it in items], level=level, progress=True)
    correlations = {}
    for quality in items[0]["ratings"]:
        name = f"{level}_overall" if quality == "overall" else score_name(level, quality)
        correlations[quality] = correlate(result[f"{name}_scores"], [it["ratings"][quality] for it in items]).as_dict()
    return {
        "dataset": f"fed-{level}", "metric": "fed", "n": len(items), "model": scorer.model_name,
        "signature": result["signature"], "correlations": correlations, "paper": paper.table("mehri2020_fed", f"table6_{level}"),
    }


def format_fed(result: dict[str, Any]) -> str:
    paper = result["paper"].get("spearman", {})
    rows = [
        [quality, fmt(c["spearman"]), fmt_p(c["spearman_p"]), c["n"], fmt(paper.get(quality))]
        for quality, c in result["correlations"].items()
    ]
    return "\n".join([
        f"FED on {result['dataset']} (n={result['n']}), model: {result['model']}",
        format_table(["quality", "spearman", "p", "n", "paper 762M-ft"], rows),
        result["signature"],
        f"paper: {result['paper'].get('source', 'n/a')}",
    ])
