"""Correlation of dialeval metrics with human judgment (``dialeval benchmark``).

Named data sets have their own table layout (the paper's); any JSON-lines file in the generic
format of :mod:`dialeval.data` is also accepted, giving one row per sub-metric.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

from dialeval.correlation import correlate
from dialeval.data import JudgmentItem, load_judgment_file, load_multiref_mturk
from dialeval.runners import get_runner
from dialeval.tables import fmt, fmt_p, format_table


def paper_numbers(key: str) -> dict[str, Any]:
    """The published numbers stored for a benchmark (see ``dialeval/data/paper_numbers.json``)."""
    text = resources.files("dialeval").joinpath("data/paper_numbers.json").read_text()
    return json.loads(text).get(key, {})


def _items_as_dicts(items: Sequence[JudgmentItem]) -> list[dict]:
    return [vars(it) for it in items]


def correlate_all(per_item: dict[str, list[float]], human: Sequence[float]) -> dict[str, dict]:
    return {name: correlate(scores, human).as_dict() for name, scores in per_item.items()}


def multiref_mturk(**options: Any) -> dict[str, Any]:
    """Gupta et al. 2019 Table 4: single (original reply) vs. multiple references, 500 ratings."""
    run = get_runner("multiref")
    out: dict[str, Any] = {"dataset": "multiref-mturk", "metric": "multiref"}
    for setting, multi in (("single", False), ("multi", True)):
        items = load_multiref_mturk(multi_reference=multi)
        per_item, signature = run(_items_as_dicts(items), **options)
        out[setting] = correlate_all(per_item, [it.score for it in items])
        out[f"signature_{setting}"] = signature
    out["n"] = len(items)
    out["paper"] = paper_numbers("multiref-mturk")
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


def generic(metric: str, path: str | Path, **options: Any) -> dict[str, Any]:
    """Any metric on a generic human-judgment JSONL file: one correlation per sub-metric."""
    items = load_judgment_file(path)
    per_item, signature = get_runner(metric)(_items_as_dicts(items), **options)
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
        "signature": result["signature"], "correlations": correlations, "paper": paper_numbers(f"fed-{level}"),
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
        "paper": paper_numbers("holistic"),
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


# name -> (metric it belongs to, compute, format)
NAMED: dict[str, tuple[str, Callable[..., dict], Callable[[dict], str]]] = {
    "multiref-mturk": ("multiref", multiref_mturk, format_multiref_mturk),
    "fed-turn": ("fed", functools.partial(fed, "turn"), format_fed),
    "fed-dialog": ("fed", functools.partial(fed, "dialog"), format_fed),
    "holistic-coherence": ("holistic", functools.partial(holistic, "coherence"), format_holistic),
    "holistic-fluency": ("holistic", functools.partial(holistic, "fluency"), format_holistic),
    "holistic-consistency": ("holistic", functools.partial(holistic, "consistency"), format_holistic),
}


def run_benchmark(metric: str, dataset: str, **options: Any) -> tuple[dict[str, Any], str]:
    """Compute a benchmark; return its result (for ``--json``) and its printed table."""
    if dataset in NAMED:
        owner, compute, render = NAMED[dataset]
        if owner != metric:
            raise ValueError(f"data set {dataset!r} belongs to metric {owner!r}, not {metric!r}")
        result = compute(**options)
        return result, render(result)
    if not Path(dataset).is_file():
        raise FileNotFoundError(
            f"unknown data set {dataset!r}: not one of {sorted(NAMED)} and not a JSONL file"
        )
    result = generic(metric, dataset, **options)
    return result, format_generic(result)
