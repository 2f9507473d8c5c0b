"""Multi-reference evaluation of dialogue responses (Gupta et al. 2019, SIGDIAL).

Quality (Eq. 1): each sub-metric d is computed against every reference and the best one counts,
``score(h, R) = max_{r in R} d(h, r)``. Sub-metrics: BLEU-1..4, METEOR, ROUGE-L (see
:mod:`dialeval.overlap`), Embedding Average, Vector Extrema, Greedy Matching (see
:mod:`dialeval.embedding_metrics`).

Diversity, for a group of hypotheses H a model gave to one context:

* referenced recall (Eq. 2): ``recall_d(H, R) = (1/|R|) sum_{r in R} max_{h in H} d(h, r)``, how
  many of the valid references the group covers, for every quality sub-metric d;
* unreferenced Distinct-1/2/3 and ``self_bleu_diversity = 1 - Self-BLEU-4`` (higher = more
  diverse), both within the group.

All sub-metrics share one tokenizer, :func:`dialeval.text.tokenize` (lower-case, regex).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from tqdm.auto import tqdm

from dialeval import embedding_metrics, overlap
from dialeval.resources import GLOVE_NAME, WordVectors, load_word_vectors, load_wordnet
from dialeval.results import make_signature, summarize
from dialeval.text import TOKENIZER_NAME, check_reference_lists, check_texts, tokenize

BLEU_METRICS = ("bleu1", "bleu2", "bleu3", "bleu4")
EMBEDDING_METRICS = ("embedding_average", "vector_extrema", "greedy_matching")
QUALITY_METRICS = BLEU_METRICS + ("meteor", "rougeL") + EMBEDDING_METRICS
DISTINCT_ORDERS = (1, 2, 3)
SELF_BLEU_ORDER = 4

PairScorer = Callable[[list[str], list[str]], float]


@dataclass
class MultiRefScorer:
    """Scores responses against one or more references; loads WordNet / vectors only if used.

    Args:
        metrics: the quality sub-metrics to compute (default: all of ``QUALITY_METRICS``).
        word_vectors: ``None`` for GloVe 6B 50d, or a GloVe / word2vec text file.
        rouge_beta: recall weight of ROUGE-L's F-measure (1.0 = F1).
    """

    metrics: Sequence[str] = QUALITY_METRICS
    word_vectors: str | None = None
    rouge_beta: float = 1.0
    _pair_scorers: dict[str, PairScorer] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.metrics, str):
            self.metrics = [self.metrics]
        unknown = [m for m in self.metrics if m not in QUALITY_METRICS]
        if unknown or not self.metrics:
            raise ValueError(f"unknown multiref sub-metric(s) {unknown}; choose from {QUALITY_METRICS}")
        self.metrics = tuple(self.metrics)
        self._pair_scorers = {m: self._make_pair_scorer(m) for m in self.metrics}

    def _make_pair_scorer(self, name: str) -> PairScorer:
        if name in BLEU_METRICS:
            n = int(name[-1])
            return lambda h, r: overlap.bleu(h, [r], n)
        if name == "meteor":
            wordnet = load_wordnet()
            return lambda h, r: overlap.meteor(h, r, wordnet)
        if name == "rougeL":
            return lambda h, r: overlap.rouge_l(h, r, self.rouge_beta)
        vectors: WordVectors = load_word_vectors(self.word_vectors)
        function = getattr(embedding_metrics, name)
        return lambda h, r: function(h, r, vectors)

    def signature(self, references: Sequence[Sequence[str]] | None, mode: str) -> str:
        counts = {len(r) for r in references} if references else {0}
        nrefs = str(counts.pop()) if len(counts) == 1 else "var"
        uses_vectors = any(m in EMBEDDING_METRICS for m in self.metrics)
        return make_signature(
            "multiref", mode=mode, nrefs=nrefs, tok=TOKENIZER_NAME, smooth="method1",
            rougeL_beta=self.rouge_beta if "rougeL" in self.metrics else None,
            emb=(self.word_vectors or GLOVE_NAME) if uses_vectors else None,
        )

    def pair_scores(self, hypothesis: list[str], reference: list[str]) -> dict[str, float]:
        """Single-reference scores of token lists, one per selected sub-metric."""
        return {m: scorer(hypothesis, reference) for m, scorer in self._pair_scorers.items()}

    def quality(
        self, predictions: Sequence[str], references: Sequence[Any], progress: bool = False
    ) -> dict[str, Any]:
        """Eq. 1: every sub-metric as the max over each prediction's references."""
        predictions = check_texts(predictions, "predictions")
        references = check_reference_lists(references, len(predictions))
        per_item: dict[str, list[float]] = {m: [] for m in self.metrics}
        items = zip(predictions, references)
        for prediction, refs in tqdm(items, total=len(predictions), disable=not progress, desc="multiref"):
            hyp = tokenize(prediction)
            scores = [self.pair_scores(hyp, tokenize(r)) for r in refs]
            for m in self.metrics:
                per_item[m].append(max(s[m] for s in scores))
        return summarize(per_item, self.signature(references, "quality"))

    def diversity(
        self,
        groups: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]] | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """Diversity of each group of hypotheses: Eq. 2 recall (if references), Distinct-n, Self-BLEU.

        ``references[i]`` are the valid responses to the context of ``groups[i]``; an empty list
        (or ``references=None``) computes only the unreferenced measures.
        """
        if isinstance(groups, str) or not isinstance(groups, Sequence) or len(groups) == 0:
            raise ValueError("predictions must be a non-empty list of groups (lists of strings)")
        groups = [check_texts(g, f"predictions[{i}]") for i, g in enumerate(groups)]
        for i, g in enumerate(groups):
            if len(g) < 2:
                raise ValueError(f"predictions[{i}] has {len(g)} hypothesis; diversity needs >= 2")
        if references is None:
            references = [[] for _ in groups]
        elif len(references) != len(groups):
            raise ValueError(f"references has {len(references)} items but there are {len(groups)} groups")
        references = [
            [] if len(r) == 0 else check_texts(r, f"references[{i}]") for i, r in enumerate(references)
        ]
        referenced = any(references)
        per_item: dict[str, list[float]] = {}
        for group, refs in tqdm(
            zip(groups, references), total=len(groups), disable=not progress, desc="diversity"
        ):
            hyps = [tokenize(h) for h in group]
            if referenced:
                recall = self._recall(hyps, [tokenize(r) for r in refs])
                for m in self.metrics:
                    per_item.setdefault(f"recall_{m}", []).append(recall.get(m, float("nan")))
            for n in DISTINCT_ORDERS:
                per_item.setdefault(f"distinct{n}", []).append(overlap.distinct_n(hyps, n))
            per_item.setdefault("self_bleu_diversity", []).append(
                1.0 - overlap.self_bleu(hyps, SELF_BLEU_ORDER)
            )
        return summarize(per_item, self.signature(references, "diversity"))

    def _recall(self, hyps: list[list[str]], refs: list[list[str]]) -> dict[str, float]:
        if not refs:
            return {}
        best = {m: [] for m in self.metrics}
        for ref in refs:
            scores = [self.pair_scores(h, ref) for h in hyps]
            for m in self.metrics:
                best[m].append(max(s[m] for s in scores))
        return {m: sum(v) / len(v) for m, v in best.items()}
