"""Multi-reference evaluation of dialogue responses (Gupta et al. 2019, SIGDIAL).

Quality (Eq. 1): each sub-metric d is computed against every reference and the best one counts,
``score(h, R) = max_{r in R} d(h, r)``. Sub-metrics: BLEU-1..4, METEOR, ROUGE-L (see
:mod:`dialeval.multiref.overlap`, :mod:`dialeval.multiref.meteor`), Embedding Average, Vector Extrema, Greedy
Matching (see :mod:`dialeval.multiref.embedding`).

Diversity, for a group of hypotheses H a model gave to one context:

* referenced recall (Eq. 2): ``recall_d(H, R) = (1/|R|) sum_{r in R} max_{h in H} d(h, r)``, how
  many of the valid references the group covers, for every quality sub-metric d;
* unreferenced Distinct-1/2/3 and ``self_bleu_diversity = 1 - Self-BLEU-4`` (higher = more
  diverse), both within the group.

Two toolings (every choice goes into the result's signature):

=============  =========================================  ======================================
choice         ``tooling="paper"`` (the authors' scorer)   ``tooling="dialeval"``
=============  =========================================  ======================================
tokens         lower-case, whitespace split                lower-case, regex (:mod:`dialeval.core.text`)
BLEU           NLTK method 1, BLEU-3 weights 0.33 x 3      NLTK method 1, weights 1/n
METEOR         METEOR 1.5 jar (``meteor="auto"``: the jar  NLTK ``single_meteor_score``
               when Java is present, else NLTK)
ROUGE-L beta   1.2 (pycocoevalcap)                         1.0 (F1)
unknown words  the mean vector (nlg-eval)                  skipped
Distinct-n     distinct n-grams / tokens                   distinct n-grams / n-grams
=============  =========================================  ======================================

``bleu="coco"`` swaps in nlg-eval's own (unsmoothed) sentence BLEU, :func:`overlap.coco_bleu`;
the paper's Table 4 BLEU is NLTK's (it reproduces the printed single-reference values exactly).
Empty or whitespace-only predictions are hypotheses with no token: they score 0 and count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tqdm.auto import tqdm

from dialeval.multiref import embedding as embedding_metrics, overlap
from dialeval.multiref.scales import SCALES
from dialeval.core.options import check_choice, check_names, check_number
from dialeval.core.resources import GLOVE_NAME, WordVectors, load_word_vectors, load_wordnet
from dialeval.core.degenerate import apply_policy, response_flags
from dialeval.core.results import make_signature, summarize
from dialeval.core.text import (
    TOKENIZER_NAME, WHITESPACE_TOKENIZER_NAME, check_reference_lists, check_texts, tokenize,
    whitespace_tokenize,
)

BLEU_METRICS = ("bleu1", "bleu2", "bleu3", "bleu4")
EMBEDDING_METRICS = ("embedding_average", "vector_extrema", "greedy_matching")
QUALITY_METRICS = BLEU_METRICS + ("meteor", "rougeL") + EMBEDDING_METRICS
DISTINCT_ORDERS = (1, 2, 3)
SELF_BLEU_ORDER = 4
METEOR_CHOICES = ("auto", "jar", "nltk")
BLEU_CHOICES = ("nltk", "coco")
CONFIGS = ("default", "quality", "diversity")

Tokens = list[str]
BatchScorer = Callable[[list[tuple[Tokens, Tokens]]], list[float]]


@dataclass(frozen=True)
class Tooling:
    """The scoring choices one tooling makes (see the module docstring's table)."""

    name: str
    tokenizer: Callable[[str], list[str]]
    tokenizer_name: str
    bleu_weights: dict[int, tuple[float, ...]]
    meteor: str
    rouge_beta: float
    oov: str
    distinct: str


TOOLINGS = {
    "paper": Tooling("paper", whitespace_tokenize, WHITESPACE_TOKENIZER_NAME, overlap.PAPER_BLEU_WEIGHTS,
                     meteor="auto", rouge_beta=1.2, oov="mean", distinct="tokens"),
    "dialeval": Tooling("dialeval", tokenize, TOKENIZER_NAME, {n: overlap.bleu_weights(n) for n in range(1, 5)},
                        meteor="nltk", rouge_beta=1.0, oov="skip", distinct="ngrams"),
}
DEFAULT_TOOLING = "paper"


def check_config(name: str | None) -> str:
    """The evaluate configuration (``None`` / ``"default"`` / ``"quality"`` mean quality)."""
    return check_choice("multiref configuration", name or "default", CONFIGS)


def resolve_meteor(choice: str) -> str:
    """``"auto"`` -> ``"jar"`` when Java and pycocoevalcap's jar are present, else ``"nltk"``."""
    from dialeval.multiref.meteor import meteor_available

    check_choice("meteor", choice, METEOR_CHOICES)
    if choice == "auto":
        return "jar" if meteor_available() else "nltk"
    return choice


class MultiRefScorer:
    """Scores responses against one or more references; loads WordNet / vectors / the JVM only if used.

    Args:
        metrics: the quality sub-metrics to compute (default: all of ``QUALITY_METRICS``).
        word_vectors: ``None`` for GloVe 6B 50d, or a GloVe / word2vec text file.
        rouge_beta: recall weight of ROUGE-L's F-measure (default: the tooling's, 1.2 or 1.0).
        tooling: ``"paper"`` (Gupta et al.'s scorer) or ``"dialeval"`` (module docstring).
        meteor: ``"jar"`` (METEOR 1.5, needs Java), ``"nltk"`` or ``"auto"`` (default: the tooling's).
        bleu: ``"nltk"`` (smoothing method 1, the paper's) or ``"coco"`` (nlg-eval's sentence BLEU).
    """

    def __init__(
        self, metrics: Sequence[str] | str = QUALITY_METRICS, word_vectors: str | None = None,
        rouge_beta: float | None = None, tooling: str = DEFAULT_TOOLING, meteor: str | None = None,
        bleu: str = "nltk",
    ) -> None:
        self.metrics = check_names("metrics", metrics, QUALITY_METRICS)
        self.tooling = TOOLINGS[check_choice("tooling", tooling, TOOLINGS)]
        if word_vectors is not None and not isinstance(word_vectors, str):
            raise ValueError(f"word_vectors must be a path (str) or None, got {word_vectors!r}")
        self.word_vectors = word_vectors
        beta = self.tooling.rouge_beta if rouge_beta is None else rouge_beta
        self.rouge_beta = float(check_number("rouge_beta", beta, minimum=0, strict_minimum=True))
        self.bleu = check_choice("bleu", bleu, BLEU_CHOICES)
        meteor = check_choice("meteor", self.tooling.meteor if meteor is None else meteor, METEOR_CHOICES)
        self.meteor = resolve_meteor(meteor) if "meteor" in self.metrics else None
        self._scorers = {m: self._make_scorer(m) for m in self.metrics}

    def _make_scorer(self, name: str) -> BatchScorer:
        if name in BLEU_METRICS:
            n = int(name[-1])
            if self.bleu == "coco":
                return lambda pairs: [overlap.coco_bleu(h, [r], n) for h, r in pairs]
            weights = self.tooling.bleu_weights[n]
            return lambda pairs: [overlap.bleu(h, [r], n, weights) for h, r in pairs]
        if name == "meteor":
            if self.meteor == "jar":
                from dialeval.multiref.meteor import shared_meteor

                jvm = shared_meteor()
                return lambda pairs: jvm.score([(" ".join(h), " ".join(r)) for h, r in pairs])
            wordnet = load_wordnet()
            return lambda pairs: [overlap.meteor(h, r, wordnet) for h, r in pairs]
        if name == "rougeL":
            return lambda pairs: [overlap.rouge_l(h, r, self.rouge_beta) for h, r in pairs]
        vectors: WordVectors = load_word_vectors(self.word_vectors)
        function = getattr(embedding_metrics, name)
        oov = self.tooling.oov
        return lambda pairs: [function(h, r, vectors, oov) for h, r in pairs]

    def tokenize(self, text: str) -> Tokens:
        """The tooling's tokens of ``text``."""
        return self.tooling.tokenizer(text)

    def signature(self, references: Sequence[Sequence[str]] | None, mode: str) -> str:
        """Every scoring choice in force (see :func:`dialeval.core.results.make_signature`)."""
        counts = {len(r) for r in references} if references else {0}
        nrefs = str(counts.pop()) if len(counts) == 1 else "var"
        has = set(self.metrics).intersection
        bleu = None
        if has(BLEU_METRICS) or mode == "diversity":
            bleu = "coco" if self.bleu == "coco" else "nltk-method1"
            if self.bleu == "nltk" and self.tooling.name == "paper" and "bleu3" in self.metrics:
                bleu += "-bleu3w0.33"
        uses_vectors = bool(has(EMBEDDING_METRICS))
        return make_signature(
            "multiref", mode=mode, tooling=self.tooling.name, nrefs=nrefs, tok=self.tooling.tokenizer_name,
            bleu=bleu,
            meteor=({"jar": "1.5-jar-norm", "nltk": "nltk"}[self.meteor] if self.meteor else None),
            rougeL_beta=self.rouge_beta if "rougeL" in self.metrics else None,
            emb=(self.word_vectors or GLOVE_NAME) if uses_vectors else None,
            oov=self.tooling.oov if uses_vectors else None,
            distinct=f"per-{self.tooling.distinct[:-1]}" if mode == "diversity" else None,
        )

    def score_pairs(self, pairs: list[tuple[Tokens, Tokens]]) -> dict[str, list[float]]:
        """Single-reference scores of (hypothesis, reference) token-list pairs, batched per sub-metric."""
        return {m: scorer(pairs) for m, scorer in self._scorers.items()}

    def pair_scores(self, hypothesis: Tokens, reference: Tokens) -> dict[str, float]:
        """Single-reference scores of one pair of token lists, one per selected sub-metric."""
        return {m: v[0] for m, v in self.score_pairs([(hypothesis, reference)]).items()}

    def quality(
        self, predictions: Sequence[str], references: Sequence[Any], progress: bool = False
    ) -> dict[str, Any]:
        """Eq. 1: every sub-metric as the max over each prediction's references; an empty, word-less
        or repetitive prediction is not scored, gets every sub-metric's worst value and its flag in
        ``flags`` (:mod:`dialeval.core.degenerate`)."""
        predictions, references = check_quality_inputs(predictions, references)
        flags = [response_flags(p) for p in predictions]
        pairs, owner = [], []
        for i, (prediction, refs) in enumerate(
            tqdm(zip(predictions, references), total=len(predictions), disable=not progress, desc="multiref")
        ):
            if flags[i]:
                continue
            hyp = self.tokenize(prediction)
            for ref in refs:
                pairs.append((hyp, self.tokenize(ref)))
                owner.append(i)
        per_item: dict[str, list[float]] = {}
        scored = self.score_pairs(pairs) if pairs else {m: [] for m in self._scorers}  # all flagged: no pair
        for m, scores in scored.items():
            best = [float("-inf")] * len(predictions)
            for i, s in zip(owner, scores):
                best[i] = max(best[i], s)
            per_item[m] = best
        return summarize(apply_policy(per_item, flags, SCALES), self.signature(references, "quality"), flags, SCALES)

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
        groups, references = check_diversity_inputs(groups, references)
        referenced = any(references)
        hyps = [[self.tokenize(h) for h in group] for group in groups]
        recall = self._recall(hyps, [[self.tokenize(r) for r in refs] for refs in references]) if referenced else {}
        per_item: dict[str, list[float]] = dict(recall)
        weights = self.tooling.bleu_weights[SELF_BLEU_ORDER]
        for group in tqdm(hyps, disable=not progress, desc="diversity"):
            for n in DISTINCT_ORDERS:
                per_item.setdefault(f"distinct{n}", []).append(overlap.distinct_n(group, n, self.tooling.distinct))
            per_item.setdefault("self_bleu_diversity", []).append(
                1.0 - overlap.self_bleu(group, SELF_BLEU_ORDER, weights)
            )
        return summarize(per_item, self.signature(references, "diversity"))

    def _recall(self, hyps: list[list[Tokens]], refs: list[list[Tokens]]) -> dict[str, list[float]]:
        """Eq. 2 per group (NaN for a group without references), all pairs scored in one batch."""
        pairs, where = [], []
        for g, (group, group_refs) in enumerate(zip(hyps, refs)):
            for j, ref in enumerate(group_refs):
                for hyp in group:
                    pairs.append((hyp, ref))
                    where.append((g, j))
        out: dict[str, list[float]] = {}
        for m, scores in self.score_pairs(pairs).items():
            best: dict[tuple[int, int], float] = {}
            for key, s in zip(where, scores):
                best[key] = max(best.get(key, float("-inf")), s)
            out[f"recall_{m}"] = [
                sum(best[(g, j)] for j in range(len(group_refs))) / len(group_refs) if group_refs else float("nan")
                for g, group_refs in enumerate(refs)
            ]
        return out


def check_quality_inputs(predictions: Any, references: Any) -> tuple[list[str], list[list[str]]]:
    """Predictions: a non-empty list of strings (empty strings allowed: they score 0). References:
    one non-empty string, or a non-empty list of them, per prediction. ``ValueError`` otherwise."""
    predictions = check_texts(predictions, "predictions", allow_empty=True)
    return predictions, check_reference_lists(references, len(predictions))


def check_diversity_inputs(groups: Any, references: Any) -> tuple[list[list[str]], list[list[str]]]:
    """Groups: a non-empty list of lists of >= 2 strings (empty strings allowed). References: ``None``
    or one list per group, each ``[]`` or a list of non-empty strings. ``ValueError`` otherwise."""
    if isinstance(groups, str) or not isinstance(groups, Sequence) or len(groups) == 0:
        raise ValueError("predictions must be a non-empty list of groups (lists of strings)")
    groups = [check_texts(g, f"predictions[{i}]", allow_empty=True) for i, g in enumerate(groups)]
    for i, g in enumerate(groups):
        if len(g) < 2:
            raise ValueError(f"predictions[{i}] has {len(g)} hypothesis; diversity needs >= 2")
    if references is None:
        return groups, [[] for _ in groups]
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise ValueError(f"references must be a list of lists of strings, got {type(references).__name__}")
    if len(references) != len(groups):
        raise ValueError(f"references has {len(references)} items but there are {len(groups)} groups")
    return groups, [
        [] if isinstance(r, Sequence) and not isinstance(r, str) and len(r) == 0 else check_texts(r, f"references[{i}]")
        for i, r in enumerate(references)
    ]
