"""Model resolution, in one place, for every metric and training script.

A model argument is looked up in this order (the first hit wins):

1. a local directory (``./runs/smollm2-dailydialog``); it must hold a model (``config.json``) or a
   peft adapter (``adapter_config.json`` + ``adapter_model.safetensors``), else
   :class:`ModelNotFoundError` says what is missing;
2. a name found under ``$DIALEVAL_MODELS`` (default ``~/.cache/dialeval/models``), either as
   ``<name>`` or with ``/`` written ``--`` (``dialeval--smollm2-dailydialog``);
3. a Hugging Face Hub id already in the local HF cache;
4. for ``dialeval/<name>`` (or plain ``<name>``): the folder ``hub/<name>`` bundled with dialeval
   (:func:`dialeval.models.hub.bundled_dir`), laid out as the Hub repository ``dialeval/<name>``;
5. a Hub id, when the Hub can be reached (``dialeval/*`` repositories are downloaded to a local
   snapshot, so that adapters can be recognised and checked).

When the Hub cannot be reached (``HF_HUB_OFFLINE=1``, or no route to huggingface.co, checked with
a short socket probe) a model that is none of these raises :class:`ModelNotFoundError` at once,
naming the bundled alternative or the ``training/`` command that builds it. Each metric declares
both; this layer sits below the registry, so the lookups are handed down (:func:`set_advice`, which
the package facade ``dialeval/__init__.py`` calls with the registry's
:func:`~dialeval.registry.hub_alternatives` and :func:`~dialeval.registry.build_hints`). Nothing here waits on the network for more than
``PROBE_TIMEOUT_S``.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from pathlib import Path
from typing import Callable, Mapping

HUB_HOST = "huggingface.co"
PROBE_TIMEOUT_S = 2.0

MODEL_FILES = ("config.json",)
ADAPTER_FILES = ("adapter_config.json",)
ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")


class ModelNotFoundError(FileNotFoundError):
    """A model is neither local nor reachable; the message says what to do instead."""


Lookup = Callable[[], Mapping[str, str]]
_ADVICE: dict[str, Lookup] = {"alternatives": dict, "build_hints": dict}


def set_advice(alternatives: Lookup, build_hints: Lookup) -> None:
    """Where :class:`ModelNotFoundError` messages look up, by model id, the bundled stand-in
    (``alternatives()``) and the command that builds the model (``build_hints()``); both are called
    when a message is written. Until this is called both are empty."""
    _ADVICE.update(alternatives=alternatives, build_hints=build_hints)


def models_dir() -> Path:
    """The folder searched for named local models: ``$DIALEVAL_MODELS`` or ``~/.cache/dialeval/models``."""
    return Path(os.environ.get("DIALEVAL_MODELS", "~/.cache/dialeval/models")).expanduser()


def _env_offline() -> bool:
    return any(
        os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


@functools.lru_cache(maxsize=1)
def _hub_reachable() -> bool:
    """Probe huggingface.co:443 once per process, never longer than ``PROBE_TIMEOUT_S``."""
    result: list[bool] = [False]

    def probe() -> None:
        try:
            with socket.create_connection((HUB_HOST, 443), timeout=PROBE_TIMEOUT_S):
                result[0] = True
        except OSError:
            pass

    thread = threading.Thread(target=probe, daemon=True)  # getaddrinfo itself has no timeout
    thread.start()
    thread.join(PROBE_TIMEOUT_S)
    return result[0]


def is_offline() -> bool:
    """True when the Hub must not or cannot be used."""
    return _env_offline() or not _hub_reachable()


def check_model_dir(path: Path, what: str = "model") -> Path:
    """``path`` if it holds a model (``config.json``) or a complete peft adapter, else
    :class:`ModelNotFoundError` naming the folder and what it lacks."""
    if any((path / f).is_file() for f in MODEL_FILES):
        return path
    if any((path / f).is_file() for f in ADAPTER_FILES):
        if any((path / f).is_file() for f in ADAPTER_WEIGHTS):
            return path
        raise ModelNotFoundError(
            f"{what}: {path} has adapter_config.json but no adapter weights ({' or '.join(ADAPTER_WEIGHTS)}); "
            "the folder is incomplete: rebuild it with its training/ script or fetch it again"
        )
    raise ModelNotFoundError(
        f"{what}: {path} is a folder but not a model: it has neither config.json (a transformers model) nor "
        "adapter_config.json (a peft adapter). Pass the folder that holds the weights."
    )


def _hf_cached(repo_id: str) -> str | None:
    """The cached snapshot folder of an adapter repository, the id itself for a cached model, else None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return None
    for filename in ADAPTER_FILES + MODEL_FILES:
        try:
            found = try_to_load_from_cache(repo_id, filename)
        except Exception:  # invalid repo id for the hub's naming rules
            return None
        if isinstance(found, str):
            return str(Path(found).parent) if filename in ADAPTER_FILES else repo_id
    return None


