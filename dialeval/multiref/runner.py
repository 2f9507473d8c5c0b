"""How multiref scores generic items (``dialeval score``, the benchmarks, the demo).
"""

from __future__ import annotations

import functools
from typing import Sequence

from dialeval.core.results import ItemScores, split_result


@functools.lru_cache(maxsize=4)
def _multiref_scorer(metrics: tuple[str, ...] | None, word_vectors: str | None, tooling: str,
                     meteor: str | None, rouge_beta: float | None, bleu: str):
    from dialeval.multiref.scorer import QUALITY_METRICS, MultiRefScorer

    return MultiRefScorer(QUALITY_METRICS if metrics is None else metrics, word_vectors, rouge_beta, tooling, meteor, bleu)


def run_multiref(
    items: Sequence[dict], metrics: Sequence[str] | str | None = None, word_vectors: str | None = None,
    tooling: str = "paper", meteor: str | None = None, rouge_beta: float | None = None, bleu: str = "nltk",
    population: Sequence[dict] | None = None,
) -> ItemScores:
    """Multi-reference quality of each item's response against its references
    (options as :class:`dialeval.multiref.scorer.MultiRefScorer`; the signature names every choice).

    ``population`` (the whole input, when ``items`` is one chunk of it) decides the signature's
    ``nrefs``, so every chunk of one file carries the same signature."""
    for i, item in enumerate(items):
        if not item.get("references"):
            raise ValueError(f"item {i}: multiref needs a non-empty 'references' list")
    from dialeval.multiref.scorer import QUALITY_METRICS
    from dialeval.core.options import check_names

    names = None if metrics is None else check_names("metrics", metrics, QUALITY_METRICS)
    settings = {"word_vectors": word_vectors, "tooling": tooling, "meteor": meteor, "rouge_beta": rouge_beta,
                "bleu": bleu}
    for name, value in settings.items():  # the scorer cache needs single values (a JSON --option may be a list)
        if isinstance(value, (list, dict)):
            raise ValueError(f"{name} must be a single value, got {value!r}")
    scorer = _multiref_scorer(names, **settings)
    result = scorer.quality([it["response"] for it in items], [it["references"] for it in items])
    if population is not None:
        result["signature"] = scorer.signature([it.get("references") or [] for it in population], "quality")
    return split_result(result)
