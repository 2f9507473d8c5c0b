"""How FED scores generic items: the conversation ``context + [response]``.
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.held import held
from dialeval.core.results import ItemScores, split_result
from dialeval.models import preferred_model

# The precisions `precision="auto"` may choose (dialeval.core.precision), those that passed the fidelity
# rule against float32 (per-item Spearman >= 0.999, no grid cell moved by more than 0.005;
# benchmarks/precision.py): none passes: on 64 items int8 0.44, bfloat16 0.97 per item
# (benchmarks/results/precision.md), so auto is float32.
AUTO_PRECISIONS: tuple[str, ...] = ()


FED_LOCAL_MODEL = "gemma3-dialogue"  # built by: python training/finetune_lm.py --preset dialogue --base gemma3-270m


def default_dialogue_model() -> str:
    """FED's model when none is named: DialoGPT-large if it can be had, else the local stand-ins.

    Offline that is the bundled LoRA dialogue adapter over Gemma-3-270M, ``dialeval/gemma3-dialogue``
    (``hub/``; its base from ``dialeval install-bases gemma3``), else a ``gemma3-dialogue`` built by
    ``training/finetune_lm.py --base gemma3-270m`` under ``$DIALEVAL_MODELS``, else the un-tuned
    SmolLM2-135M-Instruct; the result's signature names the model used. It was chosen over the
    SmolLM2 adapter by bits per character on DailyDialog validation (0.972 against 1.053,
    ``benchmarks/results/lm-bits-per-char.json``), no human rating read.
    """
    from dialeval.fed.scorer import DEFAULT_MODEL
    from dialeval.models.hub import NAMESPACE
    from dialeval.core.lm import LOCAL_LM

    return preferred_model(DEFAULT_MODEL, f"{NAMESPACE}/{FED_LOCAL_MODEL}", FED_LOCAL_MODEL, LOCAL_LM)


@held(maxsize=2)
def fed_scorer(model: str | None, batch_size: int, device: str | None, precision: str):
    """One loaded FED model per (model, batch_size, device, precision); the variant is chosen per call."""
    from dialeval.fed.scorer import FEDScorer

    return FEDScorer(model or default_dialogue_model(), device=device, batch_size=batch_size, precision=precision)


def conversations_of(items: Sequence[dict]) -> list[list[str]]:
    """Each item's conversation as FED rates it: ``context + [response]``."""
    return [list(it["context"]) + [it["response"]] for it in items]


def run_fed(
    items: Sequence[dict], model: str | None = None, mode: str | None = None, level: str = "turn",
    batch_size: int = 32, device: str | None = None, progress: bool = True, precision: str | None = None,
) -> ItemScores:
    """FED of each item's conversation, ``context + [response]`` (the response rated at turn level),
    in variant ``mode`` (default :data:`dialeval.fed.scorer.DEFAULT_MODE`; the signature names it).
    ``precision``: the LM's forward (:mod:`dialeval.core.precision`; ``None`` is float32, ``"auto"``
    chooses among :data:`AUTO_PRECISIONS`; the signature names any other than float32)."""
    from dialeval.core.options import check_device
    from dialeval.core.precision import runner_precision

    device = check_device(device)
    scorer = fed_scorer(model, batch_size, device, runner_precision(precision, device, AUTO_PRECISIONS))
    return split_result(scorer.score(conversations_of(items), level=level, progress=progress, mode=mode))
