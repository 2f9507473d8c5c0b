"""How SSREM scores generic items (context, response, references).
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.results import ItemScores, split_result

# The precisions `precision="auto"` may choose (dialeval.core.precision), those that passed the fidelity
# rule against float32 (per-item Spearman >= 0.999, no grid cell moved by more than 0.005;
# benchmarks/precision.py): the encoder checkpoint meets the per-item rule in bfloat16 (0.9999), int8 not
# (0.770); the grid was not run under bfloat16 (benchmarks/results/precision.md), so none is declared: auto
# is float32 (the bundled GloVe default runs no model).
AUTO_PRECISIONS: tuple[str, ...] = ()


def run_ssrem(items: Sequence[dict], model: str | None = None, scaling: str = "model", mover: str = "sms",
              word_vectors: str | None = None, device: str | None = None,
              reference_free: bool | None = None, precision: str | None = None) -> ItemScores:
    """SSREM (Bak & Oh 2020, :mod:`dialeval.ssrem.scorer`) of each item's ``response`` given its ``context``
    and ``references``. ``scaling="model"`` by default: ``dialeval score`` passes chunks, and the
    set's min-max would make a score depend on its chunk; ``scaling="set"`` is the paper's
    normalisation over a whole set. ``reference_free=True``: the context fit ``ssrem_f`` alone,
    which needs no references (any given are not read; ``scaling`` and ``mover`` do not apply);
    ``None`` (default, so that the references stored before the option keep their key) or ``False``:
    the full score. ``precision``: the sentence encoder's forward (:mod:`dialeval.core.precision`;
    ``None`` is float32, ``"auto"`` chooses among :data:`AUTO_PRECISIONS`)."""
    from dialeval.core.precision import runner_precision
    from dialeval.ssrem.scorer import DEFAULT_MODEL, cached_scorer

    if not reference_free:
        for i, item in enumerate(items):
            if not item.get("references"):
                raise ValueError(f"item {i}: ssrem needs a non-empty 'references' list (or reference_free=True: "
                                 "the context fit ssrem_f alone)")
    precision = runner_precision(precision, device, AUTO_PRECISIONS)  # as the score cache keys it
    scorer = cached_scorer(model or DEFAULT_MODEL, word_vectors, device, precision)
    contexts, responses = [it["context"] for it in items], [it["response"] for it in items]
    if reference_free:
        return split_result(scorer.score_context_fit(contexts, responses))
    return split_result(scorer.score(contexts, responses, [it["references"] for it in items],
                                     scaling=scaling, mover=mover))
