"""The arithmetic precision a model-based metric runs its forward passes in (``precision=``).

* ``"float32"``: the weights and activations as trained (the default, and what tests pin);
* ``"bfloat16"``: the weights cast to bfloat16 (8 bits of mantissa: each product and sum rounds to a
  relative ``2**-8``); activations follow the weights;
* ``"int8"``: dynamic int8 quantisation of every ``nn.Linear`` on the CPU
  (``torch.ao.quantization.quantize_dynamic`` with ``per_channel_dynamic_qconfig``: int8 weights with
  one scale per output row, each call's input activations rounded to the 128 steps of their range at
  run time (fbgemm's ``reduce_range``), int32 sums); other layers stay float32. GPT-2's ``Conv1D``
  layers are not ``nn.Linear`` and stay float32 (its LM head is quantised). Per row on every layer
  was the fastest int8 variant screened on FED and the closest to float32 (per tensor, all but the
  MLPs, the LM head alone: CHANGELOG, 2026-11-28);
* ``"bfloat16-matmul"``: the float32 model, its forward run with oneDNN's bfloat16 math mode for
  float32 matrix products (``torch.backends.mkldnn.matmul.fp32_precision = "bf16"``, PyTorch >= 2.9;
  :func:`bf16_math`, scoped to the model's own forward). The mode allows oneDNN to round the products'
  inputs to bfloat16; it sums and returns float32. On an AVX-512 EPYC (``avx512_bf16``) its numbers
  stay within float32's own noise (FED's scores within 5e-5 of float32's, per-item Spearman 1.0000 on
  every job) at 1.17x float32's items/s on FED and 1.21x on holistic coherence and fluency, 0.98x on
  FULL and 0.79-1.06x on the encoders (not measured on a CPU without bfloat16 instructions);
* ``"auto"``: the fastest precision that the hardware runs natively (:func:`native_precisions`)
  among those the metric declares as passing the fidelity rule (``AUTO_PRECISIONS`` in its runner,
  ``MetricSpec.auto_precisions``: per-item Spearman >= 0.999 against float32 and no grid cell moved
  by more than 0.005, ``benchmarks/precision.py``); float32 when none is both.

Whatever the precision, log-probabilities and probabilities are taken in float32 from the forward's
logits and summed in float32 (:mod:`dialeval.core.lm`, :mod:`dialeval.core.nli`), and a result's
signature names a precision other than float32 (``precision:bfloat16``), as does the score cache's key.

Natively: on a CPU bfloat16 and bfloat16-matmul only with ``avx512_bf16`` or AMX (``amx_bf16``;
elsewhere oneDNN emulates bfloat16, slower than float32), int8 with VNNI (``avx512_vnni``, ``avx_vnni``
or ``amx_int8``); on CUDA bfloat16 (dynamic int8 and oneDNN's math mode are CPU paths). The CPU's flags
are read from ``/proc/cpuinfo`` (:func:`cpu_flags`; none elsewhere, so ``auto`` keeps float32 there).

Measured (``benchmarks/results/precision.md``, on an AMD EPYC with ``avx512_bf16`` and ``avx512_vnni``,
one thread, precisions interleaved in one process; ``precision-grid.md`` for the grid): bfloat16 passes
both rules on the encoders it was checked on (GRADE's and USL-H's all-mpnet-base-v2: ``auto`` takes it
there), int8 passes on none. On the language models (FED, FULL, holistic coherence and fluency) only
bfloat16-matmul passes the per-item rule; the grid was not run under it, so ``auto`` stays float32
there. The issue's goal for FED, twice float32's items/s at a per-item Spearman of 0.999, is out of
reach with these paths: bfloat16 runs FED at 1.72x with 0.987, int8 at 2.11x with 0.19, bfloat16-matmul
at 1.17x with 1.0000. Rounded to bfloat16, a logit of 16-32 of Gemma's head moves by up to 0.06 (half
a bfloat16 step there), and the head is about half of FED's work: 262,144 x 640 = 168M multiply-adds
per scored position against about 100M per token for the 18 layers, and FED scores about half of the
tokens it reads (its follow-ups). So a path that keeps the head in float32 cannot double FED's speed,
and those that round it measured below the per-item rule (above; int8 on the head alone: 0.86 on the
AVX2 EPYC).
On an AVX2-only EPYC (no bfloat16 instructions, no VNNI) none passes either: bfloat16 is emulated at
0.13-0.21x float32, int8 runs at 1.3-2.5x with the fidelity above, and ONNX Runtime's int8 and float16
did not reach 2x at 0.999 on FED (``benchmarks/results/onnx-runtime.md``).
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from pathlib import Path
from typing import Any

PRECISIONS = ("float32", "bfloat16", "int8", "bfloat16-matmul")
AUTO = "auto"
DEFAULT = "float32"
CPU_ONLY = ("int8", "bfloat16-matmul")  # dynamic int8 and oneDNN's math mode have no CUDA path here
# the CPU flags with which a precision runs natively (any one suffices)
NATIVE_CPU_FLAGS = {"bfloat16": ("avx512_bf16", "amx_bf16"), "int8": ("avx512_vnni", "avx_vnni", "amx_int8"),
                    "bfloat16-matmul": ("avx512_bf16", "amx_bf16")}
# fastest first, per device type (measured on an EPYC with avx512_bf16 and VNNI, FED on 64 items, one
# thread: int8 2.11x, bfloat16 1.72x, bfloat16-matmul 1.17x float32's items/s; benchmarks/results/precision.md)
SPEED_ORDER = {"cpu": ("int8", "bfloat16", "bfloat16-matmul", "float32"), "cuda": ("bfloat16", "float32")}


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
    if precision in CPU_ONLY and kind != "cpu":
        raise ValueError(f"precision {precision!r} runs on the CPU only, not on device {device!r}")
    return precision


def runner_precision(precision: Any, device: str | None, passing: tuple[str, ...]) -> str:
    """:func:`resolve_precision` for a runner's options: ``device=None`` is the default device
    (CUDA when torch sees a GPU, else the CPU); ``passing`` is the metric's ``AUTO_PRECISIONS``."""
    from dialeval.core.options import default_device

    return resolve_precision(precision, device or default_device(), passing)


