"""Fidelity and speed of each reduced precision against float32, per metric (issue 55).

For each metric (a job of ``benchmarks/throughput.py``: its runner with the bundled default) and each
precision of ``dialeval.core.precision`` the script scores the same DailyDialog test items (the items
of ``throughput.py``) through the runner with ``precision=...`` and reports, against float32:

* per sub-score the per-item Spearman and the largest absolute difference (``fidelity``); the issue's
  rule lets ``auto`` choose a precision only where the per-item Spearman is >= 0.999 (and no grid
  cell moves by more than 0.005: the grid under each precision is not run here, see ``--help``);
* items/s, as the ratio to float32's measured in the same process: the timed runs go round the
  precisions in turn (best of ``--repeats``), each after an untimed call on two items that loads
  and warms its model, so a busy CPU slows all of them alike; the load average is printed before
  and after;
* the CPU's flags that decide what runs natively (bfloat16: ``avx512_bf16``/``amx_bf16``; int8:
  ``avx512_vnni``/``avx_vnni``/``amx_int8``) and what ``precision="auto"`` resolves to on it.

    OMP_NUM_THREADS=1 python benchmarks/precision.py --metrics fed --n 64 --out benchmarks/results/precision

writes ``precision.md`` and ``precision.json`` (without ``--out``: the table on stdout).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dialeval  # noqa: E402,F401  (quiets third-party bars before the models load)
from dialeval import registry  # noqa: E402
from dialeval.core.precision import NATIVE_CPU_FLAGS, PRECISIONS, cpu_flags, runner_precision  # noqa: E402
from dialeval.scoring.runners import get_runner  # noqa: E402
from throughput import JOBS, items  # noqa: E402

REDUCED = tuple(p for p in PRECISIONS if p != "float32")
SPEARMAN_RULE = 0.999  # the per-item bar for auto


def machine() -> dict[str, Any]:
    """The CPU's deciding flags, torch's view of it, the threads and the load average."""
    flags = cpu_flags()
    relevant = sorted({f for fs in NATIVE_CPU_FLAGS.values() for f in fs} | {"avx2", "avx512f", "amx_tile"})
    return {"cpu": platform.processor() or platform.machine(), "model": _cpu_model(),
            "flags": {f: f in flags for f in relevant}, "torch": torch.__version__,
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads()}


def _cpu_model() -> str:
    path = Path("/proc/cpuinfo")
    if path.is_file():
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "?"


def fidelity(reference: dict[str, list[float]], reduced: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per sub-score: the per-item Spearman and the largest absolute difference against float32 (NaN
    items left out)."""
    out = {}
    for name, want in reference.items():
        pairs = [(a, b) for a, b in zip(want, reduced[name]) if not (math.isnan(a) or math.isnan(b))]
        if len(pairs) < 3:
            continue
        a, b = zip(*pairs)
        rho = spearmanr(a, b).statistic if len(set(a)) > 1 and len(set(b)) > 1 else float("nan")
        out[name] = {"spearman": float(rho), "max_abs_diff": max(abs(x - y) for x, y in pairs)}
    return out


def measure(job: str, batch: list[dict], precisions: tuple[str, ...], repeats: int) -> dict[str, Any]:
    """Every precision of one job: scores, best time, fidelity and speed against float32."""
    metric, options = JOBS[job]
    runner = get_runner(metric)
    seconds = {p: float("inf") for p in precisions}
    scores: dict[str, Any] = {}
    for _ in range(repeats):  # round the precisions in turn: a busy CPU slows them alike
        for precision in precisions:
            # load (the runners keep two models) and warm up, not timed
            runner(batch[:2], **options, precision=precision)
            began = time.perf_counter()
            scores[precision] = runner(batch, **options, precision=precision)
            seconds[precision] = min(seconds[precision], time.perf_counter() - began)
    reference, signature = scores["float32"]
    rows = {}
    for precision in precisions:
        per_item, sig = scores[precision]
        found = fidelity(reference, per_item)
        rows[precision] = {"seconds": seconds[precision], "items_per_s": len(batch) / seconds[precision],
                           "speed_vs_float32": seconds["float32"] / seconds[precision], "signature": sig,
                           "fidelity": found,
                           "min_spearman": min((f["spearman"] for f in found.values()), default=float("nan")),
                           "max_abs_diff": max((f["max_abs_diff"] for f in found.values()), default=float("nan"))}
    spec = registry.spec(metric)
    return {"job": job, "metric": metric, "options": options, "items": len(batch), "precisions": rows,
            "auto_resolves_to": runner_precision("auto", None, spec.auto_precisions),
            "declared_for_auto": list(spec.auto_precisions), "float32_signature": signature}


