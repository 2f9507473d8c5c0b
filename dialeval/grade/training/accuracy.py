"""GRADE's held-out measure: pairwise ranking accuracy of the true response against each kind of
negative (DailyDialog validation), for a head in training, the untrained cosine and any checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from dialeval.grade.training.examples import ALL_KINDS
from dialeval.grade.training.split import Split


def pairwise_accuracy(scores: dict[str, Any], present: dict[str, Any] | None = None) -> dict[str, float]:
    """Share of contexts whose true response (``scores["positive"]``) outscores each kind of
    negative in ``scores`` (ties count against it; ``present[kind]``: the contexts that have one, all
    when not given), and the ``mean`` of the paper's three (lexical, embedding, random); arrays or
    tensors, one score per context."""
    positive = np.asarray(scores["positive"])
    out = {}
    for kind in scores:
        if kind != "positive":
            keep = np.asarray(present[kind]) if present and kind in present else np.ones(len(positive), bool)
            out[kind] = float((positive[keep] > np.asarray(scores[kind])[keep]).mean())
    out["mean"] = sum(out[k] for k in ALL_KINDS[1:]) / 3
    return out


@torch.inference_mode()
def heldout_accuracy(model: Any, split: Split, batch_size: int = 64) -> dict[str, float]:
    """``model``: a :class:`~dialeval.grade.training.trainee.Trainee` (anything with its ``head.use_graph``,
    ``eval()`` and ``scores``). Share of validation contexts whose true response outscores each kind of negative, their
    ``mean`` and, for a graph head, ``shuffled_graph_spearman``: the Spearman between the scores of
    all validation pairs (true and negative responses) with their own keyword graphs and with the
    graph of another context's pair (a seeded derangement, as the benchmark's control on the human
    sets; 1.0: the graph branch does not change the ranking) and ``graph_alone``: the mean accuracy
    with the utterance branch zeroed (meaningful for a head trained with ``utterance_dropout``)."""
    from scipy import stats

    from dialeval.grade.benchmark import derangement

    kinds = tuple(split.texts)
    present = {kind: split.present(kind, torch.arange(split.n)).numpy() for kind in kinds}

    def all_scores(graph_order: torch.Tensor | None = None, utterance: bool = True) -> dict[str, torch.Tensor]:
        batches = [model.scores(split, kinds, idx, graph_order, utterance) for idx in torch.arange(split.n).split(batch_size)]
        return {kind: torch.cat([b[kind] for b in batches]).cpu() for kind in kinds}

    model.eval()
    scores = all_scores()
    out = pairwise_accuracy(scores, present)
    if model.head.use_graph:
        out["graph_alone"] = pairwise_accuracy(all_scores(utterance=False), present)["mean"]
        shuffled = all_scores(torch.tensor(derangement(split.n, 0)))
        out["shuffled_graph_spearman"] = float(stats.spearmanr(torch.cat([scores[k] for k in ALL_KINDS]).numpy(),
                                                               torch.cat([shuffled[k] for k in ALL_KINDS]).numpy())[0])
    return out


def cosine_accuracy(split: Split) -> dict[str, float]:
    """The untrained encoder's reference on validation: the share of contexts whose true response has a
    higher cosine of the frozen, L2-normalised embeddings than each kind of negative, and their mean."""
    return pairwise_accuracy({k: (split.ctx * split.resp[split.rows[k]]).sum(1) for k in split.rows},
                             {k: (split.rows[k] >= 0).numpy() for k in split.rows})


def checkpoint_heldout(folder: str | Path, examples: dict[str, Any], graph: bool = True) -> dict[str, float]:
    """:func:`heldout_accuracy` of any saved checkpoint (e.g. the previous bundled model) on cached
    validation examples, through :class:`dialeval.grade.scorer.GradeScorer` (its own encoder and graph)."""
    from dialeval.grade.scorer import GradeScorer

    scorer = GradeScorer(folder)
    return pairwise_accuracy({k: scorer.score(examples["contexts"], examples[k], graph=graph)["grade_scores"]
                              for k in ALL_KINDS})
