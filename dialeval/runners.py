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


def preferred_model(hub_id: str, *local_names: str) -> str:
    """``hub_id`` if it can be had (local copy or reachable Hub), else the first of ``local_names``
    built under ``models_dir()``, else the last of them (loading it then builds it or raises the
    resolver's error, which names the training command)."""
    from dialeval.models import ModelNotFoundError, models_dir, resolve_model

    try:
        resolve_model(hub_id)
        return hub_id
    except ModelNotFoundError:
        return next((n for n in local_names if (models_dir() / n).is_dir()), local_names[-1])


def default_dialogue_model() -> str:
    """FED's model when none is named: DialoGPT-large if it can be had, else the local stand-ins.

    Offline that is the fine-tuned ``smollm2-dialogue`` when ``training/finetune_lm.py`` has built
    it, else the un-tuned SmolLM2-135M-Instruct; the result's signature names the model used.
    """
    from dialeval.fed import DEFAULT_MODEL
    from dialeval.lm import LOCAL_LM

    return preferred_model(DEFAULT_MODEL, FED_LOCAL_MODEL, LOCAL_LM)


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


HOLISTIC_LOCAL_MODEL = "smollm2-dailydialog"  # built by: python training/finetune_lm.py --preset dailydialog


def default_holistic_model() -> str:
    """Holistic coherence/fluency LM: GPT-2 if it can be had, else the local DailyDialog fine-tune,
    else the un-tuned SmolLM2-135M-Instruct."""
    from dialeval.holistic import DEFAULT_LM
    from dialeval.lm import LOCAL_LM

    return preferred_model(DEFAULT_LM, HOLISTIC_LOCAL_MODEL, LOCAL_LM)


def default_nli_model() -> str:
    """roberta-large-mnli if it can be had, else the local MiniLM NLI model built by training/nli.py."""
    from dialeval.nli import DEFAULT_NLI, LOCAL_NLI

    return preferred_model(DEFAULT_NLI, LOCAL_NLI, DEFAULT_NLI)


@functools.lru_cache(maxsize=2)
def likelihood_scorer(model: str | None, batch_size: int, device: str | None):
    from dialeval.holistic import LikelihoodScorer

    return LikelihoodScorer(model or default_holistic_model(), device=device, batch_size=batch_size)


@functools.lru_cache(maxsize=2)
def consistency_scorer(nli: str | None, batch_size: int, device: str | None):
    from dialeval.holistic import ConsistencyScorer

    return ConsistencyScorer(nli or default_nli_model(), device=device, batch_size=batch_size)


def _context_groups(items: Sequence[dict]) -> list[list[int]]:
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(tuple(item["context"]), []).append(i)
    return list(groups.values())


def run_holistic(
    items: Sequence[dict], aspects: Sequence[str] = ("coherence", "fluency", "diversity", "consistency"),
    model: str | None = None, nli: str | None = None, cutoff: float | str | None = "auto",
    batch_size: int = 16, device: str | None = None,
) -> ItemScores:
    """Holistic aspects of each item: coherence of ``response`` to ``context``, fluency of
    ``response``, consistency with the responder's earlier turns in ``context`` (alternating), and
    diversity of all responses given to the same context among ``items`` (each item gets its
    group's value; NaN for a context answered once; ``dialeval score`` passes chunks of
    ``--chunk-size`` items, so keep one context's lines within a chunk). Coherence and fluency are
    normalised with the cutoff stored with the checkpoint when it has one (``cutoff="auto"``: a
    percentile of a chunk would make scores depend on the chunking), else the 5th percentile of
    these items."""
    from dialeval.holistic import ASPECTS, diversity, diversity_signature

    if isinstance(aspects, str):
        aspects = [aspects]
    unknown = [a for a in aspects if a not in ASPECTS]
    if unknown:
        raise ValueError(f"unknown holistic aspect(s) {unknown}; choose from {ASPECTS}")
    responses = [it["response"] for it in items]
    per_item: dict[str, list[float]] = {}
    signatures = []
    for aspect in aspects:
        if aspect in ("coherence", "fluency"):
            scorer = likelihood_scorer(model, batch_size, device)
            result = scorer.score(aspect, responses, [it["context"] for it in items], cutoff=cutoff)
        elif aspect == "consistency":
            result = consistency_scorer(nli, batch_size, device).score([it["context"] for it in items], responses)
        else:
            result = {"diversity_scores": [float("nan")] * len(items), "signature": diversity_signature()}
            groups = [g for g in _context_groups(items) if len(g) > 1]
            if groups:
                values = diversity([[responses[i] for i in g] for g in groups])["diversity_scores"]
                for group, value in zip(groups, values):
                    for i in group:
                        result["diversity_scores"][i] = value
        per_item.update({k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")})
        signatures.append(result["signature"])
    return per_item, " ; ".join(signatures)


RUNNERS: dict[str, Runner] = {"multiref": run_multiref, "fed": run_fed, "holistic": run_holistic}


def get_runner(metric: str) -> Runner:
    if metric not in RUNNERS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(RUNNERS)}")
    return RUNNERS[metric]
