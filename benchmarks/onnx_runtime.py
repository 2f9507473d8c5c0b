"""FED on ONNX Runtime against torch float32: speed and fidelity on this CPU (issue 55's last untried route).

FED's causal LM (its default, the Gemma-3-270M dialogue adapter ``dialeval/gemma3-dialogue``, merged
into its base) is exported to ONNX (``torch.onnx.export``, the dynamo exporter) as one forward without
a key/value cache: ``(input_ids, position_ids, 4D additive mask, kept positions) -> logits`` at the
kept positions only (the LM head runs on those alone, as torch's ``logits_to_keep`` does). That graph
is the forward of FED's grouped layout (:meth:`dialeval.core.lm.LMScorer.grouped_logprobs`: a context
and its follow-ups as a token trie in rows of 512 tokens under a block mask), which FED takes for a
model whose attention takes a 4D mask (on Gemma 3 since ``benchmarks/results/grouped-layout.md``; when
``onnx-runtime.md`` was measured, only without a sliding window). Gemma 3's sliding-window layers
(512 positions) see a whole context plus follow-up when it is at most 512 tokens, so the same block
mask given to every layer scores each follow-up exactly as ``context + follow-up`` alone; the
wrapper checks that bound on every call (the largest position id) and raises beyond it.

Variants, every one scored through FED's own code (:class:`dialeval.fed.scorer.FEDScorer` over a
``(model, tokenizer)`` pair, as ``run_fed`` scores items at turn level in its default variant; only
the model's forward differs):

* ``torch-float32``: the baseline, FED as it runs (``precision="float32"``; in ``onnx-runtime.md``
  Gemma's forward with its key/value cache, the follow-ups packed after each context; now the grouped
  layout in torch, as the next row);
* ``torch-float32-grouped``: torch float32 in the grouped layout above (the block mask given to every
  layer as Gemma's mask mapping): separates the layout's share of a speed-up from the runtime's;
* ``ort-float32``: the exported graph in ONNX Runtime, ``ORT_ENABLE_ALL`` graph optimisation;
* ``ort-int8-channel`` / ``ort-int8-tensor``: ``onnxruntime.quantization.quantize_dynamic`` of every
  MatMul with a constant weight (the Linear layers; 8-bit weights, one scale and zero point per output
  column or per tensor; activations rounded to uint8 per tensor at run time), the tied LM head (a
  ``Gemm``) and the embedding stay float32; ``ort-int8-no-mlp``: the same per column with the MLPs'
  MatMuls excluded. Their weights are uint8 (U8U8 products): with signed weights
  (``ort-int8-s8-channel``, ORT's default) the logits moved by up to 119 (the largest is 116) against
  15 with uint8 weights, the same rounding otherwise: on AVX2 the U8S8 products go through
  ``vpmaddubsw``, whose int16 pair sums saturate;
* ``ort-float16``: the graph converted to float16 (``onnxruntime.transformers.float16``, float32
  inputs and outputs). ORT's CPU provider has no float16 MatMul here: it runs the graph in float32
  behind the casts it inserts, so the weights and the activations between nodes are rounded to
  float16 at float32's speed.

Everything runs in one process on one thread (``torch.set_num_threads``, ORT's
``intra_op_num_threads=1``). First each variant's logits are checked against torch float32 on a few
inputs (largest absolute difference). Then the timed runs go round the variants in turn (best of
``--repeats`` per chunk of ``--chunk`` items, each chunk through every variant before the next; each
variant warmed on two items first), so a busy CPU slows all of them alike; the
items are the first ``--items`` DailyDialog test items of ``benchmarks/throughput.py``, as
``benchmarks/precision.py`` scores them. Fidelity per FED sub-score against torch float32: per-item
Spearman and largest absolute difference (``benchmarks/precision.py``'s ``fidelity``).

    OMP_NUM_THREADS=1 python benchmarks/onnx_runtime.py --items 64 --out benchmarks/results/onnx-runtime

The exported and quantised graphs are kept under ``--cache`` (default
``~/.cache/dialeval/onnx/<model weights id>``; the export takes about 2 CPU minutes). Needs the
``onnx`` extra, ``pip install -e ".[onnx]"`` (onnxruntime, onnx, onnxscript; not dialeval dependencies,
``install.sh`` leaves them out).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dialeval  # noqa: E402,F401  (quiets third-party bars before the models load)
from dialeval.core.lm import load_causal_lm  # noqa: E402
from dialeval.core.results import split_result  # noqa: E402
from dialeval.fed.runner import conversations_of, default_dialogue_model  # noqa: E402
from dialeval.fed.scorer import FEDScorer  # noqa: E402
from precision import SPEARMAN_RULE, interleaved, write_report  # noqa: E402
from throughput import items, machine  # noqa: E402

VARIANTS = ("torch-float32", "torch-float32-grouped", "ort-float32", "ort-float16", "ort-int8-channel",
            "ort-int8-tensor", "ort-int8-no-mlp", "ort-int8-s8-channel")
BASELINE = "torch-float32"
SPEED_GOAL = 2.0  # the issue's done-when: 2x float32's items/s at per-item Spearman >= 0.999


class Grouped(torch.nn.Module):
    """The exported forward: ``logits[keep]`` of a causal LM under a 4D additive ``mask`` given to every
    layer (Gemma 3's mask mapping names full and sliding layers; both get it), ``keep`` the flat
    row-major indices of the positions whose logits are returned."""

    def __init__(self, lm: Any):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, mask: torch.Tensor,
                keep: torch.Tensor) -> torch.Tensor:
        masks = {"full_attention": mask, "sliding_attention": mask}
        hidden = self.lm.model(input_ids=input_ids, attention_mask=masks, position_ids=position_ids,
                               use_cache=False).last_hidden_state
        return self.lm.lm_head(hidden.reshape(-1, hidden.shape[-1]).index_select(0, keep))


class GroupedLM(torch.nn.Module):
    """What :class:`dialeval.core.lm.LMScorer` reads of a causal LM, with the forward of ``run``
    (``(ids, positions, mask, keep indices) -> logits``, numpy or torch): a config without a sliding
    window (so FED takes the grouped layout), ``logits_to_keep`` as a boolean mask, float32. A call
    whose largest position reaches ``window`` (Gemma's sliding window) raises: the block mask is exact
    only below it."""

    def __init__(self, run: Callable, lm: Any, tag: str):
        super().__init__()
        self.run = run
        self.window = lm.config.sliding_window or lm.config.max_position_embeddings
        self.config = SimpleNamespace(max_position_embeddings=lm.config.max_position_embeddings, sliding_window=None,
                                      _attn_implementation="sdpa", vocab_size=lm.config.vocab_size, name_or_path=tag)
        self.dialeval_weights_id = f"{lm.dialeval_weights_id}+{tag}"
        self._anchor = torch.nn.Parameter(torch.zeros(0), requires_grad=False)  # LMScorer reads the device from it

    @property
    def dtype(self) -> torch.dtype:
        return torch.float32

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor,
                use_cache: bool = False, logits_to_keep: torch.Tensor | None = None) -> SimpleNamespace:
        if int(position_ids.max()) >= self.window:
            raise ValueError(f"a context plus follow-up reaches position {int(position_ids.max())}: beyond Gemma's "
                             f"sliding window ({self.window}) the grouped layout is not exact")
        parts = []
        for row in range(input_ids.shape[0]):  # exported with one row; rows of a padded batch go one by one
            keep = logits_to_keep[row].nonzero()[:, 0]
            if len(keep):
                out = self.run(input_ids[row:row + 1], position_ids[row:row + 1], attention_mask[row:row + 1], keep)
                parts.append(torch.from_numpy(out) if isinstance(out, np.ndarray) else out)
        return SimpleNamespace(logits=torch.cat(parts))


def export(lm: Any, path: Path) -> None:
    """``Grouped(lm)`` to ONNX at ``path`` (weights beside it), sequence and kept positions dynamic."""
    from torch.export import Dim

    length, kept = Dim("T", min=2, max=4096), Dim("K", min=1, max=8192)
    n = 40
    example = (torch.randint(5, 1000, (1, n)), torch.arange(n)[None],
               torch.triu(torch.full((n, n), torch.finfo(torch.float32).min), 1)[None, None], torch.arange(10, 30))
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(Grouped(lm).eval(), example, str(path), dynamo=True, external_data=True, optimize=True,
                      input_names=["input_ids", "position_ids", "mask", "keep"], output_names=["logits"],
                      dynamic_shapes={"input_ids": {1: length}, "position_ids": {1: length},
                                      "mask": {2: length, 3: length}, "keep": {0: kept}})


def mlp_matmuls(path: Path, hidden: int, intermediate: int) -> list[str]:
    """The MatMul nodes of the MLPs (gate, up: a constant weight ``hidden x intermediate``; down:
    ``intermediate x hidden``), found by their weights' shapes."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    shapes = {t.name: tuple(t.dims) for t in model.graph.initializer}
    mlp = {(hidden, intermediate), (intermediate, hidden)}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and shapes.get(n.input[1]) in mlp]


def build(variant: str, source: Path, cache: Path, lm: Any) -> Path:
    """The graph file of an ORT variant (made from ``source``, the float32 export, once)."""
    target = cache / f"{variant}.onnx"
    if target.is_file():
        return target
    if variant == "ort-float32":
        return source
    if variant.startswith("ort-int8"):
        from onnxruntime.quantization import QuantType, quantize_dynamic

        exclude = mlp_matmuls(source, lm.config.hidden_size, lm.config.intermediate_size) if variant == "ort-int8-no-mlp" else []
        weights = QuantType.QInt8 if "-s8-" in variant else QuantType.QUInt8  # s8: saturates on AVX2 (docstring)
        quantize_dynamic(str(source), str(target), op_types_to_quantize=["MatMul"], per_channel=variant != "ort-int8-tensor",
                         weight_type=weights, nodes_to_exclude=exclude, use_external_data_format=True,
                         extra_options={"MatMulConstBOnly": True})
        return target
    if variant == "ort-float16":
        import onnx
        from onnxruntime.transformers.float16 import convert_float_to_float16

        half = convert_float_to_float16(onnx.load(str(source)), keep_io_types=True)
        onnx.save(half, str(target), save_as_external_data=True, location=target.name + ".data")
        return target
    raise ValueError(f"unknown variant {variant!r}")


def ort_runner(path: Path) -> Callable:
    """A one-thread ONNX Runtime session over ``path`` (``ORT_ENABLE_ALL``) as a ``run`` of :class:`GroupedLM`."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def run(ids: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor, keep: torch.Tensor) -> np.ndarray:
        feed = {"input_ids": ids.numpy(), "position_ids": positions.numpy(), "mask": mask.numpy(), "keep": keep.numpy()}
        return session.run(None, feed)[0]

    return run


def logit_check(runs: dict[str, Callable], reference: Callable, seed: int = 0) -> dict[str, dict[str, float]]:
    """Per variant the largest absolute logit difference against ``reference`` (torch float32) on two
    inputs: random ids, causal mask, 37 tokens with 20 kept and 512 with 300 kept (FED's row size);
    beside it the largest absolute logit of the reference."""
    generator = torch.Generator().manual_seed(seed)
    inputs = []
    for length, kept in ((37, 20), (512, 300)):
        ids = torch.randint(5, 200_000, (1, length), generator=generator)
        mask = torch.triu(torch.full((length, length), torch.finfo(torch.float32).min), 1)[None, None]
        keep = torch.sort(torch.randperm(length, generator=generator)[:kept]).values
        inputs.append((ids, torch.arange(length)[None], mask, keep))
    with torch.no_grad():
        wanted = [reference(*x) for x in inputs]
    out = {}
    for name, run in runs.items():
        got = [torch.as_tensor(run(*x)) for x in inputs]
        out[name] = {"max_abs_logit_diff": max(float((g - w).abs().max()) for g, w in zip(got, wanted)),
                     "max_abs_logit": max(float(w.abs().max()) for w in wanted)}
    return out


def markdown(result: dict[str, Any]) -> str:
    """The report: machine, command, then per variant speed against torch float32 and fidelity."""
    m = result["machine"]
    flags = ", ".join(f"{f}: {'yes' if v else 'no'}" for f, v in m["flags"].items())
    lines = [
        "# FED on ONNX Runtime against torch float32 (issue 55)", "",
        "Written by:", "", f"    {result['command']}", "",
        f"CPU: {m['model']} ({m['cpu']}), torch {m['torch']} (capability {m['torch_cpu_capability']}), "
        f"onnxruntime {m['onnxruntime']}, 1 thread. Flags: {flags}. Load average (1 min) "
        f"{result['load_before'][0]} before the timed runs, {result['load_after'][0]} after (2 cores, shared).", "",
        f"Model: `{result['model']}` (FED's default), float32 export. Items: the first {result['items']} DailyDialog "
        "test items of `benchmarks/throughput.py` (as `benchmarks/precision.py`), FED at turn level in its default "
        f"variant. Speed: the items in chunks of {result['chunk']}, each chunk through every variant in turn (one process), the best of {result['repeats']} per chunk, summed; fidelity: per "
        "FED sub-score per-item Spearman and largest absolute difference against `torch-float32`; the logit column: "
        "largest absolute logit difference against torch float32 on two random inputs (37 and 512 tokens; "
        "largest logit there: "
        f"{max((r.get('max_abs_logit', 0) for r in result['variants'].values()), default=0):.3g}).", "",
        "| variant | items/s | vs torch float32 | CPU time vs torch float32 | min per-item Spearman (sub-score) | largest abs. diff | logit diff | "
        f"issue's goal ({SPEED_GOAL:g}x at >= {SPEARMAN_RULE}) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for v, row in result["variants"].items():
        worst = min(row["fidelity"].items(), key=lambda kv: kv[1]["spearman"])[0]
        met = v != BASELINE and row["speed_vs_float32"] >= SPEED_GOAL and row["min_spearman"] >= SPEARMAN_RULE
        logit = f"{row['max_abs_logit_diff']:.3g}" if "max_abs_logit_diff" in row else "-"
        cpu = f"{row['cpu_speed_vs_float32']:.2f}x" if "cpu_speed_vs_float32" in row else "-"  # not measured before
        lines.append(f"| {v} | {row['items_per_s']:.3f} | {row['speed_vs_float32']:.2f}x | {cpu} | {row['min_spearman']:.4f} "
                     f"({worst}) | {row['max_abs_diff']:.3g} | {logit} | {'-' if v == BASELINE else 'met' if met else 'no'} |")
    for v, why in result["skipped"].items():
        lines.append(f"| {v} | skipped: {why[:160]} | | | | | | |")
    lines += ["", "`torch-float32` is FED as it runs (key/value cache, follow-ups packed after each context); every other "
              "row runs FED's grouped layout (context and follow-ups as a token trie in rows of 512 under a block mask), "
              "which `torch-float32-grouped` measures in torch alone. `ort-float16` runs in float32 behind the casts ORT "
              "inserts (no float16 MatMul on this CPU); the int8 rows are dynamic int8 with uint8 weights "
              "(`benchmarks/onnx_runtime.py`'s docstring).", "",
              f"Peak resident memory of the process (every variant held at once): {result['peak_rss_gb']} GB.",
              "Per sub-score numbers: the `.json` beside this file."]
    return "\n".join(lines) + "\n"


def rss_gb() -> float:
    """The process's peak resident memory, GB (``ru_maxrss``: KiB on Linux)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=64, help="DailyDialog test items (the issue's check: 64)")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per variant (the best counts)")
    parser.add_argument("--chunk", type=int, default=16,
                        help="items timed per variant in turn (each chunk's best over the repeats, summed)")
    parser.add_argument("--cache", help="where the ONNX graphs are kept (default ~/.cache/dialeval/onnx/<weights id>)")
    parser.add_argument("--out", help="write OUT.md and OUT.json (default: print the markdown)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    import onnxruntime as ort

    info = {**machine(), "onnxruntime": ort.__version__}
    print(json.dumps(info), file=sys.stderr)
    name = default_dialogue_model()
    lm, tokenizer = load_causal_lm(name)
    cache = Path(args.cache) if args.cache else Path.home() / ".cache/dialeval/onnx" / re.sub(r"[^\w.@-]", "_", lm.dialeval_weights_id)
    source = cache / "ort-float32.onnx"
    if not source.is_file():
        began = time.perf_counter()
        export(lm, source)
        print(f"exported in {time.perf_counter() - began:.0f} s: {source}", file=sys.stderr)
    variants = ((BASELINE,) if BASELINE not in args.variants else ()) + tuple(args.variants)
    grouped = Grouped(lm).eval()
    runs: dict[str, Callable] = {}
    skipped: dict[str, str] = {}
    for variant in variants:
        if variant.startswith("ort-"):
            try:
                runs[variant] = ort_runner(build(variant, source, cache, lm))
            except Exception as e:  # noqa: BLE001  (a variant the CPU provider cannot run is reported, not fatal)
                skipped[variant] = f"{type(e).__name__}: {str(e)[:300]}"
                print(f"{variant}: skipped: {skipped[variant]}", file=sys.stderr)
        elif variant == "torch-float32-grouped":
            runs[variant] = torch.no_grad()(grouped)
    checks = logit_check({v: r for v, r in runs.items()}, grouped)
    print(json.dumps(checks), file=sys.stderr)
    scorers = {v: FEDScorer((GroupedLM(runs[v], lm, v), tokenizer)) for v in runs}
    scorers[BASELINE] = FEDScorer((lm, tokenizer))
    order = [v for v in variants if v in scorers]
    batch = items(args.items)
    load = [round(x, 2) for x in os.getloadavg()]

    def scoring(v: str) -> Callable[[list[dict]], dict[str, list[float]]]:
        return lambda chunk: split_result(scorers[v].score(
            conversations_of(chunk), progress=False))[0]
    rows = interleaved({v: scoring(v) for v in order}, batch, args.chunk, args.repeats, BASELINE, "float32")
    for v in order:
        rows[v].update(checks.get(v, {}))
    command = "OMP_NUM_THREADS=1 python benchmarks/onnx_runtime.py " + " ".join(argv if argv is not None else sys.argv[1:])
    result = {"command": command, "machine": info, "model": lm.dialeval_weights_id, "items": len(batch),
              "repeats": args.repeats, "chunk": args.chunk, "load_before": load, "load_after": [round(x, 2) for x in os.getloadavg()],
              "peak_rss_gb": rss_gb(), "variants": rows, "skipped": skipped}
    write_report(result, markdown(result), args.out)
    return 0

if __name__ == "__main__":
    sys.exit(main())
