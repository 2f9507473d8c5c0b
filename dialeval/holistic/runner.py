"""How holistic scores generic items: coherence, fluency, consistency and diversity per item.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Sequence

from dialeval.core.held import held
from dialeval.core.results import Flags, ItemScores
from dialeval.core.signature import joined
from dialeval.holistic.defaults import DEFAULT_LM, LOCAL_LM_NAME
from dialeval.models import preferred_model

# The precisions `precision="auto"` may choose (dialeval.core.precision), those that passed the fidelity
# rule against float32 (per-item Spearman >= 0.999, no grid cell moved by more than 0.005;
# benchmarks/precision.py): consistency meets the per-item rule in bfloat16 (0.9999), coherence and
# fluency not (0.994), int8 nowhere; the grid was not run under bfloat16 (benchmarks/results/precision.md),
# so none is declared: auto is float32.
AUTO_PRECISIONS: tuple[str, ...] = ()


NLI_LOCAL_MODELS = ("dialeval/minilm-nli", "minilm-nli")  # bundled hub/minilm-nli; built by training/nli.py


def default_holistic_model() -> str:
    """Holistic coherence/fluency LM: the bundled DailyDialog fine-tune ``dialeval/gemma3-dailydialog``
    over Gemma-3-270M (Pang et al. fine-tune GPT-2 on DailyDialog; the stand-in carries its stored
    cutoffs; its base from ``dialeval install-bases gemma3``), else the un-tuned SmolLM2-135M-Instruct
    (its cutoffs are in ``dialeval/holistic/cutoffs.json``, written by ``python -m
    dialeval.holistic.calibration --model smollm2-135m-instruct --write``). The SmolLM2 fine-tune
    ``dialeval/smollm2-dailydialog`` stays bundled as an option."""
    from dialeval.core.lm import LOCAL_LM

    return preferred_model(DEFAULT_LM, LOCAL_LM_NAME, LOCAL_LM)


def default_nli_model() -> str:
    """roberta-large-mnli if it can be had, else the bundled ``dialeval/minilm-nli``, else the local
    MiniLM NLI model built by ``training/nli.py``."""
    from dialeval.core.nli import DEFAULT_NLI

    return preferred_model(DEFAULT_NLI, *NLI_LOCAL_MODELS)


@held(maxsize=2)
def likelihood_scorer(model: str | None, batch_size: int, device: str | None, precision: str):
    from dialeval.holistic.scorer import LikelihoodScorer

    return LikelihoodScorer(model or default_holistic_model(), device=device, batch_size=batch_size, precision=precision)


@held(maxsize=2)
def consistency_scorer(nli: str | None, batch_size: int, device: str | None, precision: str):
    from dialeval.holistic.scorer import ConsistencyScorer

    return ConsistencyScorer(nli or default_nli_model(), device=device, batch_size=batch_size, precision=precision)


def diversity_key(item: dict) -> tuple[str, Any]:
    """What groups items for diversity: the explicit ``group`` field, else the identical context."""
    group = item.get("group")
    return ("group", str(group)) if group is not None else ("context", tuple(item["context"]))


def _diversity_by_group(items: Sequence[dict], population: Sequence[dict]) -> dict[str, Any]:
    """A result (``diversity_scores``, ``signature``, ``flags``) in which each item gets the diversity
    of the real responses in ``population`` sharing its :func:`diversity_key` (NaN when it is the
    only one), so the value does not depend on which other items are scored with it. A degenerate
    response (:mod:`dialeval.core.degenerate`) adds nothing to its group and gets the worst value, 0."""
    from dialeval.core.degenerate import apply_policy, response_flags
    from dialeval.holistic.scales import SCALES
    from dialeval.holistic.scorer import diversity, diversity_signature

    members: dict[tuple[str, Any], list[str]] = {}
    for item in population:
        if not response_flags(item["response"]):
            members.setdefault(diversity_key(item), []).append(item["response"])
    keys = list(dict.fromkeys(k for k in map(diversity_key, items) if len(members.get(k, ())) > 1))
    values = dict(zip(keys, diversity([members[k] for k in keys])["diversity_scores"])) if keys else {}
    flags = [response_flags(it["response"]) for it in items]
    per_item = {"diversity": [values.get(diversity_key(it), math.nan) for it in items]}
    return {"diversity_scores": apply_policy(per_item, flags, SCALES)["diversity"],
            "signature": diversity_signature(), "flags": flags}


@functools.lru_cache(maxsize=4)
def _input_cutoff(model: str | None, batch_size: int, device: str | None, precision: str, aspect: str,
                  reduction: str | None,
                  pmi_weight: float | None, queries: tuple[tuple[str, ...], ...],
                  responses: tuple[str, ...]) -> float | tuple[float, float]:
    """The 5th percentile of the raw ``aspect`` scores of a whole input (computed once per input),
    over its responses that are not degenerate (as :meth:`LikelihoodScorer.score` takes a set's); with
    weighted PMI coherence (the default), its quartiles ``(q25, q75)`` there instead. NaN when all are flagged."""
    from dialeval.holistic.normalisation import check_pmi_weight, check_reduction, percentile_cutoff
    from dialeval.holistic.scorer import likelihood_flags

    kept = [i for i, flags in enumerate(likelihood_flags(aspect, responses, queries)) if not flags]
    if not kept:  # every response flagged: every score is the worst, there is no percentile to take
        return math.nan
    scorer = likelihood_scorer(model, batch_size, device, precision)
    queries, responses = [queries[i] for i in kept], [responses[i] for i in kept]
    weight = check_pmi_weight(aspect, pmi_weight)
    if weight is None:
        return percentile_cutoff(scorer.raw(aspect, responses, queries, reduction))
    reduction = check_reduction(aspect, reduction)
    pmi = scorer.pmi_values(queries, responses, weight, reduction)[1]
    return scorer.resolve_anchors(pmi, "set", weight, reduction)[0]


def _likelihood(aspect: str, items: Sequence[dict], population: Sequence[dict] | None, model: str | None,
                cutoff: Any, reduction: str | None, pmi_weight: float | None, batch_size: int,
                device: str | None, precision: str, alone: dict) -> dict[str, Any]:
    scorer = likelihood_scorer(model, batch_size, device, precision)
    queries = [it["context"] for it in items]
    responses = [it["response"] for it in items]
    label, pmi_weight = None, (pmi_weight if aspect == "coherence" else None)  # fluency has no PMI
    if cutoff == "set" and population is not None:  # the whole input's percentile, never a chunk's
        whole = (tuple(tuple(it["context"]) for it in population), tuple(it["response"] for it in population))
        found = _input_cutoff(model, batch_size, device, precision, aspect, reduction, pmi_weight, *whole)
        if not (isinstance(found, float) and math.isnan(found)):  # else nothing real: the scorer's all-flagged case
            cutoff, label = found, ("q25-q75-of-input" if isinstance(found, tuple) else "p5-of-input")
    return scorer.score(aspect, responses, queries, cutoff=cutoff, reduction=reduction, cutoff_label=label,
                        pmi_weight=pmi_weight, alone=alone)


def run_holistic(
    items: Sequence[dict], aspects: Sequence[str] | str | None = None, model: str | None = None,
    nli: str | None = None, cutoff: float | str = "model", reduction: str | None = None,
    batch_size: int = 16, device: str | None = None, population: Sequence[dict] | None = None,
    pmi_weight: float | None = None, precision: str | None = None,
) -> ItemScores:
    """Holistic aspects of each item: coherence of ``response`` to ``context`` and fluency of
    ``response`` (normalised with the model's stored cutoffs by default; ``cutoff="set"`` takes the
    5th percentile of ``population``, the whole input, when given), consistency with the responder's
    earlier turns in ``context`` (alternating), and diversity of the responses sharing the item's
    ``group`` (or, without one, its exact context) in ``population`` (default: ``items``); NaN for an
    item alone in its group. ``dialeval score`` passes its chunks as ``items`` and the whole file as
    ``population``, so no score depends on the chunking. An item's flags are the union of those its
    aspects set (:mod:`dialeval.core.degenerate`). Coherence is weighted PMI with ``pmi_weight``
    (default 0.85; ``0``: Pang et al.'s coherence; :mod:`dialeval.holistic.scorer`). ``precision``: the
    LM's and the NLI model's forward (:mod:`dialeval.core.precision`; ``None`` is float32, ``"auto"``
    chooses among :data:`AUTO_PRECISIONS`).

    ``aspects=None`` means every aspect whose model is available: a missing model skips its aspects
    with a warning (as ``dialeval examples`` does); aspects named explicitly fail instead.
    """
    from dialeval.holistic.normalisation import CUTOFF_MODES, REDUCTIONS, check_pmi_weight
    from dialeval.holistic.scorer import ASPECTS
    from dialeval.models import ModelNotFoundError
    from dialeval.core.options import check_choice, check_device, check_names, check_number
    from dialeval.core.precision import runner_precision

    explicit = aspects is not None
    aspects = check_names("aspects", aspects, ASPECTS) if explicit else ASPECTS
    check_number("batch_size", batch_size, minimum=1, integer=True)
    device = check_device(device)
    precision = runner_precision(precision, device, AUTO_PRECISIONS)
    if reduction is not None:
        check_choice("reduction", reduction, REDUCTIONS)
    check_pmi_weight("coherence", pmi_weight)
    if not (isinstance(cutoff, (int, float)) and not isinstance(cutoff, bool) and cutoff < 0):
        check_choice("cutoff (or a negative number)", cutoff, CUTOFF_MODES)
    items = list(items)
    per_item: dict[str, list[float]] = {}
    signatures = []
    flags: Flags = [[] for _ in items]  # per item, the union of the flags its aspects set
    alone: dict = {}  # each reply's log P(r | EOS): weighted PMI's second term is fluency's raw score
    for aspect in aspects:
        try:
            if aspect in ("coherence", "fluency"):
                result = _likelihood(aspect, items, population, model, cutoff, reduction, pmi_weight, batch_size,
                                     device, precision, alone)
            elif aspect == "consistency":
                scorer = consistency_scorer(nli, batch_size, device, precision)
                result = scorer.score([it["context"] for it in items], [it["response"] for it in items])
            else:
                result = _diversity_by_group(items, population if population is not None else items)
        except ModelNotFoundError as e:
            if explicit:
                raise
            warnings.warn(f"holistic {aspect} skipped: {e}", stacklevel=2)
            continue
        per_item.update({k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")})
        signatures.append(result["signature"])
        for item_flags, set_by_aspect in zip(flags, result.get("flags", ())):
            item_flags.extend(f for f in set_by_aspect if f not in item_flags)
    if not signatures:
        raise FileNotFoundError("holistic: no aspect could be scored (every model is missing; see the warnings)")
    return ItemScores(per_item, joined(signatures), flags)
