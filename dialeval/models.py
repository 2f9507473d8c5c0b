"""Model resolution, in one place, for every metric and training script.

A model argument may be

1. a local directory (``./runs/smollm2-dailydialog``),
2. a name found under ``$DIALEVAL_MODELS`` (default ``~/.cache/dialeval/models``), either as
   ``<name>`` or with ``/`` written ``--`` (``dialeval--gpt2-dailydialog``), or
3. a Hugging Face Hub id (``microsoft/DialoGPT-large``), already in the local HF cache or
   downloadable.

When the Hub cannot be reached (``HF_HUB_OFFLINE=1``, or no route to huggingface.co, checked with
a short socket probe) a model that is neither local nor cached raises :class:`ModelNotFoundError`
at once, saying what to pass or which ``training/`` command builds it. Nothing here waits on the
network for more than ``PROBE_TIMEOUT_S``.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from pathlib import Path

HUB_HOST = "huggingface.co"
PROBE_TIMEOUT_S = 2.0

# How to obtain each default model without the Hub: shown in the error a missing model raises.
BUILD_HINTS: dict[str, str] = {
    "microsoft/DialoGPT-large": (
        "python training/finetune_lm.py --preset dialogue (fine-tunes the local SmolLM2-135M "
        "into a dialogue model; see training/README.md)"
    ),
    "gpt2": "python training/finetune_lm.py --preset dailydialog (see training/README.md)",
    "dialeval/gpt2-dailydialog": "python training/finetune_lm.py --preset dailydialog",
    "roberta-large-mnli": (
        "python training/nli.py --max-steps 800 --minutes 20 (fine-tunes the local MiniLM-L6 into "
        "an NLI classifier saved as 'minilm-nli'; pass model='minilm-nli'; see training/README.md)"
    ),
    "minilm-nli": "python training/nli.py --max-steps 800 --minutes 20 (see training/README.md)",
}


class ModelNotFoundError(FileNotFoundError):
    """A model is neither local nor reachable; the message says what to do instead."""


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


def _in_hf_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return False
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # invalid repo id for the hub's naming rules
        return False
    return isinstance(found, str)


def resolve_model(name: str | os.PathLike, what: str = "model") -> str:
    """Return a local directory or a Hub id that ``from_pretrained`` can load without waiting.

    Raises :class:`ModelNotFoundError` when ``name`` is not local and the Hub is unreachable.
    ``what`` names the role of the model in the error message ("FED dialogue model", ...).
    """
    if not isinstance(name, (str, os.PathLike)) or not str(name).strip():
        raise ValueError(f"{what}: expected a model path or Hub id, got {name!r}")
    text = str(name)
    path = Path(text).expanduser()
    if path.is_dir():
        return str(path)
    for candidate in (models_dir() / text, models_dir() / text.replace("/", "--")):
        if candidate.is_dir():
            return str(candidate)
    looks_like_path = text.startswith((".", "/", "~")) or os.sep in text and text.count("/") > 1
    if looks_like_path:
        raise ModelNotFoundError(f"{what}: no directory at {path}")
    if _in_hf_cache(text):
        return text
    if is_offline():
        hint = BUILD_HINTS.get(text)
        how = f"; build a local one with `{hint}`" if hint else ""
        raise ModelNotFoundError(
            f"{what} {text!r} is not a local directory, not under {models_dir()} "
            f"($DIALEVAL_MODELS), and the Hugging Face Hub cannot be reached. Pass a local "
            f"model directory instead{how}."
        )
    return text
