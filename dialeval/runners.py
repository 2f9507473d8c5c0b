"""How each metric scores generic dialogue items, for the CLI and the benchmarks.

An item is a dict in the generic format of :mod:`dialeval.data`: ``context`` (list of turns),
``response`` and, for referenced metrics, ``references``. A runner takes a list of items and
returns per-item scores (``{sub-metric: [score per item]}``) and the result's signature.
Runners load their models once per process (cached on first use).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Sequence

ItemScores = tuple[dict[str, list[float]], str]
Runner = Callable[..., ItemScores]


def _split(result: dict[str, Any]) -> ItemScores:
    per_item = {k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")}
    return per_item, result["signature"]


@functools.lru_cache(maxsize=4)
def _multiref_scorer(metrics: tuple[str, ...] | None, word_vectors: str | None, tooling: str,
                     meteor: str | None, rouge_beta: float | None, bleu: str):
    from dialeval.multiref import QUALITY_METRICS, MultiRefScorer

    return MultiRefScorer(QUALITY_METRICS if metrics is None else metrics, word_vectors, rouge_beta, tooling, meteor, bleu)


def run_multiref(
    items: Sequence[dict], metrics: Sequence[str] | str | None = None, word_vectors: str | None = None,
    tooling: str = "paper", meteor: str | None = None, rouge_beta: float | None = None, bleu: str = "nltk",
    population: Sequence[dict] | None = None,
) -> ItemScores:
    """Multi-reference quality of each item's response against its references
    (options as :class:`dialeval.multiref.MultiRefScorer`; the signature names every choice).

    ``population`` (the whole input, when ``items`` is one chunk of it) decides the signature's
    ``nrefs``, so every chunk of one file carries the same signature."""
    for i, item in enumerate(items):
        if not item.get("references"):
            raise ValueError(f"item {i}: multiref needs a non-empty 'references' list")
    from dialeval.multiref import QUALITY_METRICS
    from dialeval.options import check_names

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
    return _split(result)


FED_LOCAL_MODEL = "smollm2-dialogue"  # built by: python training/finetune_lm.py --preset dialogue


def preferred_model(hub_id: str, *local_names: str) -> str:
    """The first of ``hub_id, *local_names`` that can be had now (a local or bundled copy, or a
    reachable Hub), else the last of them (loading it then builds it or raises the resolver's
    error, which names the training command)."""
    from dialeval.models import ModelNotFoundError, resolve_model

    for name in (hub_id, *local_names):
        try:
            resolve_model(name)
            return name
        except (ModelNotFoundError, ValueError):
            continue
    return (hub_id, *local_names)[-1]


def default_dialogue_model() -> str:
    """FED's model when none is named: DialoGPT-large if it can be had, else the local stand-ins.

    Offline that is the bundled LoRA dialogue adapter ``dialeval/smollm2-dialogue`` (``hub/``), else
    a ``smollm2-dialogue`` built by ``training/finetune_lm.py`` under ``$DIALEVAL_MODELS``, else the
    un-tuned SmolLM2-135M-Instruct; the result's signature names the model used.
    """
    from dialeval.fed import DEFAULT_MODEL
    from dialeval.hub import NAMESPACE
    from dialeval.lm import LOCAL_LM

    return preferred_model(DEFAULT_MODEL, f"{NAMESPACE}/{FED_LOCAL_MODEL}", FED_LOCAL_MODEL, LOCAL_LM)


@functools.lru_cache(maxsize=2)
def fed_scorer(model: str | None, batch_size: int, device: str | None):
    """One loaded FED model per (model, batch_size, device); the variant is chosen per call."""
    from dialeval.fed import FEDScorer

    return FEDScorer(model or default_dialogue_model(), device=device, batch_size=batch_size)


def run_fed(
    items: Sequence[dict], model: str | None = None, mode: str | None = None, level: str = "turn",
    batch_size: int = 32, device: str | None = None, progress: bool = False,
) -> ItemScores:
    """FED of each item's conversation, ``context + [response]`` (the response rated at turn level),
    in variant ``mode`` (default :data:`dialeval.fed.DEFAULT_MODE`; the signature names it)."""
    scorer = fed_scorer(model, batch_size, device)
    conversations = [list(it["context"]) + [it["response"]] for it in items]
    return _split(scorer.score(conversations, level=level, progress=progress, mode=mode))


NLI_LOCAL_MODELS = ("dialeval/minilm-nli", "minilm-nli")  # bundled hub/minilm-nli; built by training/nli.py


def default_holistic_model() -> str:
    """Holistic coherence/fluency LM: the bundled DailyDialog fine-tune ``dialeval/smollm2-dailydialog``
    (Pang et al. fine-tune GPT-2 on DailyDialog; the stand-in carries its stored cutoffs), else the
    un-tuned SmolLM2-135M-Instruct (its cutoffs are in ``dialeval/data/holistic_cutoffs.json``, written
    by ``python -m dialeval.calibration --model smollm2-135m-instruct --write``)."""
    from dialeval.holistic import DEFAULT_LM
    from dialeval.lm import LOCAL_LM

    return preferred_model(DEFAULT_LM, LOCAL_LM)


def default_nli_model() -> str:
    """roberta-large-mnli if it can be had, else the bundled ``dialeval/minilm-nli``, else the local
    MiniLM NLI model built by ``training/nli.py``."""
    from dialeval.nli import DEFAULT_NLI

    return preferred_model(DEFAULT_NLI, *NLI_LOCAL_MODELS)


@functools.lru_cache(maxsize=2)
def likelihood_scorer(model: str | None, batch_size: int, device: str | None):
    from dialeval.holistic import LikelihoodScorer

    return LikelihoodScorer(model or default_holistic_model(), device=device, batch_size=batch_size)


@functools.lru_cache(maxsize=2)
def consistency_scorer(nli: str | None, batch_size: int, device: str | None):
    from dialeval.holistic import ConsistencyScorer

    return ConsistencyScorer(nli or default_nli_model(), device=device, batch_size=batch_size)


def diversity_key(item: dict) -> tuple[str, Any]:
    """What groups items for diversity: the explicit ``group`` field, else the identical context."""
    group = item.get("group")
    return ("group", str(group)) if group is not None else ("context", tuple(item["context"]))


def _diversity_by_group(items: Sequence[dict], population: Sequence[dict]) -> ItemScores:
    """Each item gets the diversity of all responses in ``population`` sharing its :func:`diversity_key`
    (NaN when it is alone), so the value does not depend on which other items are scored with it."""
    from dialeval.holistic import diversity, diversity_signature

    members: dict[tuple[str, Any], list[str]] = {}
    for item in population:
        members.setdefault(diversity_key(item), []).append(item["response"])
    keys = list(dict.fromkeys(k for k in map(diversity_key, items) if len(members.get(k, ())) > 1))
    values = dict(zip(keys, diversity([members[k] for k in keys])["diversity_scores"])) if keys else {}
    return {"diversity": [values.get(diversity_key(it), float("nan")) for it in items]}, diversity_signature()


@functools.lru_cache(maxsize=4)
def _input_cutoff(model: str | None, batch_size: int, device: str | None, aspect: str, reduction: str | None,
                  queries: tuple[tuple[str, ...], ...], responses: tuple[str, ...]) -> float:
    """The 5th percentile of the raw ``aspect`` scores of a whole input (computed once per input)."""
    from dialeval.holistic import percentile_cutoff

    scorer = likelihood_scorer(model, batch_size, device)
    return percentile_cutoff(scorer.raw(aspect, list(responses), list(queries), reduction))


def _likelihood(aspect: str, items: Sequence[dict], population: Sequence[dict] | None, model: str | None,
                cutoff: Any, reduction: str | None, batch_size: int, device: str | None) -> dict[str, Any]:
    scorer = likelihood_scorer(model, batch_size, device)
    queries = [it["context"] for it in items]
    responses = [it["response"] for it in items]
    label = None
    if cutoff == "set" and population is not None:  # the whole input's percentile, never a chunk's
        whole = (tuple(tuple(it["context"]) for it in population), tuple(it["response"] for it in population))
        cutoff = _input_cutoff(model, batch_size, device, aspect, reduction, *whole)
        label = "p5-of-input"
    return scorer.score(aspect, responses, queries, cutoff=cutoff, reduction=reduction, cutoff_label=label)


def run_holistic(
    items: Sequence[dict], aspects: Sequence[str] | str | None = None, model: str | None = None,
    nli: str | None = None, cutoff: float | str = "model", reduction: str | None = None,
    batch_size: int = 16, device: str | None = None, population: Sequence[dict] | None = None,
) -> ItemScores:
    """Holistic aspects of each item: coherence of ``response`` to ``context`` and fluency of
    ``response`` (normalised with the model's stored cutoffs by default; ``cutoff="set"`` takes the
    5th percentile of ``population``, the whole input, when given), consistency with the responder's
    earlier turns in ``context`` (alternating), and diversity of the responses sharing the item's
    ``group`` (or, without one, its exact context) in ``population`` (default: ``items``); NaN for an
    item alone in its group. ``dialeval score`` passes its chunks as ``items`` and the whole file as
    ``population``, so no score depends on the chunking.

    ``aspects=None`` means every aspect whose model is available: a missing model skips its aspects
    with a warning (as ``dialeval examples`` does); aspects named explicitly fail instead.
    """
    from dialeval.holistic import ASPECTS, CUTOFF_MODES, REDUCTIONS
    from dialeval.models import ModelNotFoundError
    from dialeval.options import check_choice, check_device, check_names, check_number

    explicit = aspects is not None
    aspects = check_names("aspects", aspects, ASPECTS) if explicit else ASPECTS
    check_number("batch_size", batch_size, minimum=1, integer=True)
    device = check_device(device)
    if reduction is not None:
        check_choice("reduction", reduction, REDUCTIONS)
    if not (isinstance(cutoff, (int, float)) and not isinstance(cutoff, bool) and cutoff < 0):
        check_choice("cutoff (or a negative number)", cutoff, CUTOFF_MODES)
    items = list(items)
    per_item: dict[str, list[float]] = {}
    signatures = []
    for aspect in aspects:
        try:
            if aspect in ("coherence", "fluency"):
                result = _likelihood(aspect, items, population, model, cutoff, reduction, batch_size, device)
            elif aspect == "consistency":
                scorer = consistency_scorer(nli, batch_size, device)
                result = scorer.score([it["context"] for it in items], [it["response"] for it in items])
            else:
                scores, signature = _diversity_by_group(items, population if population is not None else items)
                result = {"diversity_scores": scores["diversity"], "signature": signature}
        except ModelNotFoundError as e:
            if explicit:
                raise
            warnings.warn(f"holistic {aspect} skipped: {e}", stacklevel=2)
            continue
        per_item.update({k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")})
        signatures.append(result["signature"])
    if not signatures:
        raise FileNotFoundError("holistic: no aspect could be scored (every model is missing; see the warnings)")
    return per_item, " ; ".join(signatures)


def run_ssrem(items: Sequence[dict], model: str | None = None, scaling: str = "model", mover: str = "sms",
              word_vectors: str | None = None, device: str | None = None) -> ItemScores:
    """SSREM (Bak & Oh 2020, :mod:`dialeval.ssrem`) of each item's ``response`` given its ``context``
    and ``references``. ``scaling="model"`` by default: ``dialeval score`` passes chunks, and the
    set's min-max would make a score depend on its chunk; ``scaling="set"`` is the paper's
    normalisation over a whole set."""
    from dialeval.ssrem import DEFAULT_MODEL, cached_scorer

    for i, item in enumerate(items):
        if not item.get("references"):
            raise ValueError(f"item {i}: ssrem needs a non-empty 'references' list")
    result = cached_scorer(model or DEFAULT_MODEL, word_vectors, device).score(
        [it["context"] for it in items], [it["response"] for it in items], [it["references"] for it in items],
        scaling=scaling, mover=mover)
    return _split(result)


def run_grade(items: Sequence[dict], model: str | None = None, graph: bool = True, batch_size: int = 32,
              device: str | None = None) -> ItemScores:
    """GRADE coherence of each item's ``response`` to its ``context`` (Huang et al. 2020, :mod:`dialeval.grade`)."""
    from dialeval.grade.scorer import DEFAULT_MODEL, grade_scorer

    scorer = grade_scorer(model or DEFAULT_MODEL, device, batch_size)
    return _split(scorer.score([it["context"] for it in items], [it["response"] for it in items], graph=graph))


RUNNERS: dict[str, Runner] = {"multiref": run_multiref, "fed": run_fed, "holistic": run_holistic, "ssrem": run_ssrem,
                              "grade": run_grade}


def get_runner(metric: str) -> Runner:
    if metric not in RUNNERS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(RUNNERS)}")
    return RUNNERS[metric]