def _missing_message(text: str, what: str) -> str:
    from dialeval.models.hub import NAMESPACE, bundled_dir

    parts = [
        f"{what} {text!r} is not a local directory, not under {models_dir()} ($DIALEVAL_MODELS), not in the "
        "Hugging Face cache, not bundled in hub/, and the Hugging Face Hub cannot be reached."
    ]
    alternative = _ADVICE["alternatives"]().get(text)
    if alternative and bundled_dir(alternative) is not None:
        parts.append(f"Use the bundled alternative: model={alternative!r} ({bundled_dir(alternative)}).")
    elif alternative:
        parts.append(f"Its dialeval alternative {alternative!r} is not bundled in this checkout.")
    hints = _ADVICE["build_hints"]()
    hint = hints.get(text) or (hints.get(alternative) if alternative else None)
    if hint:
        parts.append(f"Build it with `{hint}` (see training/README.md).")
    elif text.startswith(f"{NAMESPACE}/"):
        parts.append("dialeval's own models are folders under hub/ (see training/README.md).")
    else:
        parts.append("Pass a local model directory instead.")
    return " ".join(parts)


def resolve_model(name: str | os.PathLike, what: str = "model") -> str:
    """Return a local directory or a Hub id that ``from_pretrained`` can load without waiting,
    in the order of this module's docstring.

    Raises :class:`ModelNotFoundError` when ``name`` is none of those (or a folder that holds no
    model) and the Hub is unreachable. ``what`` names the role of the model in the error message
    ("FED dialogue model", ...).
    """
    from dialeval.models.hub import NAMESPACE, bundled_dir

    if not isinstance(name, (str, os.PathLike)) or not str(name).strip():
        raise ValueError(f"{what}: expected a model path or Hub id, got {name!r}")
    text = str(name)
    path = Path(text).expanduser()
    if path.is_dir():
        return str(check_model_dir(path, what))
    for candidate in (models_dir() / text, models_dir() / text.replace("/", "--")):
        if candidate.is_dir():
            return str(check_model_dir(candidate, what))
    looks_like_path = text.startswith((".", "/", "~")) or os.sep in text and text.count("/") > 1
    if looks_like_path:
        raise ModelNotFoundError(f"{what}: no directory at {path}")
    cached = _hf_cached(text)
    if cached:
        return cached
    bundled = bundled_dir(text)
    if bundled is not None:
        return str(check_model_dir(bundled, what))
    if is_offline():
        raise ModelNotFoundError(_missing_message(text, what))
    if text.startswith(f"{NAMESPACE}/"):
        from huggingface_hub import snapshot_download

        return snapshot_download(text)
    return text


def preferred_model(hub_id: str, *local_names: str) -> str:
    """The first of ``hub_id, *local_names`` that can be had now (a local or bundled copy, or a
    reachable Hub), else the last of them (loading it then builds it or raises the resolver's
    error, which names the training command). A candidate passed over although its ``hub/`` folder
    is there, without its model card (which makes a folder bundled), is named in a ``UserWarning``:
    falling back to a weaker model quietly would hide a broken checkout."""
    candidates = (hub_id, *local_names)
    chosen = candidates[-1]
    for name in candidates:
        try:
            resolve_model(name)
            chosen = name
            break
        except (ModelNotFoundError, ValueError):
            continue
    for name in candidates[:candidates.index(chosen)]:
        _warn_uncarded(name, chosen)
    return chosen


def _warn_uncarded(name: str, chosen: str) -> None:
    """Warn when ``dialeval/<name>`` was passed over with its ``hub/<name>`` folder present but uncarded."""
    import warnings

    from dialeval.models.hub import CARD_FILE, NAMESPACE, bundled_dir, hub_folder

    folder = hub_folder(name) if name.startswith(f"{NAMESPACE}/") else None
    if folder is not None and folder.is_dir() and bundled_dir(name) is None:
        warnings.warn(f"{folder} has no {CARD_FILE}, so it is not read as the bundled {name}; using {chosen} "
                      f"instead (`dialeval publish {folder} --card` writes the card)", UserWarning, stacklevel=3)
