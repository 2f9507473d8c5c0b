"""Pang et al. 2020, Tables 3, 4, 8: holistic coherence, fluency and consistency vs. human ratings.

Every measured row is printed beside the published Pearson and Spearman it compares with (read
from ``paper_tables.json`` by :mod:`dialeval.data.paper`): coherence (Table 3) and fluency (Table 4)
beside GPT-2 without and with fine-tuning, the inter-rater lines beside the paper's inter-rater
mean / max; consistency (Table 8) per augmentation: the rated items are the augmented CTG and WS
sets, printed beside the paper's 0.66 and 0.64 (Spearman); the pooled 200 items have no published
counterpart, and the paper's un-augmented baseline row has no released data, so it is not compared. Coherence and
fluency also show ``baseline: -length`` (minus the response's token count), a model-free reference.
"""

from __future__ import annotations

from typing import Any

from dialeval.data import paper
from dialeval.stats.correlation import correlate_all
from dialeval.stats.correlation import correlate
from dialeval.core.signature import joined
from dialeval.core.tables import fmt, fmt_p, format_table
from dialeval.core.text import tokenize

PAPER_ID = "pang2020_holistic"
TABLES = {"coherence": "table3", "fluency": "table4", "consistency": "table8"}
UNTUNED, TUNED = "GPT-2 w/o Fine-tune", "GPT-2 w/ Fine-tune"
BASELINE_ROW = "Baseline Dataset"  # Table 8, un-augmented data (not released): never compared
# A model-free reference row: shorter responses are rated higher in these sets, and a summed
# log-likelihood falls with length, so the sum's edge over the mean is partly this.
LENGTH_BASELINE = "baseline: -length"


def published_rows(aspect: str, measured: list[str]) -> dict[str, dict[str, list[float | None]]]:
    """``{measured row: {published row: [pearson, spearman]}}`` for the rows that compare."""
    rows = paper.table(PAPER_ID, TABLES[aspect])["rows"]
    out: dict[str, dict[str, list[float | None]]] = {}
    for name in measured:
        if aspect == "consistency":
            source = name[len(aspect):].strip(" ()")
            match = {f"{source} Dataset": rows[f"{source} Dataset"]} if f"{source} Dataset" in rows else {}
        elif name.startswith("inter-rater"):
            label = f"Inter-Rater {name.split('(')[1].rstrip(')').title()}"
            match = {label: rows[label]}
        elif name.startswith(aspect):
            match = {label: rows[label] for label in (UNTUNED, TUNED)}
        else:
            match = {}
        out[name] = match
    return out


def _likelihood_rows(scorer: Any, aspect: str, responses: list[str], queries: list[str] | None,
                     cutoff: float | str, reduction: str | None) -> tuple[dict[str, list[float]], list[str]]:
    """Normalised and raw scores per reduction (both unless one is asked for), from one LM pass:
    rows ``"<aspect> (<reduction>)"`` and ``"<aspect>_raw (<reduction>)"``."""
    from dialeval.holistic.normalisation import REDUCTIONS, check_reduction, normalise, reduce_logprobs
    from dialeval.core.results import make_signature

    logprobs = scorer.logprobs(aspect, responses, queries, progress=True)
    rows, signatures = {}, []
    for name in [check_reduction(aspect, reduction)] if reduction else REDUCTIONS:
        raw = reduce_logprobs(logprobs, name)
        value, how = scorer.resolve_cutoff(aspect, raw, cutoff, name)
        rows[f"{aspect} ({name})"] = normalise(raw, value)
        rows[f"{aspect}_raw ({name})"] = raw
        signatures.append(make_signature("holistic", aspect=aspect, model=scorer.model_name, reduction=name, cutoff=how))
    return rows, signatures


