"""Huang et al. 2020 (GRADE), Tables 1-3: coherence metrics vs. human ratings per dialogue model.

``grade(dataset)`` (``grade-convai2`` / ``grade-dailydialog`` / ``grade-empathetic``): Pearson and
Spearman per dialogue model of GRADE (graph head and no-graph head of one checkpoint) and of
multiref's single-reference BLEU-4, ROUGE-L and METEOR, beside the published rows of Table 1
(Transformer-Ranker/Generator) and Table 2 (BERT-Ranker, DialoGPT; ConvAI2 only). Every row also
carries the pooled correlation over all pairs of the set (``pooled``). Two reference points:

* ``untrained cosine (<encoder>)``: the cosine of the checkpoint's base encoder's mean-pooled
  embeddings of the last 3 context turns (joined) and the response, nothing trained: what GRADE
  has to beat to show that training (and the graph) adds anything. It gets GRADE's
  degenerate-response policy (:mod:`dialeval.core.degenerate`: a reply GRADE flags, e.g. an
  ``echo`` of a context turn, gets the cosine's worst value, -1), so the gap measures the model,
  not the guard in front of it;
* ``controls.shuffled_graphs``: GRADE's graph head scored with every pair's utterance encoding but
  the keyword graph of another pair of the set (a seeded derangement, ``SHUFFLE_SEEDS`` of them).
  ``score_spearman`` is the Spearman between the scores with the pairs' own graphs and with the
  shuffled graphs (mean over the seeds; 1.0: the graph branch is ignored; issue #18 asks < 0.9),
  both under the policy (a flagged pair is the worst, 0, with any graph);
  ``human_spearman`` the pooled Spearman with the human ratings under shuffling, to be read beside
  GRADE's own pooled Spearman;
* ``controls.versus_cosine``: GRADE's Table-1 average of four minus the untrained cosine's (issue #18
  asks >= 0) with a paired, stratified percentile bootstrap interval (:func:`versus_cosine`), so a
  gap can be read against the noise of 150 rated responses per dialogue model.

Also: keyword coverage of the knowledge graph, inference throughput (pairs/s, features + scoring,
this CPU).

``grade_ablations()`` (``grade-ablations``, Table 3 on DailyDialog): every checkpoint under
``$DIALEVAL_CACHE/grade-ablations/<variant>/seed<k>/`` (written by ``training/grade.py``, see
``metrics/grade/README.md``) scored on DailyDialog; mean and standard deviation over
the seeds beside the paper's five-seed means.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dialeval.data import paper
from dialeval.stats.bootstrap import draw_indices, percentile_interval
from dialeval.stats.correlation import correlate, rowwise
from dialeval.grade.data import load_grade
from dialeval.multiref.runner import run_multiref
from dialeval.core.tables import fmt, format_table

PAPER_ID = "huang2020_grade"
SETS = {"convai2": "ConvAI2", "dailydialog": "DailyDialog", "empathetic": "EmpatheticDialogues"}
SYSTEMS = {"transformer_ranker": "Transformer-Ranker", "transformer_generator": "Transformer-Generator",
           "bert_ranker": "BERT-Ranker", "dialogGPT": "DialoGPT"}
TABLE1_SYSTEMS = ("transformer_ranker", "transformer_generator")
BASELINES = {"bleu4": ("BLEU-4", "BLEU"), "rougeL": ("ROUGE-L", "ROUGE"), "meteor": ("METEOR", "METEOR")}
OURS, OURS_NOGRAPH = "GRADE (ours)", "GRADE no graph (ours)"
COSINE_TURNS = 3
SHUFFLE_SEEDS = 5
BOOTSTRAP_RESAMPLES = 2000
ABLATIONS = {  # variant folder -> (our row, paper row of Table 3 or None, graph head?)
    "full": ("GRADE (N1=N2=10)", "DailyDialog / Our GRADE (N1=10, N2=10)", True),
    "no-graph": ("no graph branch", "DailyDialog / no graph branch", False),
    "no-khop": ("no k-hop neighbours", "DailyDialog / no k-hop neighboring representations", True),
    "no-hop-attention": ("no hop-attention weights", "DailyDialog / no hop-attention weights", True),
    "1-hop": ("1-hop (N1=10)", "DailyDialog / 1-hop neighboring representations (N1=10)", True),
    "lexical-only": ("lexical negatives only", None, True),
    "embedding-only": ("embedding negatives only", None, True),
    "random-negatives": ("random sampling", "DailyDialog / random sampling", True),
    "no-eq9-eq10": ("no V_l h_i (Eq. 9), no FC0 ELU (Eq. 10)", None, True),
    "similarity-skip": ("+ similarity skip", None, True),
}


def _set_name(dataset: str) -> str:
    name = dataset[len("grade-"):] if dataset.startswith("grade-") else dataset
    if name not in SETS:
        raise ValueError(f"unknown GRADE data set {dataset!r}; choose from {['grade-' + s for s in SETS]}")
    return name


def per_system(scores: Sequence[float], items: Sequence[Any]) -> dict[str, Any]:
    """Correlations per dialogue model and their means (``pearson``, ``spearman``, ``table1_avg4``:
    the mean of the four Transformer-Ranker/Generator correlations, Table 1's last column), and the
    ``pooled`` correlation over all items."""
    out: dict[str, Any] = {"per_system": {}, "pooled": correlate(list(scores), [it.score for it in items]).as_dict()}
    for system in sorted({it.system for it in items}):
        idx = [i for i, it in enumerate(items) if it.system == system]
        out["per_system"][system] = correlate([scores[i] for i in idx], [items[i].score for i in idx]).as_dict()
    cors = out["per_system"]
    out["mean"] = {m: statistics.mean(c[m] for c in cors.values()) for m in ("pearson", "spearman")}
    t1 = [cors[s][m] for s in TABLE1_SYSTEMS if s in cors for m in ("pearson", "spearman")]
    out["mean"]["table1_avg4"] = statistics.mean(t1) if t1 else None
    return out


def published(name: str) -> dict[str, dict[str, list[float | None]]]:
    """``{paper metric: {system: [pearson, spearman]}}`` from Tables 1 and 2 for this set."""
    out: dict[str, dict[str, list[float | None]]] = {}
    for table_id in ("table1", "table2"):
        table = paper.table(PAPER_ID, table_id)
        for row, values in table["rows"].items():
            set_label, metric = row.split(" / ", 1)
            if set_label != SETS[name]:
                continue
            for system, label in SYSTEMS.items():
                cols = [f"{label}_turn_{m}" for m in ("pearson", "spearman")]
                if all(c in table["columns"] for c in cols):
                    out.setdefault(metric, {})[system] = [values[table["columns"].index(c)] for c in cols]
            if "average_of_4_correlations" in table["columns"]:
                out[metric]["table1_avg4"] = [values[table["columns"].index("average_of_4_correlations")]]
    return out


def derangement(n: int, seed: int) -> list[int]:
    """A seeded permutation of ``range(n)`` without fixed points (a shuffled order, rotated by one)."""
    import random

    order = list(range(n))
    random.Random(seed).shuffle(order)
    out = [0] * n
    for a, b in zip(order, order[1:] + order[:1]):
        out[a] = b
    return out


def cosine_scores(encoder_name: str, contexts: Sequence[Sequence[str]], responses: Sequence[str],
                  max_length: int = 128, device: str | None = None, turns: int = COSINE_TURNS,
                  flags: Sequence[Sequence[str]] | None = None) -> list[float]:
    """Cosine of the untrained encoder's mean-pooled embeddings of the last ``turns`` context turns
    (joined by spaces) and the response; -1 (its worst) for a pair ``flags`` marks."""
    from dialeval.grade.encoder import load_encoder

    encoder = load_encoder(encoder_name, max_length, device)
    c = encoder.embed([" ".join(ctx[-turns:]) for ctx in contexts])
    r = encoder.embed(list(responses))
    flags = flags or [[] for _ in responses]
    return [-1.0 if flagged else float(x) for x, flagged in zip((c * r).sum(1), flags)]


def shuffled_graph_control(scorer: Any, contexts: Sequence[Sequence[str]], responses: Sequence[str],
                           items: Sequence[Any], scores: Sequence[float], flags: Sequence[Sequence[str]],
                           seeds: int = SHUFFLE_SEEDS) -> dict[str, Any]:
    """``controls.shuffled_graphs`` (see module docstring): ``scores`` and ``flags`` are the scorer's
    result with the pairs' own graphs; a flagged pair keeps its worst value under shuffling too."""
    from scipy import stats

    from dialeval.core.degenerate import apply_policy
    from dialeval.grade.scales import SCALES

    head = scorer.head(True)
    encodings = scorer.encoder_for(True).encode(contexts, responses, scorer.config.pair_encoding)
    graphs = [scorer.featurizer.pair_graph(c, r) for c, r in zip(contexts, responses)]
    runs = []
    for seed in range(seeds):
        perm = derangement(len(graphs), seed)
        shuffled = scorer.score_features(encodings, [graphs[perm[i]] for i in range(len(graphs))], head)
        shuffled = apply_policy({"grade": shuffled}, flags, SCALES)["grade"]
        runs.append({"seed": seed, **per_system(shuffled, items),
                     "score_spearman": float(stats.spearmanr(shuffled, scores)[0])})
    return {
        "seeds": seeds,
        "score_spearman": statistics.mean(r["score_spearman"] for r in runs),
        "human_spearman": statistics.mean(r["pooled"]["spearman"] for r in runs),
        "table1_avg4": statistics.mean(r["mean"]["table1_avg4"] for r in runs) if runs[0]["mean"]["table1_avg4"] is not None else None,
        "mean_spearman": statistics.mean(r["mean"]["spearman"] for r in runs),
        "runs": [{k: r[k] for k in ("seed", "pooled", "mean", "score_spearman")} for r in runs],
    }


def resampled_avg4(metric: Sequence[float], items: Sequence[Any], indices: dict[str, np.ndarray]) -> np.ndarray:
    """Table 1's average of four (Pearson and Spearman of the two Table-1 dialogue models) for each
    row of resampled positions: ``indices[system]`` is ``(resamples, n_system)`` positions into that
    system's items (in the set's order); :func:`dialeval.stats.correlation.rowwise`."""
    values = np.asarray(metric, dtype=float)
    human = np.asarray([it.score for it in items], dtype=float)
    parts = []
    for system in TABLE1_SYSTEMS:
        where = np.asarray([i for i, it in enumerate(items) if it.system == system])
        x, y = values[where][indices[system]], human[where][indices[system]]
        parts += [rowwise("pearson", x, y), rowwise("spearman", x, y)]
    return np.mean(parts, axis=0)


def versus_cosine(scores: Sequence[float], cosine: Sequence[float], items: Sequence[Any],
                  n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0, confidence: float = 0.95) -> dict[str, Any] | None:
    """``controls.versus_cosine``: ``delta`` = GRADE's Table-1 average of four minus the untrained
    cosine's, and its paired percentile bootstrap ``interval``: each Table-1 dialogue model's items are
    resampled with replacement (``numpy.random.default_rng(seed).integers``, one
    ``(n_resamples, n_system)`` draw per system in :data:`TABLE1_SYSTEMS` order:
    :func:`dialeval.stats.bootstrap.draw_indices` with ``draw="integers"``), the same positions for
    both metrics, and both averages recomputed (:func:`resampled_avg4`); ``share_at_least``: the share
    of resamples in which GRADE's average is at least the cosine's. ``None`` for a set without both
    Table-1 dialogue models."""
    counts = {s: sum(it.system == s for it in items) for s in TABLE1_SYSTEMS}
    if min(counts.values()) < 3:
        return None
    rng = np.random.default_rng(seed)
    indices = {s: draw_indices(rng, n_resamples, counts[s], draw="integers") for s in TABLE1_SYSTEMS}
    diffs = resampled_avg4(scores, items, indices) - resampled_avg4(cosine, items, indices)
    diffs = diffs[np.isfinite(diffs)]  # a resample with a constant column has no correlation
    low, high = percentile_interval(diffs, confidence, percent=True)
    delta = per_system(scores, items)["mean"]["table1_avg4"] - per_system(cosine, items)["mean"]["table1_avg4"]
    return {"delta": float(delta), "interval": [float(low), float(high)], "confidence": confidence,
            "share_at_least": float(np.mean(diffs >= 0)), "resamples": int(len(diffs)), "seed": seed}


def grade(dataset: str, model: str | None = None, batch_size: int = 32, device: str | None = None) -> dict[str, Any]:
    """Tables 1-2 for one set (see module docstring)."""
    from dialeval.grade.scorer import DEFAULT_MODEL, GradeScorer

    name = _set_name(dataset)
    items = load_grade(name)
    scorer = GradeScorer(model or DEFAULT_MODEL, device=device, batch_size=batch_size)
    contexts, responses = [it.context for it in items], [it.response for it in items]
    start = time.time()
    result = scorer.score(contexts, responses, graph=True)
    scores, flags = result["grade_scores"], result["flags"]
    seconds = time.time() - start
    nograph = scorer.score(contexts, responses, graph=False)["grade_scores"]
    cosine = cosine_scores(scorer.config.encoder, contexts, responses, scorer.config.max_length, device, flags=flags)
    cosine_row = f"untrained cosine ({scorer.config.encoder}, last {COSINE_TURNS} turns)"
    metrics = {OURS: per_system(scores, items), OURS_NOGRAPH: per_system(nograph, items),
               cosine_row: per_system(cosine, items)}
    baseline, multiref_signature = run_multiref(
        [{"response": it.response, "references": it.references} for it in items], metrics=list(BASELINES))
    for key, (label, _) in BASELINES.items():
        metrics[label] = per_system(baseline[key], items)
    return {
        "dataset": f"grade-{name}", "metric": "grade", "n": len(items), "systems": sorted({it.system for it in items}),
        "metrics": metrics, "paper": published(name), "signature": scorer.signature(True),
        "controls": {"shuffled_graphs": shuffled_graph_control(scorer, contexts, responses, items, scores, flags),
                     "versus_cosine": versus_cosine(scores, cosine, items)},
        "signature_nograph": scorer.signature(False), "multiref_signature": multiref_signature,
        "keyword_coverage": scorer.featurizer.coverage([scorer.featurizer.pair_graph(c, r) for c, r in zip(contexts, responses)]),
        "seconds": round(seconds, 1),
        "pairs_per_second": round(len(items) / seconds, 1),
        "scores": {OURS: scores, OURS_NOGRAPH: nograph, cosine_row: cosine},
    }


def _paper_label(metric: str) -> str | None:
    if metric in (OURS, OURS_NOGRAPH):
        return "GRADE" if metric == OURS else None
    return next((p for label, p in BASELINES.values() if label == metric), None)


def format_grade(result: dict[str, Any]) -> str:
    systems = result["systems"]
    headers = (["metric"] + [f"{SYSTEMS[s]} {m}" for s in systems for m in ("r", "rho")]
               + ["mean r", "mean rho", "T1 avg4", "pooled rho"])
    rows = []
    for metric, values in result["metrics"].items():
        cors = values["per_system"]
        rows.append([metric] + [fmt(cors[s][m]) + ("*" if cors[s][f"{m}_p"] > 0.05 else "")
                                for s in systems for m in ("pearson", "spearman")]
                    + [fmt(values["mean"]["pearson"]), fmt(values["mean"]["spearman"]), fmt(values["mean"]["table1_avg4"]),
                       fmt(values["pooled"]["spearman"]) if "pooled" in values else ""])
        label = _paper_label(metric)
        if label and label in result["paper"]:
            pub = result["paper"][label]
            rows.append([f"  paper {label}"] + [fmt((pub.get(s) or [None, None])[i]) for s in systems for i in (0, 1)]
                        + ["", "", fmt((pub.get("table1_avg4") or [None])[0]), ""])
    for label in ("BERTScore", "BLEURT", "BERT-RUBER", "ADEM"):
        if label in result["paper"]:
            pub = result["paper"][label]
            rows.append([f"  paper {label}"] + [fmt((pub.get(s) or [None, None])[i]) for s in systems for i in (0, 1)]
                        + ["", "", fmt((pub.get("table1_avg4") or [None])[0]), ""])
    cov = result["keyword_coverage"]
    control = result.get("controls", {}).get("shuffled_graphs")
    control_line = (
        f"control, shuffled graphs (each pair scored with another pair's keyword graph, {control['seeds']} seeds): "
        f"rho with the own-graph scores {fmt(control['score_spearman'])} (issue #18 asks < 0.9); with the human ratings: "
        f"pooled rho {fmt(control['human_spearman'])} (own graphs {fmt(result['metrics'][OURS]['pooled']['spearman'])}), "
        f"T1 avg4 {fmt(control['table1_avg4'])} (own graphs {fmt(result['metrics'][OURS]['mean']['table1_avg4'])})"
        if control else "control: not run")
    versus = result.get("controls", {}).get("versus_cosine")
    versus_line = (
        f"GRADE minus the untrained cosine, T1 avg4: {versus['delta']:+.3f} ({versus['confidence']:.0%} paired bootstrap "
        f"interval {versus['interval'][0]:+.3f} .. {versus['interval'][1]:+.3f}; GRADE at least the cosine in "
        f"{versus['share_at_least']:.0%} of {versus['resamples']:,} resamples; issue #18 asks >= 0)"
        if versus else None)
    return "\n".join([
        f"GRADE benchmark {result['dataset']} (n={result['n']}, {len(systems)} dialogue models x 150): Pearson r / "
        "Spearman rho with the mean human coherence rating (* p > 0.05)",
        format_table(headers, rows),
        f"keyword coverage of the knowledge graph: {fmt(cov['all'])} of keywords (context {fmt(cov['context'])}, "
        f"response {fmt(cov['response'])}); {fmt(cov['keywords_per_context'], 1)} context / "
        f"{fmt(cov['keywords_per_response'], 1)} response keywords per pair; responses without keywords "
        f"{fmt(cov['responses_without_keywords'])}",
        control_line,
        *([versus_line] if versus_line else []),
        f"throughput: {result['pairs_per_second']} pairs/s (features + scoring, {result['seconds']} s)",
        f"grade: {result['signature']}",
        f"multiref (single reference): {result['multiref_signature']}",
        f"paper: {paper.source(PAPER_ID, 'table1')} and Table 2; paper's BLEU is unspecified n (ours BLEU-4)",
    ])


def ablation_root() -> Path:
    from dialeval.core.resources import cache_dir

    return cache_dir() / "grade-ablations"


def grade_ablations(root: str | None = None, batch_size: int = 32, device: str | None = None) -> dict[str, Any]:
    """Table 3 (see module docstring)."""
    from dialeval.grade.scorer import GradeScorer

    base = Path(root) if root else ablation_root()
    folders = {v: sorted(p for p in (base / v).glob("seed*") if (p / "config.json").is_file()) for v in ABLATIONS}
    if not any(folders.values()):
        raise FileNotFoundError(f"no GRADE ablation checkpoints under {base}/<variant>/seed<k>/ "
                                f"(variants {list(ABLATIONS)}); see metrics/grade/README.md")
    items = load_grade("dailydialog")
    contexts, responses = [it.context for it in items], [it.response for it in items]
    out: dict[str, Any] = {"dataset": "grade-ablations", "metric": "grade", "n": len(items),
                           "systems": list(TABLE1_SYSTEMS), "variants": {}, "paper": paper.table(PAPER_ID, "table3")}
    for variant, found in folders.items():
        runs = []
        for folder in found:
            scorer = GradeScorer(folder, device=device, batch_size=batch_size)
            scores = scorer.score(contexts, responses, graph=ABLATIONS[variant][2])["grade_scores"]
            runs.append({"folder": str(folder), **per_system(scores, items)})
        if runs:
            out["variants"][variant] = runs
    return out


def _mean_std(values: list[float]) -> str:
    if not values:
        return "n/a"
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.3f}±{std:.3f}"


