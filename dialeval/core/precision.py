"""The arithmetic precision a model-based metric runs its forward passes in (``precision=``).

* ``"float32"``: the weights and activations as trained (the default, and what tests pin);
* ``"bfloat16"``: the weights cast to bfloat16 (8 bits of mantissa: each product and sum rounds to a
  relative ``2**-8``); activations follow the weights;
* ``"int8"``: dynamic int8 quantisation of every ``nn.Linear`` on the CPU
  (``torch.ao.quantization.quantize_dynamic`` with ``per_channel_dynamic_qconfig``: int8 weights with
  one scale per output row, each call's input activations rounded to the 128 steps of their range at
  run time (fbgemm's ``reduce_range``), int32 sums); other layers stay float32. GPT-2's ``Conv1D``
  layers are not ``nn.Linear`` and stay float32 (its LM head is quantised). Chosen by measurement on
  the project's AVX2-only EPYC (no VNNI: fbgemm's int8 products run on AVX2), FED with its default
  Gemma-3-270M adapter, one thread, 16 DailyDialog test items, every variant interleaved in one
  process (on the issue's 64 items the chosen one, per row on every layer, runs at 1.27x float32 with
  a per-item Spearman of 0.44 at worst and a largest difference of 11.8, bfloat16 at 0.18x with 0.97
  on 16: ``benchmarks/results/precision.md``):

  ==========================================  ===========  ===========================
  int8 variant                                vs float32   min per-item Spearman (FED)
  ==========================================  ===========  ===========================
  every ``nn.Linear``, one scale per tensor    1.17-1.46x   0.11-0.14 (8-16 items)
  every ``nn.Linear``, one scale per row       1.59x        0.38
  all but the MLPs, per row                    1.36x        0.75
  the LM head alone, per row                   1.23x        0.86
  (bfloat16 weights, emulated)                 0.19x        0.97
  ==========================================  ===========  ===========================

  No int8 variant comes near the 0.999 that ``auto`` asks for on FED, whose scores are differences of
  follow-up log-likelihoods: rounding the *activations* is what moves them (a token's log-probability
  moves by 0.63 nats on average with every layer quantised, 0.52 with the MLPs alone, most of it the
  inputs of ``down_proj``, whose GELU outputs reach 25 times their typical channel's range), and even
  weights alone rounded to int8 per row with float32 activations (no speed: no kernel for it here)
  move it by 0.056, twice bfloat16's 0.028, which already leaves FED's per-item Spearman at 0.97. So
  ``int8`` is the fastest variant (per row: no slower than per tensor and closer to float32). On the
  encoders it is 2.3-2.5x float32 but fails the rule too (per-item Spearman on 250-500 items: the NLI
  classifier 0.983, SSREM's encoder 0.770, GRADE 0.675), while bfloat16 meets the per-item rule there
  (0.9999, 0.9999, 0.9996 on 100 items; emulated here at 0.13-0.18x): candidates for ``auto`` on a
  CPU with ``avx512_bf16`` once the grid under bfloat16 shows no cell moving by more than 0.005. The
  issue's goal for FED (2x float32 at 0.999) is out of reach on this CPU: in speed, without VNNI
  fbgemm multiplies int8 with AVX2's ``vpmaddubsw`` (at best twice float32's products), and FED's
  time also goes to what stays float32 (attention, norms, the log-softmax over 262,144 tokens) and to
  quantising the activations; bfloat16 is emulated (0.18x); in fidelity, as above, even bfloat16 fails.
  ONNX Runtime (``benchmarks/onnx_runtime.py``, not a dependency) does not reach it either: on the 64
  items its dynamic int8 without the MLPs runs at 2.07x torch float32 with a per-item Spearman of 0.92
  (every MatMul: 2.15x at 0.34 on 16), its float16 at 1.73x with 0.9998 (ORT has no float16 kernels
  on this CPU and runs it in float32 behind inserted casts), and its float32, exact (largest
  difference 4e-5), at 1.74x, of which the grouped layout alone was 1.36x in torch
  (``benchmarks/results/onnx-runtime.md``); that layout is FED's own path on Gemma 3 now, 1.49x the
  one-context-at-a-time path it replaced, exact (``benchmarks/results/grouped-layout.md``);
* ``"auto"``: the fastest precision that the hardware runs natively (:func:`native_precisions`)
  among those the metric declares as passing the fidelity rule (``AUTO_PRECISIONS`` in its runner,
  ``MetricSpec.auto_precisions``: per-item Spearman >= 0.999 against float32 and no grid cell moved
  by more than 0.005, ``benchmarks/precision.py``); float32 when none is both.

Whatever the precision, log-probabilities and probabilities are taken in float32 from the forward's
logits and summed in float32 (:mod:`dialeval.core.lm`, :mod:`dialeval.core.nli`), and a result's
signature names a precision other than float32 (``precision:bfloat16``), as does the score cache's key.

Natively: on a CPU bfloat16 only with ``avx512_bf16`` or AMX (``amx_bf16``; elsewhere oneDNN emulates
it, slower than float32), int8 with VNNI (``avx512_vnni``, ``avx_vnni`` or ``amx_int8``); on CUDA
bfloat16 (dynamic int8 is a CPU path). The CPU's flags are read from ``/proc/cpuinfo``
(:func:`cpu_flags`; none elsewhere, so ``auto`` keeps float32 there).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

PRECISIONS = ("float32", "bfloat16", "int8")
AUTO = "auto"
DEFAULT = "float32"
# the CPU flags with which a precision runs natively (any one suffices)
NATIVE_CPU_FLAGS = {"bfloat16": ("avx512_bf16", "amx_bf16"), "int8": ("avx512_vnni", "avx_vnni", "amx_int8")}
# fastest first, per device type (measured on an EPYC with avx512_bf16 and VNNI: int8 4.0x, bfloat16
# 2.9x float32's tokens/s, issue 55); dynamic int8 has no CUDA kernels
SPEED_ORDER = {"cpu": ("int8", "bfloat16", "float32"), "cuda": ("bfloat16", "float32")}


def check_precision(precision: Any) -> str:
    """``precision`` if it is one of :data:`PRECISIONS` or ``"auto"``; ``None`` is float32."""
    if precision is None:
        return DEFAULT
    if precision not in (*PRECISIONS, AUTO):
        raise ValueError(f"precision must be one of {[*PRECISIONS, AUTO]}, got {precision!r}")
    return precision


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The flags of the first CPU in ``/proc/cpuinfo``; empty where there is none (not Linux)."""
    path = Path("/proc/cpuinfo")
    if not path.is_file():
        return frozenset()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def native_precisions(device: str) -> tuple[str, ...]:
    """The precisions ``device`` runs natively, fastest first (module docstring)."""
    kind = str(device).split(":", 1)[0]
    if kind == "cuda":
        return SPEED_ORDER["cuda"]
    if kind != "cpu":
        return (DEFAULT,)
    flags = cpu_flags()
    return tuple(p for p in SPEED_ORDER["cpu"]
                 if p == DEFAULT or any(f in flags for f in NATIVE_CPU_FLAGS[p]))


