"""How SSREM scores generic items (context, response, references).
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.results import ItemScores, split_result


def run_ssrem(items: Sequence[dict], model: str | None = None, scaling: str = "model", mover: str = "sms",
              word_vectors: str | None = None, device: str | None = None,
              reference_free: bool | None = None) -> ItemScores:
    """SSREM (Bak & Oh 2020, :mod:`dialeval.ssrem.scorer`) of each item's ``response`` given its ``context``
    and ``references``. ``scaling="model"`` by default: ``dialeval score`` passes chunks, and the
    set's min-max would make a score depend on its chunk; ``scaling="set"`` is the paper's
    normalisation over a whole set. ``reference_free=True``: the context fit ``ssrem_f`` alone,
    which needs no references (any given are not read; ``scaling`` and ``mover`` do not apply);
    ``None`` (default, so that the references stored before the option keep their key) or ``False``:
    the full score."""
    from dialeval.ssrem.scorer import DEFAULT_MODEL, cached_scorer

    if not reference_free:
        for i, item in enumerate(items):
            if not item.get("references"):
                raise ValueError(f"item {i}: ssrem needs a non-empty 'references' list (or reference_free=True: "
                                 "the context fit ssrem_f alone)")
    scorer = cached_scorer(model or DEFAULT_MODEL, word_vectors, device)
    contexts, responses = [it["context"] for it in items], [it["response"] for it in items]
    if reference_free:
        return split_result(scorer.score_context_fit(contexts, responses))
    return split_result(scorer.score(contexts, responses, [it["references"] for it in items],
                                     scaling=scaling, mover=mover))