def apply_precision(model: Any, precision: str) -> Any:
    """``model`` in ``precision`` (a concrete one, :func:`resolve_precision`): float32 as it is,
    bfloat16 cast, int8 with its ``nn.Linear`` layers dynamically quantised, one weight scale per
    output row, bfloat16-matmul float32 with its forward in oneDNN's bfloat16 math mode
    (:func:`bf16_math`). All convert ``model`` itself (no second copy of the weights is held: for the
    1.5B base a copy was 7 GB); the loaders pass a model they own."""
    import torch

    if precision == DEFAULT:
        return model
    if precision == "bfloat16":
        return model.to(torch.bfloat16)
    if precision == "bfloat16-matmul":
        return _in_bf16_math(model)
    if precision != "int8":
        raise ValueError(f"precision must be one of {list(PRECISIONS)} here, got {precision!r}")
    with warnings.catch_warnings():  # torch 2.10+ announces the move of eager quantisation to torchao
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*(quantiz|torchao).*")
        per_row = torch.ao.quantization.per_channel_dynamic_qconfig
        quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear: per_row}, dtype=torch.qint8,
                                                                inplace=True)
    return quantized


@contextlib.contextmanager
def bf16_math():
    """Inside: oneDNN may run float32 matrix products in its bfloat16 math mode
    (``torch.backends.mkldnn.matmul.fp32_precision = "bf16"``); the mode before is restored after. The
    flag is torch's, for the whole process: a float32 model run meanwhile in another thread (a server
    scoring two requests at once) would take the mode too, so ``bfloat16-matmul`` is for one model at a
    time, as the CLI and the grid run them."""
    import torch

    flag = torch.backends.mkldnn.matmul
    before = flag.fp32_precision
    flag.fp32_precision = "bf16"
    try:
        yield
    finally:
        flag.fp32_precision = before


def _in_bf16_math(model: Any) -> Any:
    """``model`` (float32, unchanged) whose forward runs inside :func:`bf16_math`: only its own calls
    take the mode, never another model's in the same process."""
    forward = model.forward

    @functools.wraps(forward)
    def in_bf16_math(*args: Any, **kwargs: Any) -> Any:
        with bf16_math():
            return forward(*args, **kwargs)

    model.forward = in_bf16_math
    return model


def with_precision(model: Any, precision: Any, device: Any) -> tuple[Any, str]:
    """``(model in the precision, that precision)``: :func:`resolve_precision` on ``device`` (``"auto"``
    with no declared precision is float32), then :func:`apply_precision`."""
    used = resolve_precision(precision, str(device))
    return apply_precision(model, used).eval(), used


def signature_precision(precision: str) -> str | None:
    """What a signature writes for ``precision``: ``None`` (left out) for float32, so every float32
    signature reads as before."""
    return None if precision == DEFAULT else precision
