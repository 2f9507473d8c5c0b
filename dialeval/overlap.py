"""Word-overlap measures on token lists (tokenise with :func:`dialeval.text.tokenize`).

* Sentence BLEU-n (Papineni et al. 2002): NLTK's ``sentence_bleu`` against ONE reference with
  uniform cumulative weights over 1..n-grams and Chen & Cherry smoothing method 1, as the
  multi-reference authors' scorer (which weights BLEU-3 (0.33, 0.33, 0.33); here 1/3 exactly).
* METEOR (Banerjee & Lavie 2005): NLTK's ``single_meteor_score`` (exact, Porter-stem and WordNet
  synonym matching; alpha=0.9, beta=3, gamma=0.5) with the WordNet of :mod:`dialeval.resources`.
* ROUGE-L (Lin 2004): LCS precision P = lcs/|hyp|, recall R = lcs/|ref|,
  F = (1 + b^2) P R / (R + b^2 P); b = 1 gives the F1 reported here.
* Distinct-n (Li et al. 2016): distinct n-grams / all n-grams over a set of sentences.
* Self-BLEU (Zhu et al. 2018): mean over sentences of BLEU-n of each sentence against all the
  others as references.
"""

from __future__ import annotations

from typing import Sequence

from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

_SMOOTHING = SmoothingFunction().method1

Tokens = Sequence[str]


def bleu_weights(n: int) -> tuple[float, ...]:
    """Uniform cumulative weights of BLEU-n: ``(1/n,) * n``."""
    if not 1 <= n <= 4:
        raise ValueError(f"BLEU order must be 1..4, got {n}")
    return (1.0 / n,) * n


def bleu(hypothesis: Tokens, references: Sequence[Tokens], n: int = 4) -> float:
    """Smoothed sentence BLEU-n of ``hypothesis`` against ``references`` (NLTK, method 1).

    With several references NLTK clips n-gram counts by the max count in any reference (the
    original multi-reference BLEU); the dialeval quality scores instead call this once per
    reference and take the max (Gupta et al. 2019, Eq. 1).
    """
    if not hypothesis:
        return 0.0
    return float(
        sentence_bleu(
            [list(r) for r in references], list(hypothesis), weights=bleu_weights(n),
            smoothing_function=_SMOOTHING,
        )
    )


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
    lcs = lcs_length(hypothesis, reference)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(hypothesis), lcs / len(reference)
    return (1 + beta**2) * p * r / (r + beta**2 * p)


def meteor(hypothesis: Tokens, reference: Tokens, wordnet=None) -> float:
    """NLTK METEOR of one hypothesis against one reference (both already lower-cased tokens)."""
    from nltk.translate.meteor_score import single_meteor_score

    from dialeval.resources import load_wordnet

    if not hypothesis or not reference:
        return 0.0
    return float(
        single_meteor_score(list(reference), list(hypothesis), wordnet=wordnet or load_wordnet())
    )


def ngrams(tokens: Tokens, n: int) -> list[tuple[str, ...]]:
    """Contiguous n-grams of ``tokens``."""
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(sentences: Sequence[Tokens], n: int) -> float:
    """Distinct-n: number of distinct n-grams / number of n-grams, pooled over ``sentences``.

    0.0 when the sentences have no n-gram at all.
    """
    grams = [g for s in sentences for g in ngrams(s, n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def self_bleu(sentences: Sequence[Tokens], n: int = 4) -> float:
    """Self-BLEU-n: mean BLEU-n of each sentence against the others; needs >= 2 sentences."""
    if len(sentences) < 2:
        raise ValueError("Self-BLEU needs at least two sentences in a group")
    scores = [
        bleu(s, [o for j, o in enumerate(sentences) if j != i], n) for i, s in enumerate(sentences)
    ]
    return sum(scores) / len(scores)