def holistic(aspect: str, model: str | None = None, nli: str | None = None, cutoff: float | str = "set",
             reduction: str | None = None, batch_size: int = 16, device: str | None = None) -> dict[str, Any]:
    """Pang et al. (2020) sets, Tables 3-4 / 8 layout: Pearson and Spearman of the metric with the mean
    human rating, beside the leave-one-rater-out inter-rater agreement (mean and max over raters) and
    the published values. Coherence and fluency are reported for both reductions (mean, the paper's
    Eq. 1; sum, the authors' code) from one LM pass unless ``reduction`` names one. ``cutoff`` defaults
    to ``"set"`` (the paper's 5th percentile of the rated set); the raw rows do not depend on it."""
    from dialeval.stats.correlation import inter_rater
    from dialeval.holistic.data import load_holistic
    from dialeval.core.options import check_choice
    from dialeval.holistic.runner import consistency_scorer, likelihood_scorer

    check_choice("aspect", aspect, TABLES)
    items = load_holistic(aspect)
    responses = [it["response"] for it in items]
    if aspect == "consistency":
        scorer = consistency_scorer(nli, batch_size, device, "float32")
        result = scorer.score([it["history"] for it in items], responses)
        used = getattr(scorer.nli, "model_name", "custom")
        rows = {aspect: result[f"{aspect}_scores"]}
        signatures = [result["signature"]]
    else:
        scorer = likelihood_scorer(model, batch_size, device, "float32")
        queries = [it["query"] for it in items] if aspect == "coherence" else None
        rows, signatures = _likelihood_rows(scorer, aspect, responses, queries, cutoff, reduction)
        rows[LENGTH_BASELINE] = [-float(len(tokenize(r))) for r in responses]
        used = scorer.model_name
    human = [sum(it["ratings"]) / len(it["ratings"]) for it in items]
    correlations = correlate_all(rows, human)
    for source in sorted({it.get("source") for it in items} - {None}):
        keep = [i for i, it in enumerate(items) if it["source"] == source]
        correlations[f"{aspect} ({source})"] = correlate(
            [rows[aspect][i] for i in keep], [human[i] for i in keep]).as_dict()
    raters = len(items[0]["ratings"])
    inter = inter_rater([it["ratings"] for it in items]) if raters > 1 else None
    measured = list(correlations) + (["inter-rater (mean)", "inter-rater (max)"] if inter else [])
    return {
        "dataset": f"holistic-{aspect}", "metric": "holistic", "aspect": aspect, "n": len(items),
        "raters": raters, "model": used, "signature": joined(signatures), "correlations": correlations,
        "inter_rater": inter, "paper": paper.table(PAPER_ID, TABLES[aspect]),
        "paper_source": paper.source(PAPER_ID, TABLES[aspect]),
        "published": published_rows(aspect, measured),
    }


def _published_cells(published: dict[str, list[float | None]], labels: list[str]) -> list[str]:
    return [fmt(published[label][k]) if label in published else "" for label in labels for k in (0, 1)]


def format_holistic(result: dict[str, Any]) -> str:
    aspect = result["aspect"]
    if aspect == "consistency":
        labels = ["paper row"]
        heads = ["paper row", "paper r", "paper rho"]
    else:
        labels = [UNTUNED, TUNED]
        heads = ["paper r w/o ft", "paper rho w/o ft", "paper r ft", "paper rho ft"]
    rows = []
    for name, c in result["correlations"].items():
        published = result["published"].get(name, {})
        if aspect == "consistency":
            label = next(iter(published), "")
            cells = [label] + ([fmt(v) for v in published[label]] if label else ["", ""])
        else:
            cells = _published_cells(published, labels)
        rows.append([name, fmt(c["pearson"]), fmt_p(c["pearson_p"]), fmt(c["spearman"]), fmt_p(c["spearman_p"]),
                     c["n"]] + cells)
    inter = result["inter_rater"]
    if inter:
        for stat in ("mean", "max"):
            name = f"inter-rater ({stat})"
            label = f"Inter-Rater {stat.title()}"
            published = result["published"].get(name, {}).get(label, [None, None])
            paper_cells = ([""] if aspect == "consistency" else []) + [fmt(published[0]), fmt(published[1])]
            paper_cells += [""] * (len(heads) - len(paper_cells))
            rows.append([name, fmt(inter[f"pearson_{stat}"]), "", fmt(inter[f"spearman_{stat}"]), "",
                         result["n"]] + paper_cells)
    lines = [
        f"Holistic {aspect} on {result['dataset']} (n={result['n']}, {result['raters']} rater(s) per item), "
        f"model: {result['model']}",
        format_table(["score", "pearson", "p", "spearman", "p", "n"] + heads, rows),
        result["signature"],
        f"paper: {result['paper_source']}: {result['paper']['caption']}",
    ]
    if aspect == "consistency":
        rows_published = result["paper"]["rows"]
        lines.append("paper rows (pearson, spearman) for the augmented sets rated here: " + "; ".join(
            f"{label} {fmt(v[0], 2)} / {fmt(v[1], 2)}" for label, v in rows_published.items() if label != BASELINE_ROW)
            + f" (Table 8's un-augmented {BASELINE_ROW!r} has no released data and is not compared)")
    return "\n".join(lines)