def resolve_precision(precision: Any, device: str, passing: tuple[str, ...] = ()) -> str:
    """The precision to run on ``device``: ``precision`` itself, or for ``"auto"`` the fastest native
    one among ``passing`` (the metric's declared precisions) and float32. ``int8`` off the CPU is a
    ``ValueError``."""
    precision = check_precision(precision)
    kind = str(device).split(":", 1)[0]
    if precision == AUTO:
        return next(p for p in native_precisions(device) if p == DEFAULT or p in passing)
    if precision == "int8" and kind != "cpu":
        raise ValueError(f"precision 'int8' (dynamic int8 quantisation) runs on the CPU only, not on device {device!r}")
    return precision


def runner_precision(precision: Any, device: str | None, passing: tuple[str, ...]) -> str:
    """:func:`resolve_precision` for a runner's options: ``device=None`` is the default device
    (CUDA when torch sees a GPU, else the CPU); ``passing`` is the metric's ``AUTO_PRECISIONS``."""
    from dialeval.core.options import default_device

    return resolve_precision(precision, device or default_device(), passing)


def apply_precision(model: Any, precision: str) -> Any:
    """``model`` in ``precision`` (a concrete one, :func:`resolve_precision`): float32 as it is,
    bfloat16 cast, int8 with its ``nn.Linear`` layers dynamically quantised, one weight scale per
    output row. Both convert ``model`` itself (no second copy of the weights is held: for the 1.5B base
    a copy was 7 GB); the loaders pass a model they own."""
    import torch

    if precision == DEFAULT:
        return model
    if precision == "bfloat16":
        return model.to(torch.bfloat16)
    if precision != "int8":
        raise ValueError(f"precision must be one of {list(PRECISIONS)} here, got {precision!r}")
    with warnings.catch_warnings():  # torch 2.10+ announces the move of eager quantisation to torchao
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*(quantiz|torchao).*")
        per_row = torch.ao.quantization.per_channel_dynamic_qconfig
        quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear: per_row}, dtype=torch.qint8,
                                                                inplace=True)
    return quantized


def with_precision(model: Any, precision: Any, device: Any) -> tuple[Any, str]:
    """``(model in the precision, that precision)``: :func:`resolve_precision` on ``device`` (``"auto"``
    with no declared precision is float32), then :func:`apply_precision`."""
    used = resolve_precision(precision, str(device))
    return apply_precision(model, used).eval(), used


def signature_precision(precision: str) -> str | None:
    """What a signature writes for ``precision``: ``None`` (left out) for float32, so every float32
    signature reads as before."""
    return None if precision == DEFAULT else precision
