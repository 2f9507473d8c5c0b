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

``--n-for fed=64`` gives a job its own number of items, ``--slice bfloat16=100`` runs a precision on
the first items only (compared with float32 on the same items), and ``--update`` merges a run's jobs
into the existing ``OUT.json`` (the commands accumulate), so that the report can be written in
several commands of a few CPU minutes each (``benchmarks/results/README.md`` lists them):

    OMP_NUM_THREADS=1 python benchmarks/precision.py --metrics fed --n 64 --out benchmarks/results/precision

writes ``precision.md`` and ``precision.json`` (without ``--out``: the table on stdout). Besides the
jobs of ``throughput.py``, ``ssrem-encoder`` is SSREM with its sentence-encoder checkpoint
(``dialeval/ssrem-chitchat-mpnet``: the bundled default reads GloVe vectors and has no forward).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dialeval  # noqa: E402,F401  (quiets third-party bars before the models load)
from dialeval import registry  # noqa: E402
from dialeval.core.precision import PRECISIONS, runner_precision  # noqa: E402
from dialeval.scoring.runners import get_runner  # noqa: E402
from throughput import JOBS, items, machine  # noqa: E402

JOBS = {**JOBS, "ssrem-encoder": ("ssrem", {"model": "dialeval/ssrem-chitchat-mpnet"})}

REDUCED = tuple(p for p in PRECISIONS if p != "float32")
SPEARMAN_RULE = 0.999  # the per-item bar for auto


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


def interleaved(runs: dict[str, Callable[[list[dict]], dict[str, list[float]]]], batch: list[dict], chunk: int,
                repeats: int, baseline: str, label: str, on_repeat: Callable[[], None] | None = None
                ) -> dict[str, dict[str, Any]]:
    """Every run of ``runs`` (name -> items -> per-item sub-scores) timed on ``batch`` chunk by chunk,
    the runs in turn on each chunk (a busy CPU slows them alike) after an untimed warm-up on two items;
    per chunk the best of ``repeats`` in wall and in process-CPU seconds (what a busy machine slows
    least). Per run: summed seconds, items/s, ``speed_vs_<label>`` and ``cpu_speed_vs_<label>`` against
    run ``baseline``, and :func:`fidelity` of its scores to the baseline's. ``on_repeat`` is called
    before each repeat (to reset a counter the runs keep)."""
    if len(batch) < 3:
        raise ValueError(f"--items: a per-item Spearman needs at least 3 items, got {len(batch)}")
    chunks = [range(i, min(i + chunk, len(batch))) for i in range(0, len(batch), chunk)]
    best = {(v, c): float("inf") for v in runs for c in range(len(chunks))}
    cpu = dict.fromkeys(best, float("inf"))
    parts: dict[tuple[str, int], dict[str, list[float]]] = {}
    for run in runs.values():
        run(batch[:2])
    for repeat in range(repeats):
        if on_repeat is not None:
            on_repeat()
        for c, span in enumerate(chunks):
            for v, run in runs.items():
                began, began_cpu = time.perf_counter(), time.process_time()
                parts[v, c] = run(batch[span.start:span.stop])
                best[v, c] = min(best[v, c], time.perf_counter() - began)
                cpu[v, c] = min(cpu[v, c], time.process_time() - began_cpu)
            print(f"repeat {repeat + 1}/{repeats}, items {span.start}-{span.stop - 1}: "
                  + ", ".join(f"{v} {best[v, c]:.1f} s" for v in runs), file=sys.stderr)
    seconds = {v: sum(best[v, c] for c in range(len(chunks))) for v in runs}
    cpu_seconds = {v: sum(cpu[v, c] for c in range(len(chunks))) for v in runs}
    scores = {v: {k: [x for c in range(len(chunks)) for x in parts[v, c][k]] for k in parts[v, 0]} for v in runs}
    rows = {}
    for v in runs:
        found = fidelity(scores[baseline], scores[v])
        rows[v] = {"seconds": seconds[v], "items_per_s": len(batch) / seconds[v],
                   f"speed_vs_{label}": seconds[baseline] / seconds[v], "cpu_seconds": cpu_seconds[v],
                   f"cpu_speed_vs_{label}": cpu_seconds[baseline] / cpu_seconds[v], "fidelity": found,
                   "min_spearman": min(f["spearman"] for f in found.values()),
                   "max_abs_diff": max(f["max_abs_diff"] for f in found.values())}
    return rows


