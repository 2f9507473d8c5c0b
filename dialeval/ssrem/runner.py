"""How SSREM scores generic items (context, response, references).
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.results import ItemScores, split_result


def run_ssrem(items: Sequence[dict], model: str | None = None, scaling: str = "model", mover: str = "sms",
              word_vectors: str | None = None, device: str | None = None) -> ItemScores:
    """SSREM (Bak & Oh 2020, :mod:`dialeval.ssrem.scorer`) of each item's ``response`` given its ``context``
    and ``references``. ``scaling="model"`` by default: ``dialeval score`` passes chunks, and the
    set's min-max would make a score depend on its chunk; ``scaling="set"`` is the paper's
    normalisation over a whole set."""
    from dialeval.ssrem.scorer import DEFAULT_MODEL, cached_scorer

    for i, item in enumerate(items):
        if not item.get("references"):
            raise ValueError(f"item {i}: ssrem needs a non-empty 'references' list")
    result = cached_scorer(model or DEFAULT_MODEL, word_vectors, device).score(
        [it["context"] for it in items], [it["response"] for it in items], [it["references"] for it in items],
        scaling=scaling, mover=mover)
    return split_result(result)