def markdown(result: dict[str, Any]) -> str:
    """The report: the machine, then per job and precision the fidelity and speed."""
    m = result["machine"]
    flags = ", ".join(f"{f}: {'yes' if v else 'no'}" for f, v in m["flags"].items())
    lines = [
        "# Reduced precision against float32 (issue 55)", "",
        f"`{result['command']}`", "",
        f"CPU: {m['model']} ({m['cpu']}), torch {m['torch']} (capability {m['torch_cpu_capability']}), "
        f"{m['threads']} thread(s). Flags: {flags}.", "",
        f"Load average (1, 5, 15 min) before: {result['load_before']}, after: {result['load_after']} "
        "(the CPU was shared: speed ratios are measured in one process with the precisions interleaved, "
        "absolute items/s are not comparable across runs).", "",
        f"Items: the first {result['n']} DailyDialog test items of `benchmarks/throughput.py` (seeded cut). "
        f"Fidelity: per sub-score per-item Spearman and largest absolute difference against float32; "
        f"the rule for `auto` is Spearman >= {SPEARMAN_RULE} (and no grid cell moving by more than 0.005: "
        "the grid is not run here).", "",
        "| job | precision | items/s | vs float32 | min per-item Spearman (sub-score) | largest abs. diff | auto may choose it |",
        "|---|---|---|---|---|---|---|",
    ]
    for job in result["jobs"]:
        if "skipped" in job:
            lines.append(f"| {job['job']} | skipped: {job['skipped'][:80]} | | | | | |")
            continue
        for precision, row in job["precisions"].items():
            worst = min(row["fidelity"].items(), key=lambda kv: kv[1]["spearman"], default=(None, None))[0]
            passes = precision != "float32" and row["min_spearman"] >= SPEARMAN_RULE
            lines.append(f"| {job['job']} | {precision} | {row['items_per_s']:.2f} | {row['speed_vs_float32']:.2f}x | "
                         f"{row['min_spearman']:.4f} ({worst}) | {row['max_abs_diff']:.3g} | "
                         f"{'per-item rule met' if passes else '-' if precision == 'float32' else 'no'} |")
        lines.append(f"| {job['job']} | auto here | | | | | {job['auto_resolves_to']} "
                     f"(declared: {', '.join(job['declared_for_auto']) or 'none'}) |")
    lines += ["", "Per sub-score numbers: the `.json` beside this file."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--metrics", nargs="+", choices=sorted(JOBS), default=["fed"])
    parser.add_argument("--precisions", nargs="+", choices=REDUCED, default=list(REDUCED))
    parser.add_argument("--n", type=int, default=64, help="items per job (the issue's check: FED on 64)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per precision (the best counts)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", help="write OUT.md and OUT.json (default: print the markdown)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    batch = items(args.n)
    precisions = ("float32", *args.precisions)
    result: dict[str, Any] = {"command": "OMP_NUM_THREADS=1 python benchmarks/precision.py " + " ".join(argv or sys.argv[1:]),
                              "machine": machine(), "n": len(batch),
                              "load_before": [round(x, 2) for x in os.getloadavg()], "jobs": []}
    print(json.dumps(result["machine"]), file=sys.stderr)
    for job in args.metrics:
        try:
            result["jobs"].append(measure(job, batch, precisions, args.repeats))
        except (FileNotFoundError, ValueError, KeyError) as e:  # a metric without weights here
            result["jobs"].append({"job": job, "skipped": str(e)})
        print(f"{job}: done", file=sys.stderr)
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    text = markdown(result)
    if args.out:
        Path(f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        Path(f"{args.out}.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
