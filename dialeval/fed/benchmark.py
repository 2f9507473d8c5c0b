"""Mehri & Eskenazi 2020, Table 6: FED qualities vs. human ratings (turn and dialog level).

Every requested variant (``mode``: one of :data:`dialeval.fed.scorer.MODES`, or ``"all"``) is measured from
one scoring pass (:meth:`dialeval.fed.scorer.FEDScorer.score_all`); the table prints Spearman per variant
beside the published DialoGPT columns of Table 6 (``paper_tables.json``).
"""

from __future__ import annotations

from typing import Any

from dialeval.data import paper
from dialeval.stats.correlation import correlate
from dialeval.core.tables import fmt, format_table

PAPER = "mehri2020_fed"
# dialeval's quality names whose Table 6 row is not simply the title-cased name.
PAPER_ROWS = {"depth": "Topic Depth", "understand": "Understanding"}


def paper_row(quality: str) -> str:
    """Table 6 row of a quality: ``"semantically appropriate"`` -> ``"Semantically Appropriate"``."""
    return PAPER_ROWS.get(quality, quality.title())


def fed(level: str, model: str | None = None, mode: str | None = None, batch_size: int = 32,
        device: str | None = None) -> dict[str, Any]:
    """FED data (Mehri & Eskenazi 2020, Table 6 layout): Spearman per quality at one level, for the
    variant ``mode`` (default :data:`dialeval.fed.scorer.DEFAULT_MODE`) or every variant (``"all"``)."""
    from dialeval.fed.data import load_fed
    from dialeval.fed.scorer import DEFAULT_MODE, check_modes, score_name
    from dialeval.fed.runner import fed_scorer

    items = load_fed(level)
    scorer = fed_scorer(model, batch_size, device, "float32")
    results = scorer.score_all([it["turns"] for it in items], level=level,
                               modes=check_modes(mode or DEFAULT_MODE), progress=True)
    variants = {}
    for variant, result in results.items():
        correlations = {}
        for quality in items[0]["ratings"]:
            name = f"{level}_overall" if quality == "overall" else score_name(level, quality)
            human = [it["ratings"][quality] for it in items]
            correlations[quality] = correlate(result[f"{name}_scores"], human).as_dict()
        variants[variant] = {"signature": result["signature"], "correlations": correlations}
    return {
        "dataset": f"fed-{level}", "metric": "fed", "n": len(items), "model": scorer.model_name,
        "variants": variants, "paper": published(level),
    }


def published(level: str) -> dict[str, Any]:
    """Table 6 at ``level``: ``{"source", "columns": [...], "rows": {quality: [value per column]}}``."""
    table_id = f"table6_{level}"
    table = paper.table(PAPER, table_id)
    return {"source": paper.source(PAPER, table_id), "columns": table["columns"], "rows": table["rows"]}


def format_fed(result: dict[str, Any]) -> str:
    """Spearman (``*``: p < 0.05) per variant, then the four DialoGPT columns of Table 6."""
    published_ = result["paper"]
    short = [c.split("-", 1)[-1] for c in published_["columns"]]  # "turn_spearman_DialoGPT-762M-ft" -> "762M-ft"
    variants = result["variants"]
    qualities = list(next(iter(variants.values()))["correlations"])
    rows = []
    for quality in qualities:
        cells = [_starred(variants[v]["correlations"][quality]) for v in variants]
        paper_values = published_["rows"].get(paper_row(quality), [None] * len(short))
        n = next(iter(variants.values()))["correlations"][quality]["n"]
        rows.append([quality, *cells, n, *[fmt(x) for x in paper_values]])
    headers = ["quality", *variants, "n", *[f"paper {s}" for s in short]]
    return "\n".join([
        f"FED on {result['dataset']} (n={result['n']}), model: {result['model']}; Spearman, *: p < 0.05",
        format_table(headers, rows),
        *[variants[v]["signature"] for v in variants],
        (f"paper: {published_['source']} (Spearman of DialoGPT-345M/762M, fs = from scratch, ft = fine-tuned "
         "from GPT-2; 762M-ft is the paper's FED)"),
    ])


def _starred(correlation: dict[str, Any]) -> str:
    """``0.311*`` when p < 0.05 (a NaN p-value is never starred)."""
    return fmt(correlation["spearman"]) + ("*" if correlation["spearman_p"] < 0.05 else "")
