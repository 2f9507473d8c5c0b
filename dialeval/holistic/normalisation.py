"""From raw log-likelihoods to holistic coherence and fluency scores (torch-free): the reductions,
the 5th-percentile cutoffs of Pang et al. 2020 and the tables dialeval stores them in, and weighted
PMI coherence with its logistic normalisation. :mod:`dialeval.holistic.scorer` (module docstring)
states the formulas; this module is their arithmetic.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

PERCENTILE = 5.0
CUTOFFS_FILE = "dialeval_holistic.json"
CUTOFF_MODES = ("model", "set")
REDUCTIONS = ("mean", "sum")
# Chosen by measurement on Pang et al.'s 200 coherence / fluency ratings with dialeval/smollm2-dailydialog
# (metrics/holistic/README.md): fluency Spearman 0.807 (sum) vs 0.530 (mean), above the length-only
# baseline 0.678; coherence 0.651 (sum) vs 0.634 (mean) is within noise, below the mean in Pearson
# (0.571 vs 0.596), and a length-only baseline reaches 0.519, so coherence keeps the paper's Eq. 1.
DEFAULT_REDUCTION = {"coherence": "mean", "fluency": "sum"}
KNOWN_CUTOFFS_FILE = Path(__file__).resolve().parent / "cutoffs.json"
CALIBRATION_LOGPROBS_FILE = Path(__file__).resolve().parent / "calibration_logprobs.json"
PMI_QUARTILES = (25.0, 75.0)
# Coherence's default (issue 32): the smallest weight at which every kind of reply coherence must catch
# (echoes, a context-word salad, another dialogue's reply) loses to the real one in >= 90 % of 100
# DailyDialog validation contexts, each term a mean over its own tokens (coherence's default reduction, so
# lam 0 is the paper's Eq. 1; benchmarks/results/behaviour-pmi-mean.md); pmi_weight=0 gives Pang et al.'s.
DEFAULT_PMI_WEIGHT = 0.85


def percentile_cutoff(raw: Sequence[float], percentile: float = PERCENTILE) -> float:
    """The ``percentile``-th percentile of the raw scores (numpy, linear interpolation)."""
    if len(raw) == 0:
        raise ValueError("cannot take a percentile of no scores")
    return float(np.percentile(np.asarray(raw, dtype=float), percentile))


def normalise(raw: Sequence[float], cutoff: float) -> list[float]:
    """``-(max(cutoff, s) - cutoff) / cutoff`` for each raw score ``s``: in [0, 1] when ``s <= 0``."""
    if not cutoff < 0:
        raise ValueError(f"the cutoff must be a negative log-likelihood, got {cutoff}")
    return [min(1.0, -(max(cutoff, s) - cutoff) / cutoff) for s in raw]


def cutoff_key(aspect: str, reduction: str) -> str:
    """The name of a stored cutoff: ``"coherence"`` (mean, the paper's Eq. 1), ``"coherence_sum"``, ..."""
    return aspect if reduction == "mean" else f"{aspect}_{reduction}"


def read_cutoffs(model_dir: str | Path) -> dict[str, float]:
    """Cutoffs stored with a checkpoint (``{"coherence": c5, "fluency": f5, ...}``); ``{}`` if none."""
    path = Path(model_dir) / CUTOFFS_FILE
    if not path.is_file():
        return {}
    try:
        return {k: float(v) for k, v in json.loads(path.read_text(encoding="utf-8"))["cutoffs"].items()}
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: expected {{\"cutoffs\": {{name: number}}}} ({e})") from None


def read_logprobs(model_dir: str | Path) -> dict[str, list[tuple[float, int]]] | None:
    """The calibration pairs' log-probabilities stored with a checkpoint (``"logprobs"`` of its
    ``dialeval_holistic.json``: per aspect, ``[summed log-probability, token count]`` per pair);
    ``None`` if none."""
    path = Path(model_dir) / CUTOFFS_FILE
    stored = json.loads(path.read_text(encoding="utf-8")).get("logprobs") if path.is_file() else None
    if stored is None:
        return None
    try:
        found = {aspect: [(float(lp), int(n)) for lp, n in stored[aspect]] for aspect in ("coherence", "fluency")}
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: 'logprobs' must map coherence and fluency to [[log-probability, tokens], "
                         f"...] ({e!r})") from None
    if len(found["coherence"]) != len(found["fluency"]) or not found["coherence"]:
        raise ValueError(f"{path}: 'logprobs' needs as many coherence as fluency pairs, at least one")
    return found


def model_folders(model_name: str, config_path: str = "") -> list[str]:
    """Where a model's own ``dialeval_holistic.json`` may be: the folder its name resolves to, the
    loaded config's path, the bundled ``hub/<name>`` (online a dialeval id resolves to the Hub)."""
    from dialeval.models.hub import bundled_dir
    from dialeval.models import ModelNotFoundError, resolve_model

    folders = [config_path, str(bundled_dir(model_name) or "")]
    try:
        folders.insert(0, resolve_model(model_name))
    except (ModelNotFoundError, ValueError):
        pass
    return [str(folder) for folder in folders if folder and Path(folder).is_dir()]


def shipped_entry(path: Path, name: str, weights: str | None = None,
                  tensors: Callable[[], str] | None = None) -> dict[str, Any]:
    """The entry for model ``name`` in one of dialeval's shipped JSON tables (``{}`` if none), if it
    was recorded for these weights: its ``weights`` id equals ``weights`` (the files' hash), or its
    ``tensors`` equals ``tensors()`` (:func:`dialeval.models.hub.tensor_hash`, computed only then).
    The second holds for a model built from a GGUF on first use, whose files (``config.json`` names
    the transformers version that wrote it) differ between installs while its tensors do not."""
    table = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    entry = table.get(name) or table.get(Path(name).name) or {}
    if weights is None or entry.get("weights") in (None, weights):
        return entry
    return entry if entry.get("tensors") and tensors is not None and tensors() == entry["tensors"] else {}


def known_cutoffs(name: str, weights: str | None = None, tensors: Callable[[], str] | None = None) -> dict[str, float]:
    """Cutoffs dialeval ships in ``dialeval/holistic/cutoffs.json`` (written by
    :mod:`dialeval.holistic.calibration`), keyed by model name, for a model that cannot carry its own file
    (the un-tuned local LM, built from a GGUF on first use) or whose file lacks a reduction. An entry
    recorded for other weights (:func:`shipped_entry`) is ignored."""
    entry = shipped_entry(KNOWN_CUTOFFS_FILE, name, weights, tensors)
    return {k: float(v) for k, v in entry.get("cutoffs", {}).items()}


def stored_cutoffs(model_name: str, config_path: str = "", weights: str | None = None,
                   tensors: Callable[[], str] | None = None) -> dict[str, float]:
    """The cutoffs stored with a model: its folder's ``dialeval_holistic.json`` (:func:`model_folders`),
    completed by :func:`known_cutoffs` for the same weights."""
    found: dict[str, float] = {}
    for folder in model_folders(model_name, config_path):
        if found := read_cutoffs(folder):
            break
    return {**known_cutoffs(model_name, weights, tensors), **found}


# -- weighted PMI coherence ------------------------------------------------------------------------------


def check_pmi_weight(aspect: str, pmi_weight: Any) -> float | None:
    """The weight ``lam`` in (0, 1] of weighted PMI coherence, or ``None`` for Pang et al.'s
    coherence (``pmi_weight=0``) and for fluency. An omitted weight (``None``) is coherence's
    default, :data:`DEFAULT_PMI_WEIGHT`. ``ValueError`` for anything else, or a weight for fluency."""
    from dialeval.core.options import check_number

    if aspect != "coherence":
        if pmi_weight is not None:
            raise ValueError(f"pmi_weight applies to coherence only, not {aspect}")
        return None
    if pmi_weight is None:
        return DEFAULT_PMI_WEIGHT
    weight = float(check_number("pmi_weight", pmi_weight, minimum=0.0, maximum=1.0))
    return weight or None


def weighted_pmi(coherence_raw: float, fluency_raw: float, weight: float) -> float:
    """``p_raw = c_raw - weight * f_raw`` of one response, from its reduced raw coherence and fluency."""
    return coherence_raw - weight * fluency_raw


def pmi_raw(coherence: Sequence[tuple[float, int]], fluency: Sequence[tuple[float, int]], weight: float,
            reduction: str) -> list[float]:
    """:func:`weighted_pmi` per response, from ``(sum of log-probs, token count)`` pairs given the
    query (``coherence``) and alone (``fluency``), each reduced with ``reduction``."""
    return [weighted_pmi(c, f, weight)
            for c, f in zip(reduce_logprobs(coherence, reduction), reduce_logprobs(fluency, reduction))]


def quartiles(raw: Sequence[float]) -> tuple[float, float]:
    """``(q25, q75)`` of raw weighted PMI values (numpy, linear interpolation); ``ValueError`` when
    they are equal (one response, or identical ones), which leaves no scale to normalise with."""
    low, high = (percentile_cutoff(raw, q) for q in PMI_QUARTILES)
    if not high > low:
        raise ValueError(f"weighted PMI's quartiles are equal ({low:g}) over {len(raw)} responses: no scale to "
                         "normalise with; use cutoff='model' (the stored calibration) or a pair (q25, q75)")
    return low, high


def pmi_anchors(coherence: Sequence[tuple[float, int]], fluency: Sequence[tuple[float, int]], weight: float,
                reduction: str) -> tuple[float, float]:
    """The :func:`quartiles` of :func:`pmi_raw` over calibration responses."""
    return quartiles(pmi_raw(coherence, fluency, weight, reduction))


def logistic(raw: Sequence[float], anchors: tuple[float, float]) -> list[float]:
    """``1 / (1 + exp(-k (s - m)))`` per raw score ``s``, ``m`` the anchors' midpoint and ``k = 2 ln 3 /
    (high - low)``: the low anchor maps to 0.25, the high one to 0.75; NaN stays NaN."""
    low, high = anchors
    middle, slope = (low + high) / 2, 2 * math.log(3) / (high - low)
    return [s if math.isnan(s) else 1 / (1 + math.exp(min(700.0, -slope * (s - middle)))) for s in raw]


def stored_logprobs(model_name: str, weights: str, tensors: Callable[[], str] | None = None,
                    config_path: str = "") -> dict[str, list] | None:
    """The calibration pairs' log-probabilities stored for ``model_name``: in its folder's
    ``dialeval_holistic.json`` (:func:`read_logprobs`; what ``training/finetune_lm.py --preset
    dailydialog`` writes), else in ``dialeval/holistic/calibration_logprobs.json`` for these weights
    (:func:`shipped_entry`: the bundled models, whose folders keep their hash); ``None`` if none."""
    for folder in model_folders(model_name, config_path):
        if (found := read_logprobs(folder)) is not None:
            return found
    return shipped_entry(CALIBRATION_LOGPROBS_FILE, model_name, weights, tensors).get("logprobs")


def check_reduction(aspect: str, reduction: str | None) -> str:
    """``reduction`` or the aspect's default; ``ValueError`` for anything but ``"mean"``/``"sum"``."""
    if reduction is None:
        return DEFAULT_REDUCTION[aspect]
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {list(REDUCTIONS)}, got {reduction!r}")
    return reduction


def reduce_logprobs(scores: Sequence[tuple[float, int]], reduction: str) -> list[float]:
    """``(sum of log-probs, token count)`` pairs to raw scores: ``sum / count`` (mean) or ``sum``."""
    return [lp / n if reduction == "mean" else lp for lp, n in scores]