def format_grade_ablations(result: dict[str, Any]) -> str:
    table = result["paper"]
    cols = [f"{SYSTEMS[s]}_turn_{m}" for s in TABLE1_SYSTEMS for m in ("pearson", "spearman")]
    headers = ["variant", "seeds"] + [f"{SYSTEMS[s]} {m}" for s in TABLE1_SYSTEMS for m in ("r", "rho")] + ["avg4"]
    rows = []
    for variant, runs in result["variants"].items():
        label, paper_row, _ = ABLATIONS[variant]
        cells = [_mean_std([r["per_system"][s][m] for r in runs]) for s in TABLE1_SYSTEMS for m in ("pearson", "spearman")]
        rows.append([label, len(runs)] + cells + [_mean_std([r["mean"]["table1_avg4"] for r in runs])])
        pub = table["rows"].get(paper_row)
        if pub:
            rows.append(["  paper", 5] + [
                f"{pub[table['columns'].index(c + '_mean')]:.3f}±{pub[table['columns'].index(c + '_std')]:.3f}" for c in cols
            ] + [f"{pub[table['columns'].index('average_of_4_correlations_mean')]:.3f}"
                 f"±{pub[table['columns'].index('average_of_4_correlations_std')]:.3f}"])
    return "\n".join([
        f"GRADE ablations on DailyDialog (n={result['n']}), mean±std over seeds (Table 3 layout)",
        format_table(headers, rows),
        f"paper: {paper.source(PAPER_ID, 'table3')} (five seeds)",
    ])
