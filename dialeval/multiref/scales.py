"""Range, direction and meaning of every multiref sub-score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dataclasses import replace

from dialeval.core.scales import bounded

_MULTIREF_PAIR = {
    **{f"bleu{n}": bounded(f"BLEU-{n}: smoothed {'word' if n == 1 else f'1- to {n}-gram'} precision with a "
                            "brevity penalty, against the best-matching reference") for n in range(1, 5)},
    "meteor": bounded("METEOR: unigram matches (exact, stem, synonym) with a fragmentation penalty, "
                       "against the best-matching reference"),
    "rougeL": bounded("ROUGE-L: longest-common-subsequence F-measure against the best-matching reference"),
    "embedding_average": bounded("cosine of the mean word vectors of response and best-matching reference", -1.0),
    "vector_extrema": bounded("cosine of the per-dimension most extreme word-vector values of response and "
                               "best-matching reference", -1.0),
    "greedy_matching": bounded("mean cosine of each word's best-matching word vector, both ways, against the "
                                "best-matching reference", -1.0),
}
_MULTIREF_DIVERSITY = {
    **{f"recall_{name}": replace(scale, meaning=f"referenced diversity (Eq. 2): {name} of each reference with "
                                               "its best hypothesis of the group, averaged over the references")
       for name, scale in _MULTIREF_PAIR.items()},
    **{f"distinct{n}": bounded(f"Distinct-{n}: distinct {n}-grams of the group's hypotheses over their tokens "
                                "(paper tooling) or n-grams (dialeval tooling); higher = more diverse")
       for n in (1, 2, 3)},
    "self_bleu_diversity": bounded("1 - Self-BLEU-4 of the group's hypotheses against each other; "
                                    "higher = more diverse"),
}
SCALES = {**_MULTIREF_PAIR, **_MULTIREF_DIVERSITY}
