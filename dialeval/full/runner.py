"""How FULL scores generic items (``context``, ``response``) and which model it loads by default.
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.held import held
from dialeval.core.results import ItemScores, split_result
from dialeval.models import preferred_model

# The precisions `precision="auto"` may choose (dialeval.core.precision), those that passed the fidelity
# rule against float32 (per-item Spearman >= 0.999, no grid cell moved by more than 0.005;
# benchmarks/precision.py): not measured apart; FED's path and model fail the per-item rule (int8 0.44,
# bfloat16 0.97, benchmarks/results/precision.md), so auto is float32.
AUTO_PRECISIONS: tuple[str, ...] = ()

# The bundled offline stand-in (hub/smollm2-dialogue), its local build, and the un-tuned base.
STAND_INS = ("dialeval/smollm2-dialogue", "smollm2-dialogue")


def default_full_model() -> str:
    """The paper's ``facebook/blenderbot-400M-distill`` if it can be had now (a local or cached copy,
    or a reachable Hub; offline this is decided at once), else the bundled dialogue adapter
    ``dialeval/smollm2-dialogue``, a ``smollm2-dialogue`` under ``$DIALEVAL_MODELS``, or the
    un-tuned SmolLM2-135M-Instruct, as FED falls back from DialoGPT-large; the signature names it."""
    from dialeval.core.lm import LOCAL_LM
    from dialeval.full.scorer import DEFAULT_MODEL

    return preferred_model(DEFAULT_MODEL, *STAND_INS, LOCAL_LM)


@held(maxsize=2)
def full_scorer(model: str | None, batch_size: int, device: str | None, lookback: int, precision: str):
    """One loaded FULL model per (model, batch_size, device, lookback, precision); the variant is chosen per call."""
    from dialeval.full.scorer import FULLScorer

    return FULLScorer(model or default_full_model(), device=device, batch_size=batch_size, lookback=lookback,
                      precision=precision)


def run_full(
    items: Sequence[dict], model: str | None = None, variant: str | None = None, level: str = "turn",
    lookback: int = 50, batch_size: int = 32, device: str | None = None, progress: bool = True,
    precision: str | None = None,
) -> ItemScores:
    """FULL of each item: at turn level its ``response`` after its ``context``, at dialog level the
    conversation ``context + [response]``, in ``variant`` (default
    :data:`dialeval.full.scorer.DEFAULT_VARIANT`; the signature names it). ``precision``: the LM's
    forward (:mod:`dialeval.core.precision`; ``None`` is float32, ``"auto"`` chooses among
    :data:`AUTO_PRECISIONS`)."""
    from dialeval.core.options import check_device
    from dialeval.core.precision import runner_precision

    device = check_device(device)
    scorer = full_scorer(model, batch_size, device, lookback, runner_precision(precision, device, AUTO_PRECISIONS))
    result = scorer.score([it["context"] for it in items], [it["response"] for it in items], level=level,
                          variant=variant, progress=progress)
    return split_result(result)
