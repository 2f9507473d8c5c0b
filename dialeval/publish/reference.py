"""Reference scores of the ``hub/<name>`` folders: ``dialeval_reference.json``.

:func:`write_reference` stores the scores of a fixed sample (library level: LM log-probabilities or
NLI probabilities; and, for the tests, the outputs of the ``evaluate`` modules that use the weights,
:func:`evaluate_samples`); :func:`check_reference` / :func:`check_evaluate_reference` recompute them
to within :data:`TOLERANCE` (relative where a value exceeds 1: :func:`max_difference`).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.core.spec import SAMPLE_PAIRS, EvaluateSample
from dialeval.models import hub

REFERENCE_FILE = "dialeval_reference.json"
TOLERANCE = 1e-4

NLI_SAMPLE = (
    ("I have two dogs and a cat.", "I do not have any pets."),
    ("I have two dogs and a cat.", "I own animals."),
    ("She works as a nurse in Boston.", "She lives in a big city."),
    ("The shop opens at nine.", "The shop is closed all day."),
)


def evaluate_samples() -> dict[str, tuple[EvaluateSample, ...]]:
    """What every bundled folder reproduces through its evaluate module (tests/test_hub.py, --dry-run),
    as the metrics that use it declare it (``MetricSpec.samples``; a folder several metrics load, such
    as the dialogue adapter, reproduces the samples of each)."""
    found: dict[str, tuple[EvaluateSample, ...]] = {}
    for spec in registry.specs():
        for name, samples in spec.samples.items():
            found[name] = found.get(name, ()) + samples
    return found


def task_type(folder: Path) -> str | None:
    """The peft ``task_type`` of an adapter folder (``CAUSAL_LM``, ``SEQ_CLS``); ``None`` for another folder."""
    if hub.is_adapter(folder):
        return json.loads((folder / hub.ADAPTER_CONFIG).read_text()).get("task_type")
    return None


def sample_scores(folder: str | os.PathLike) -> list:
    """The library-level scores of the fixed sample: per pair the summed log-probability and token
    count of ``q + " " + r`` (causal LM), or the label probabilities (NLI classifier)."""
    folder = Path(folder)
    kind = task_type(folder)
    if kind == "CAUSAL_LM":
        from dialeval.core.lm import LMScorer, load_causal_lm

        model, tokenizer = load_causal_lm(folder)
        scorer = LMScorer(model, tokenizer, batch_size=4)
        ids = [tokenizer(f"{q} {r}", add_special_tokens=False)["input_ids"] for q, r in SAMPLE_PAIRS]
        return [[lp, n] for lp, n in scorer.sequence_logprobs(ids)]
    if kind == "SEQ_CLS":
        from dialeval.core.nli import NLIScorer

        scorer = NLIScorer(str(folder), device="cpu")
        return scorer.probs([p for p, _ in NLI_SAMPLE], [h for _, h in NLI_SAMPLE])
    raise ValueError(f"{folder}: not a dialeval adapter folder (adapter_config.json task_type CAUSAL_LM or SEQ_CLS)")


def evaluate_scores(name: str, with_model: bool, hub_modules: bool = True, model: str | None = None) -> dict[str, list]:
    """The outputs of the ``evaluate`` modules that use ``dialeval/<name>`` on their fixed inputs,
    passing ``model=dialeval/<name>`` (``with_model``) or relying on the module's default. The
    modules are loaded as ``evaluate.load("dialeval/<module>")`` (``hub_modules``: the copies that
    ``dialeval register`` made) or from this checkout's ``metrics/`` (:func:`dialeval.modules.load`);
    ``model`` (a folder) is passed instead of ``dialeval/<name>`` when given."""
    import evaluate

    from dialeval.modules import load

    out = {}
    for sample in evaluate_samples()[name]:
        module, config, key = sample.module, sample.config, sample.output
        metric = evaluate.load(f"dialeval/{module}", config) if hub_modules else load(module, config)
        extra = {sample.model_keyword: model or f"{hub.NAMESPACE}/{name}"} if with_model else {}
        result = metric.compute(**sample.inputs, **extra)
        out[f"{module}/{config or ''}/{key}"] = {"values": list(result[key]) if isinstance(result[key], list)
                                                 else [result[key]], "signature": result.get("signature")}
    return out


def write_reference(folder: str | os.PathLike, with_evaluate: bool = True) -> Path:
    """Store ``dialeval_reference.json``: the sample's scores and (``with_evaluate``) the evaluate outputs."""
    folder = Path(folder)
    data: dict[str, Any] = {"weights": hub.content_hash(folder)}
    if (folder / "adapter_config.json").is_file():  # adapters: the base + adapter sample as well
        data["sample"] = sample_scores(folder)
    if with_evaluate and folder.name in evaluate_samples():
        data["evaluate"] = evaluate_scores(folder.name, with_model=True, hub_modules=False)
    path = folder / REFERENCE_FILE
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def max_difference(a: Any, b: Any) -> float:
    """The largest difference between two equally nested lists/dicts of numbers (``a`` recomputed,
    ``b`` stored), relative to ``|a|`` where ``|a| > 1``: summed log-probabilities of -50 differ by
    ~2e-4 between CPUs and library builds in float32, a probability of 0.5 must not differ by that much."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return math.inf
        return max((max_difference(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return math.inf
        return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(float(a) - float(b)) / max(1.0, abs(float(a)))


def stored_reference(folder: Path, part: str) -> dict:
    """The folder's :data:`REFERENCE_FILE`; ``FileNotFoundError``/``ValueError`` naming the command
    that stores it when it is missing, lacks ``part`` or was stored for other weights."""
    path = folder / REFERENCE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no {REFERENCE_FILE}; store it with `dialeval publish {folder} --reference`")
    stored = json.loads(path.read_text())
    weights = hub.content_hash(folder)
    if stored.get("weights") != weights or part not in stored:
        raise ValueError(f"{path}: stored for weights {stored.get('weights')} (parts {sorted(stored)}), the folder's "
                         f"are {weights}; store it again with `dialeval publish {folder} --reference`")
    return stored


def check_reference(folder: str | os.PathLike, tolerance: float = TOLERANCE) -> str:
    """Recompute the sample's scores; ``ValueError`` when they differ from the stored ones by more
    than ``tolerance`` or were stored for other weights."""
    folder = Path(folder)
    stored = stored_reference(folder, "sample")
    diff = max_difference(sample_scores(folder), stored["sample"])
    if diff > tolerance:
        raise ValueError(f"{folder}: the sample scores differ from {REFERENCE_FILE} by {diff:.2e} (> {tolerance})")
    return f"sample of {len(stored['sample'])} reproduced (max difference {diff:.1e})"


def check_evaluate_reference(folder: str | os.PathLike, tolerance: float = TOLERANCE) -> str:
    """Recompute the folder's :func:`evaluate_samples` outputs through this checkout's modules (for
    folders that are not peft adapters: GRADE, SSREM); ``ValueError`` when they differ from the
    stored ones by more than ``tolerance`` or were stored for other weights."""
    folder = Path(folder)
    stored = stored_reference(folder, "evaluate")
    found = evaluate_scores(folder.name, with_model=True, hub_modules=False, model=str(folder))
    diff = max_difference({k: v["values"] for k, v in found.items()}, {k: v["values"] for k, v in stored["evaluate"].items()})
    if diff > tolerance:
        raise ValueError(f"{folder}: the evaluate outputs differ from {REFERENCE_FILE} by {diff:.2e} (> {tolerance})")
    return f"evaluate outputs of {len(found)} module(s) reproduced (max difference {diff:.1e})"