def measure(job: str, batch: list[dict], precisions: tuple[str, ...], repeats: int,
            slices: dict[str, int]) -> dict[str, Any]:
    """Every precision of one job: scores, best time, fidelity and speed against float32.

    A precision in ``slices`` (bfloat16, slow where emulated) runs on the first ``slices[p]`` items
    only; float32 is then timed on that slice and on the rest apart, so that its time on the same slice
    is the speed's reference and its scores there are the fidelity's."""
    metric, options = JOBS[job]
    runner = get_runner(metric)
    cuts = sorted({min(slices.get(p, len(batch)), len(batch)) for p in precisions} | {len(batch)})
    seconds = {p: float("inf") for p in precisions}
    reference_seconds: dict[int, float] = {}
    scores: dict[str, Any] = {}
    for _ in range(repeats):  # round the precisions in turn: a busy CPU slows them alike
        for precision in precisions:
            # load (the runners keep two models) and warm up, not timed
            runner(batch[:2], **options, precision=precision)
            if precision != "float32":
                began = time.perf_counter()
                scores[precision] = runner(batch[:slices.get(precision, len(batch))], **options, precision=precision)
                seconds[precision] = min(seconds[precision], time.perf_counter() - began)
                continue
            parts, elapsed, start = [], 0.0, 0
            for cut in cuts:  # float32 in the pieces the other precisions stop at
                began = time.perf_counter()
                parts.append(runner(batch[start:cut], **options, precision=precision))
                elapsed += time.perf_counter() - began
                reference_seconds[cut] = min(reference_seconds.get(cut, float("inf")), elapsed)
                start = cut
            scores[precision] = ({k: [v for part in parts for v in part[0][k]] for k in parts[0][0]}, parts[0][1])
    reference, signature = scores["float32"]
    rows = {}
    for precision in precisions:
        per_item, sig = scores[precision]
        n = len(next(iter(per_item.values())))
        base = reference_seconds[n] if precision != "float32" else reference_seconds[len(batch)]
        seconds[precision] = base if precision == "float32" else seconds[precision]
        found = fidelity({k: v[:n] for k, v in reference.items()}, per_item)
        rows[precision] = {"items": n, "seconds": seconds[precision], "items_per_s": n / seconds[precision],
                           "speed_vs_float32": base / seconds[precision], "signature": sig, "fidelity": found,
                           "min_spearman": min((f["spearman"] for f in found.values()), default=float("nan")),
                           "max_abs_diff": max((f["max_abs_diff"] for f in found.values()), default=float("nan"))}
    spec = registry.spec(metric)
    return {"job": job, "metric": metric, "options": options, "items": len(batch), "precisions": rows,
            "auto_resolves_to": runner_precision("auto", None, spec.auto_precisions),
            "declared_for_auto": list(spec.auto_precisions), "float32_signature": signature}


