"""Word-overlap measures on token lists (tokenise with :mod:`dialeval.core.text`).

* Sentence BLEU-n (Papineni et al. 2002), ``bleu``: NLTK's ``sentence_bleu`` against ONE reference
  with cumulative weights over 1..n-grams and Chen & Cherry smoothing method 1 (a zero n-gram
  count becomes 0.1), exactly what Gupta et al.'s ``score_multiref.py`` (``get_max_bleu``) runs and
  what their Table 4 reports. Their weights: 1/n each, except BLEU-3 ``(0.33, 0.33, 0.33)``
  (:data:`PAPER_BLEU_WEIGHTS`; dialeval's own weights are exactly 1/3).
* Sentence BLEU-n as nlg-eval / pycocoevalcap compute it, ``coco_bleu`` (David Chiang's
  ``bleu_scorer`` with ``option="closest"``): clipped matches ``c_k`` (clip = max count in any
  reference) over ``g_k = max(0, len(h) - k + 1)`` hypothesis k-grams,
  ``BLEU-n = prod_{k<=n} ((c_k + 1e-15) / (g_k + 1e-9))^(1/n) * BP``, with
  ``ratio = (len(h) + 1e-15) / (r + 1e-9)``, ``BP = exp(1 - 1/ratio)`` if ratio < 1 else 1 and
  ``r`` the reference length closest to ``len(h)`` (the shorter on a tie). No smoothing: a
  hypothesis with no matching bigram has BLEU-2 ~ 1e-8.
* METEOR (Banerjee & Lavie 2005), ``meteor``: NLTK's ``single_meteor_score`` (exact, Porter-stem and
  WordNet synonym matching; alpha=0.9, beta=3, gamma=0.5). The METEOR 1.5 jar the paper used is
  :mod:`dialeval.multiref.meteor`.
* ROUGE-L (Lin 2004): LCS precision P = lcs/|hyp|, recall R = lcs/|ref|,
  F = (1 + b^2) P R / (R + b^2 P); b = 1 gives F1, pycocoevalcap (and so the paper) uses b = 1.2.
* Distinct-n (Li et al. 2016): distinct n-grams over a set of sentences divided by the number of
  n-grams (``denominator="ngrams"``) or, as Gupta et al. 2019 do, by the number of tokens
  (``denominator="tokens"``).
* Self-BLEU (Zhu et al. 2018): mean over sentences of BLEU-n of each sentence against all the
  others as references.

A hypothesis with no token scores 0 on every measure (as sacrebleu does).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

_SMOOTHING = SmoothingFunction().method1

Tokens = Sequence[str]
# Gupta et al.'s score_multiref.py weights (BLEU-3 is (0.33, 0.33, 0.33), not 1/3 each).
PAPER_BLEU_WEIGHTS = {1: (1.0,), 2: (0.5, 0.5), 3: (0.33, 0.33, 0.33), 4: (0.25, 0.25, 0.25, 0.25)}
_COCO_TINY, _COCO_SMALL = 1e-15, 1e-9


def bleu_weights(n: int) -> tuple[float, ...]:
    """Uniform cumulative weights of BLEU-n: ``(1/n,) * n``."""
    if not 1 <= n <= 4:
        raise ValueError(f"BLEU order must be 1..4, got {n}")
    return (1.0 / n,) * n


def bleu(
    hypothesis: Tokens, references: Sequence[Tokens], n: int = 4, weights: Sequence[float] | None = None
) -> float:
    """Smoothed sentence BLEU-n of ``hypothesis`` against ``references`` (NLTK, method 1).

    ``weights`` default to :func:`bleu_weights` (``PAPER_BLEU_WEIGHTS[n]`` are the authors').
    With several references NLTK clips n-gram counts by the max count in any reference (the
    original multi-reference BLEU); the dialeval quality scores instead call this once per
    reference and take the max (Gupta et al. 2019, Eq. 1).
    """
    weights = tuple(weights) if weights is not None else bleu_weights(n)
    if len(weights) != n:
        raise ValueError(f"BLEU-{n} needs {n} weights, got {weights}")
    if not hypothesis:
        return 0.0
    return float(
        sentence_bleu(
            [list(r) for r in references], list(hypothesis), weights=weights,
            smoothing_function=_SMOOTHING,
        )
    )


def coco_bleu(hypothesis: Tokens, references: Sequence[Tokens], n: int = 4) -> float:
    """Sentence BLEU-n as pycocoevalcap's ``Bleu`` scores one segment (formula in the module doc)."""
    bleu_weights(n)  # validates n
    if not hypothesis:
        return 0.0
    if not references:
        raise ValueError("coco_bleu needs at least one reference")
    length = len(hypothesis)
    log_precision = 0.0
    for k in range(1, n + 1):
        counts = Counter(ngrams(hypothesis, k))
        clip: Counter = Counter()
        for reference in references:
            clip |= Counter(ngrams(reference, k))  # max count in any reference
        correct = sum(min(c, clip[g]) for g, c in counts.items())
        log_precision += math.log((correct + _COCO_TINY) / (max(0, length - k + 1) + _COCO_SMALL))
    score = math.exp(log_precision / n)
    closest = min((abs(len(r) - length), len(r)) for r in references)[1]
    ratio = (length + _COCO_TINY) / (closest + _COCO_SMALL)
    return score * math.exp(1 - 1 / ratio) if ratio < 1 else score


def lcs_length(a: Tokens, b: Tokens) -> int:
    """Length of the longest common subsequence (O(|a||b|) dynamic programme, one row kept)."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_l(hypothesis: Tokens, reference: Tokens, beta: float = 1.0) -> float:
    """ROUGE-L F-measure with recall weight ``beta`` (1.0 = F1; pycocoevalcap uses 1.2)."""
    if not hypothesis or not reference:
        return 0.0
    lcs = lcs_length(hypothesis, reference)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(hypothesis), lcs / len(reference)
    return (1 + beta**2) * p * r / (r + beta**2 * p)


def meteor(hypothesis: Tokens, reference: Tokens, wordnet=None) -> float:
    """NLTK METEOR of one hypothesis against one reference (both already lower-cased tokens)."""
    from nltk.translate.meteor_score import single_meteor_score

    from dialeval.core.resources import load_wordnet

    if not hypothesis or not reference:
        return 0.0
    return float(
        single_meteor_score(list(reference), list(hypothesis), wordnet=wordnet or load_wordnet())
    )


def ngrams(tokens: Tokens, n: int) -> list[tuple[str, ...]]:
    """Contiguous n-grams of ``tokens``."""
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


DISTINCT_DENOMINATORS = ("ngrams", "tokens")


def distinct_n(sentences: Sequence[Tokens], n: int, denominator: str = "ngrams") -> float:
    """Distinct-n pooled over ``sentences``: distinct n-grams / all n-grams (``"ngrams"``) or
    / all tokens (``"tokens"``, Gupta et al. 2019). 0.0 when the denominator is 0."""
    if denominator not in DISTINCT_DENOMINATORS:
        raise ValueError(f"distinct-n denominator must be one of {DISTINCT_DENOMINATORS}, got {denominator!r}")
    grams = [g for s in sentences for g in ngrams(s, n)]
    total = len(grams) if denominator == "ngrams" else sum(len(s) for s in sentences)
    return len(set(grams)) / total if total else 0.0


def self_bleu(sentences: Sequence[Tokens], n: int = 4, weights: Sequence[float] | None = None) -> float:
    """Self-BLEU-n: mean BLEU-n of each sentence against the others; needs >= 2 sentences."""
    if len(sentences) < 2:
        raise ValueError("Self-BLEU needs at least two sentences in a group")
    scores = [
        bleu(s, [o for j, o in enumerate(sentences) if j != i], n, weights) for i, s in enumerate(sentences)
    ]
    return sum(scores) / len(scores)
