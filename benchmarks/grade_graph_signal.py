"""How much a GRADE keyword graph can tell by itself, before any learning (issue 18, "does the graph matter?").

For each (context, response) pair the bundled model's featurizer builds the keyword graph the graph
branch reads (:meth:`dialeval.grade.features.GraphFeaturizer.pair_graph`: up to 10 context and 5
response keywords, context-response edges weighted ``1/(d + 1)`` by the ConceptNet hop distance
``d``). Three untrained statistics of its context-response weights ``w_ij`` (over the pairs of
keywords, 0 for a graph without edges):

* ``mean_weight``: the mean of ``w_ij``;
* ``max_weight``: the largest ``w_ij`` (1: a keyword shared by context and response);
* ``close_pairs``: how many keyword pairs are the same concept or ConceptNet neighbours (``w_ij >= 1/2``).

On DailyDialog *validation* (the training run's cached examples: each context with its true
response and a BM25, an embedding-sampled and a random negative), the share of contexts whose true
response has the larger statistic, ties counted half (``accuracy``), beside the share of ties;
on the human sets, the Spearman of each statistic with the human ratings. These bound what the
graph's topology offers the learned branch (whose node vectors add word meaning on top); the learned
graph branch alone reaches 0.56-0.65 on the same validation pairs
(``benchmarks/results/grade-graph-validation.txt``).

    python benchmarks/grade_graph_signal.py --save benchmarks/results/grade-graph-signal.json

Needs the validation examples cached by ``python training/grade.py`` (``--work`` there, default
``$DIALEVAL_CACHE/grade-train/all-mpnet-base-v2-t2``); a few minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dialeval.core.resources import cache_dir  # noqa: E402
from dialeval.core.tables import fmt, format_table  # noqa: E402
from dialeval.stats.correlation import correlate  # noqa: E402
from dialeval.grade.data import load_grade  # noqa: E402
from dialeval.grade.features import PairGraph  # noqa: E402

STATISTICS = ("mean_weight", "max_weight", "close_pairs")
NEGATIVES = ("lexical", "embedding", "random")
HUMAN_SETS = ("convai2", "dailydialog", "empathetic")


def graph_statistics(graph: PairGraph) -> dict[str, float]:
    """The three statistics of one pair's context-response weights (module docstring)."""
    weights = graph.adj[: len(graph.context), len(graph.context):]
    if weights.size == 0:
        return dict.fromkeys(STATISTICS, 0.0)
    return {"mean_weight": float(weights.mean()), "max_weight": float(weights.max()),
            "close_pairs": float((weights >= 0.5).sum())}


def statistics_of(featurizer: Any, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> dict[str, np.ndarray]:
    graphs = [featurizer.pair_graph(c, r) for c, r in zip(contexts, responses)]
    rows = [graph_statistics(g) for g in graphs]
    return {s: np.array([r[s] for r in rows]) for s in STATISTICS}


def validation_accuracy(featurizer: Any, examples: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """statistic -> negative kind -> ``{"accuracy", "ties"}`` (module docstring)."""
    positive = statistics_of(featurizer, examples["contexts"], examples["positive"])
    out: dict[str, dict[str, dict[str, float]]] = {s: {} for s in STATISTICS}
    for kind in NEGATIVES:
        negative = statistics_of(featurizer, examples["contexts"], examples[kind])
        for s in STATISTICS:
            wins, ties = float(np.mean(positive[s] > negative[s])), float(np.mean(positive[s] == negative[s]))
            out[s][kind] = {"accuracy": wins + ties / 2, "ties": ties}
    return out


def human_spearman(featurizer: Any) -> dict[str, dict[str, float]]:
    """set -> statistic -> pooled Spearman with the human coherence ratings."""
    out = {}
    for name in HUMAN_SETS:
        items = load_grade(name)
        stats = statistics_of(featurizer, [it.context for it in items], [it.response for it in items])
        out[name] = {s: correlate(list(stats[s]), [it.score for it in items]).spearman for s in STATISTICS}
    return out


def render(result: dict[str, Any]) -> str:
    val, human = result["validation"], result["human_spearman"]
    rows = [[s] + [f"{fmt(val[s][k]['accuracy'])} ({fmt(val[s][k]['ties'], 2)})" for k in NEGATIVES]
            + [fmt(human[n][s]) for n in HUMAN_SETS] for s in STATISTICS]
    return "\n".join([
        f"Untrained keyword-graph statistics of GRADE's graph input ({result['model']}; {result['n_validation']} "
        "DailyDialog validation contexts): accuracy of the true response vs each negative (share of ties), and "
        "pooled Spearman with the human ratings",
        format_table(["statistic"] + [f"vs {k} (ties)" for k in NEGATIVES] + [f"human {n}" for n in HUMAN_SETS], rows),
        "reference: the learned graph branch alone 0.56-0.65 on the same validation pairs; the untrained mpnet cosine "
        "0.831 (grade-graph-validation.txt)",
    ])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="dialeval/grade-dailydialog")
    parser.add_argument("--work", type=Path, default=cache_dir() / "grade-train" / "all-mpnet-base-v2-t2")
    parser.add_argument("--validation", type=int, default=2000)
    parser.add_argument("--save", type=Path, default=None, help="JSON path; the table goes beside it as .txt")
    args = parser.parse_args(argv)
    path = args.work / f"validation-{args.validation}-s0-examples.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no cached validation examples; run python training/grade.py (--work {args.work})")
    from dialeval.grade.scorer import GradeScorer

    featurizer = GradeScorer(args.model).featurizer
    examples = json.loads(path.read_text())
    result = {"model": args.model, "n_validation": len(examples["contexts"]),
              "validation": validation_accuracy(featurizer, examples), "human_spearman": human_spearman(featurizer)}
    text = render(result)
    print(text)
    if args.save:
        args.save.write_text(json.dumps(result, indent=1))
        args.save.with_suffix(".txt").write_text(text + "\n")
    return result


if __name__ == "__main__":
    main()