def markdown(result: dict[str, Any]) -> str:
    """The report: the machine and the commands, then per job and precision the fidelity and speed."""
    m = result["machine"]
    flags = ", ".join(f"{f}: {'yes' if v else 'no'}" for f, v in m["flags"].items())
    commands = "\n".join(f"    {c}" for c in result["commands"])
    lines = [
        "# Reduced precision against float32 (issue 55)", "",
        "Written by (each command replaces its jobs' rows and keeps the others):", "", commands, "",
        f"CPU: {m['model']} ({m['cpu']}), torch {m['torch']} (capability {m['torch_cpu_capability']}), "
        f"{m['threads']} thread(s). Flags: {flags}.", "",
        "Speed ratios are measured in one process with the precisions interleaved (the load average of each "
        "job's run is in its row): absolute items/s are not comparable across rows or runs.", "",
        "Items: the first N DailyDialog test items of `benchmarks/throughput.py` (seeded cut); a precision "
        "run on fewer items (`--slice`) is compared with float32 on the same first items, in fidelity and in "
        "speed. Fidelity: per sub-score per-item Spearman and largest absolute difference against float32. "
        f"The rule for `auto` is Spearman >= {SPEARMAN_RULE} here and no grid cell moving by more than 0.005 "
        "(`precision-grid.md`, `benchmarks/precision_grid.py`); a metric declares a precision for `auto` "
        "(`AUTO_PRECISIONS`, the `declared` of each job's last row) only where both hold "
        "(`tests/test_precision.py` checks it).", "",
        "| job | precision | items | items/s | vs float32 | min per-item Spearman (sub-score) | largest abs. diff | per-item rule | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for job in result["jobs"]:
        if "skipped" in job:
            lines.append(f"| {job['job']} | skipped: {job['skipped'][:80]} | | | | | | | |")
            continue
        for precision, row in job["precisions"].items():
            worst = min(row["fidelity"].items(), key=lambda kv: kv[1]["spearman"], default=(None, None))[0]
            passes = precision != "float32" and row["min_spearman"] >= SPEARMAN_RULE
            lines.append(f"| {job['job']} | {precision} | {row.get('items', job['items'])} | {row['items_per_s']:.2f} | "
                         f"{row['speed_vs_float32']:.2f}x | {row['min_spearman']:.4f} ({worst}) | {row['max_abs_diff']:.3g} | "
                         f"{'met' if passes else '-' if precision == 'float32' else 'no'} | "
                         f"{job.get('load_before', ['?'])[0]}-{job.get('load_after', ['?'])[0]} |")
        lines.append(f"| {job['job']} | auto here | | | | | | {job['auto_resolves_to']} "
                     f"(declared: {', '.join(job['declared_for_auto']) or 'none'}) | |")
    lines += ["", "`int8` is per-channel dynamic int8 on every `nn.Linear`; `bfloat16-matmul` the float32 model with "
              "its products in oneDNN's bfloat16 math mode (`dialeval/core/precision.py`, whose docstring says "
              "what each rounds and why none reaches 0.999 at 2x on FED).", "",
              "Per sub-score numbers: the `.json` beside this file."]
    return "\n".join(lines) + "\n"


def slice_sizes(pairs: list[str]) -> dict[str, int]:
    """``["fed=64", ...]`` -> ``{"fed": 64, ...}``."""
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if not value.isdigit() or int(value) < 3:
            raise ValueError(f"expected NAME=N with N >= 3, got {pair!r}")
        out[key] = int(value)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--metrics", nargs="+", choices=sorted(JOBS), default=["fed"])
    parser.add_argument("--precisions", nargs="+", choices=REDUCED, default=list(REDUCED))
    parser.add_argument("--n", type=int, default=64, help="items per job (the issue's check: FED on 64)")
    parser.add_argument("--n-for", nargs="*", default=[], metavar="JOB=N", help="another number of items for a job")
    parser.add_argument("--slice", nargs="*", default=[], metavar="PRECISION=N",
                        help="run a precision on the first N items only (bfloat16=100: emulated bfloat16 is slow)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per precision (the best counts)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", help="write OUT.md and OUT.json (default: print the markdown)")
    parser.add_argument("--update", action="store_true",
                        help="keep OUT.json's other jobs (this run's jobs replace theirs) and its commands")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    sizes, slices = slice_sizes(args.n_for), slice_sizes(args.slice)
    precisions = ("float32", *args.precisions)
    command = "OMP_NUM_THREADS=1 python benchmarks/precision.py " + " ".join(argv or sys.argv[1:])
    result: dict[str, Any] = {"machine": machine(), "jobs": []}
    print(json.dumps(result["machine"]), file=sys.stderr)
    for job in args.metrics:
        batch = items(sizes.get(job, args.n))
        load = [round(x, 2) for x in os.getloadavg()]
        try:
            found = measure(job, batch, precisions, args.repeats, slices)
        except (FileNotFoundError, ValueError, KeyError) as e:  # a metric without weights here
            found = {"job": job, "skipped": str(e)}
        result["jobs"].append({**found, "load_before": load, "load_after": [round(x, 2) for x in os.getloadavg()]})
        print(f"{job}: done", file=sys.stderr)
    previous: dict[str, Any] = {"commands": [], "jobs": []}
    if args.update and args.out and Path(f"{args.out}.json").is_file():  # read now: a run beside this one may have written it
        previous = json.loads(Path(f"{args.out}.json").read_text(encoding="utf-8"))
        previous.setdefault("commands", [previous.pop("command")] if "command" in previous else [])
    result["commands"] = [*[c for c in previous["commands"] if c != command], command]
    done = {j["job"] for j in result["jobs"]}
    result["jobs"] = [j for j in previous["jobs"] if j["job"] not in done] + result["jobs"]
    write_report(result, markdown(result), args.out)
    return 0


def write_report(result: dict[str, Any], text: str, out: str | None) -> None:
    """Print the Markdown ``text``; with ``out``, also write it to ``OUT.md`` and ``result`` to ``OUT.json``."""
    if out:
        Path(f"{out}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        Path(f"{out}.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
