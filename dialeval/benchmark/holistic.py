"""Pang et al. 2020, Tables 3, 4, 8: holistic coherence, fluency and consistency vs. human ratings."""

from __future__ import annotations

from typing import Any

from dialeval import paper
from dialeval.benchmark.common import correlate_all
from dialeval.correlation import correlate
from dialeval.tables import fmt, fmt_p, format_table


def holistic(aspect: str, model: str | None = None, nli: str | None = None, cutoff: float | str | None = None,
             batch_size: int = 16, device: str | None = None) -> dict[str, Any]:
    """Pang et al. (2020) sets, Tables 3-4 layout: Pearson and Spearman of the metric with the mean
    human rating, beside the leave-one-rater-out inter-rater agreement (mean and max over raters)."""
    from dialeval.correlation import inter_rater
    from dialeval.data import load_holistic
    from dialeval.runners import consistency_scorer, likelihood_scorer

    items = load_holistic(aspect)
    responses = [it["response"] for it in items]
    if aspect == "consistency":
        scorer = consistency_scorer(nli, batch_size, device)
        result = scorer.score([it["history"] for it in items], responses)
        used = getattr(scorer.nli, "model_name", "custom")
    else:
        scorer = likelihood_scorer(model, batch_size, device)
        queries = [it["query"] for it in items] if aspect == "coherence" else None
        result = scorer.score(aspect, responses, queries, cutoff=cutoff, progress=True)
        used = scorer.model_name
    human = [sum(it["ratings"]) / len(it["ratings"]) for it in items]
    rows = {aspect: result[f"{aspect}_scores"]}
    if f"{aspect}_raw_scores" in result:
        rows[f"{aspect}_raw"] = result[f"{aspect}_raw_scores"]
    correlations = correlate_all(rows, human)
    for source in sorted({it.get("source") for it in items} - {None}):
        keep = [i for i, it in enumerate(items) if it["source"] == source]
        correlations[f"{aspect} ({source})"] = correlate(
            [rows[aspect][i] for i in keep], [human[i] for i in keep]).as_dict()
    raters = len(items[0]["ratings"])
    return {
        "dataset": f"holistic-{aspect}", "metric": "holistic", "aspect": aspect, "n": len(items),
        "raters": raters, "model": used, "signature": result["signature"], "correlations": correlations,
        "inter_rater": inter_rater([it["ratings"] for it in items]) if raters > 1 else None,
        "paper": paper.table("pang2020_holistic", {"coherence": "table3", "fluency": "table4"}.get(aspect, "table8")),
    }


def format_holistic(result: dict[str, Any]) -> str:
    paper = result["paper"].get("spearman", {})
    rows = [
        [name, fmt(c["spearman"]), fmt_p(c["spearman_p"]), fmt(c["pearson"]), fmt_p(c["pearson_p"]), c["n"],
         fmt(paper.get(name))]
        for name, c in result["correlations"].items()
    ]
    inter = result["inter_rater"]
    if inter:
        for stat in ("mean", "max"):
            rows.append([f"inter-rater ({stat})", fmt(inter[f"spearman_{stat}"]), "", fmt(inter[f"pearson_{stat}"]),
                         "", result["n"], ""])
    return "\n".join([
        f"Holistic {result['aspect']} on {result['dataset']} (n={result['n']}, {result['raters']} rater(s) per item), "
        f"model: {result['model']}",
        format_table(["score", "spearman", "p", "pearson", "p", "n", "paper spearman"], rows),
        result["signature"],
        f"paper: {result['paper'].get('source', 'n/a')}",
    ])
