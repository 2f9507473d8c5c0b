"""How each metric scores generic dialogue items, for the CLI and the benchmarks.

An item is a dict in the generic format of :mod:`dialeval.data`: ``context`` (list of turns),
``response`` and, for referenced metrics, ``references``. A runner takes a list of items and
returns per-item scores (``{sub-metric: [score per item]}``) and the result's signature.
Runners load their models once per process (cached on first use).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

ItemScores = tuple[dict[str, list[float]], str]
Runner = Callable[..., ItemScores]


def _split(result: dict[str, Any]) -> ItemScores:
    per_item = {k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")}
    return per_item, result["signature"]


@functools.lru_cache(maxsize=4)
def _multiref_scorer(metrics: tuple[str, ...] | None, word_vectors: str | None):
    from dialeval.multiref import QUALITY_METRICS, MultiRefScorer

    return MultiRefScorer(metrics or QUALITY_METRICS, word_vectors)


def run_multiref(
    items: Sequence[dict], metrics: Sequence[str] | None = None, word_vectors: str | None = None
) -> ItemScores:
    """Multi-reference quality of each item's response against its references."""
    for i, item in enumerate(items):
        if not item.get("references"):
            raise ValueError(f"item {i}: multiref needs a non-empty 'references' list")
    scorer = _multiref_scorer(tuple(metrics) if metrics else None, word_vectors)
    return _split(scorer.quality([it["response"] for it in items], [it["references"] for it in items]))


FED_LOCAL_MODEL = "smollm2-dialogue"  # built by: python training/finetune_lm.py --preset dialogue


def default_dialogue_model() -> str:
    """FED's model when none is named: DialoGPT-large if it can be had, else the local stand-ins.

    Offline that is the fine-tuned ``smollm2-dialogue`` when ``training/finetune_lm.py`` has built
    it, else the un-tuned SmolLM2-135M-Instruct; the result's signature names the model used.
    """
    from dialeval.fed import DEFAULT_MODEL
    from dialeval.lm import LOCAL_LM
    from dialeval.models import ModelNotFoundError, models_dir, resolve_model

    try:
        resolve_model(DEFAULT_MODEL)
        return DEFAULT_MODEL
    except ModelNotFoundError:
        return FED_LOCAL_MODEL if (models_dir() / FED_LOCAL_MODEL).is_dir() else LOCAL_LM


@functools.lru_cache(maxsize=2)
def fed_scorer(model: str | None, mode: str, batch_size: int, device: str | None):
    from dialeval.fed import FEDScorer

    return FEDScorer(model or default_dialogue_model(), device=device, batch_size=batch_size, mode=mode)


def run_fed(
    items: Sequence[dict], model: str | None = None, mode: str = "reference", level: str = "turn",
    batch_size: int = 32, device: str | None = None, progress: bool = False,
) -> ItemScores:
    """FED of each item's conversation, ``context + [response]`` (the response rated at turn level)."""
    scorer = fed_scorer(model, mode, batch_size, device)
    conversations = [list(it["context"]) + [it["response"]] for it in items]
    return _split(scorer.score(conversations, level=level, progress=progress))


RUNNERS: dict[str, Runner] = {"multiref": run_multiref, "fed": run_fed}


def get_runner(metric: str) -> Runner:
    if metric not in RUNNERS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(RUNNERS)}")
    return RUNNERS[metric]
