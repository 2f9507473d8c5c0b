"""Peak memory and time of ``dialeval examples`` before and after a change, in one run.

Each variant runs ``python -m dialeval.cli examples --json`` in a fresh process with an empty score cache of
its own (so the combined metric scores its components, as on a first run), ``OMP_NUM_THREADS=1``:
``before`` is the code of a git revision (``--before``, extracted with ``git archive``: ``dialeval/``,
``hub/``, ``examples/``, ``metrics/``), ``after`` this checkout. The variants alternate, ``--repeats``
times each. Per run: the child's peak resident set size (``ru_maxrss`` of ``os.wait4``), its CPU
seconds (user + system, which another job on the CPU disturbs less than the wall time) and the
wall seconds; the two variants' outputs are compared value by value (largest absolute difference).

    OMP_NUM_THREADS=1 python benchmarks/examples_memory.py --before 090dba5 \
        --save benchmarks/results/examples-memory.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("dialeval", "hub", "examples", "metrics")


def extract(revision: str, into: Path) -> Path:
    """The files of ``revision`` that ``dialeval examples`` reads, under ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, *SHIPPED], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_examples(code: Path, work: Path) -> dict[str, Any]:
    """``dialeval examples --json`` of the code under ``code`` in a child process with an empty score
    cache under ``work``: its output and the child's peak RSS (MB), CPU and wall seconds."""
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1", "DIALEVAL_CACHE": str(work)}
    out = work / "examples.json"
    start = time.perf_counter()
    with open(out, "w", encoding="utf-8") as stdout:
        child = subprocess.Popen([sys.executable, "-m", "dialeval.cli", "examples", "--json"], cwd=work, env=env,
                                 stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"dialeval examples of {code} failed with status {status}")
    return {"peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "wall_seconds": round(wall, 1), "output": json.loads(out.read_text(encoding="utf-8"))}


def numbers(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value with its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from numbers(item, f"{where}[{i}]")
    else:
        yield where, value


def largest_difference(a: Any, b: Any) -> float:
    """The largest absolute difference between two outputs' numbers (NaN equal to NaN); ``inf`` when
    their structure or any other value differs."""
    left, right = dict(numbers(a)), dict(numbers(b))
    if left.keys() != right.keys():
        return math.inf
    worst = 0.0
    for key, x in left.items():
        y = right[key]
        if isinstance(x, float) or isinstance(y, float):
            if not (math.isnan(x) and math.isnan(y)):
                worst = max(worst, abs(x - y))
        elif x != y:
            return math.inf
    return worst


def measure(before: str, repeats: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        code = {"before": extract(before, Path(tmp) / "before"), "after": ROOT}
        for repeat in range(repeats):
            for variant in ("before", "after"):
                work = Path(tmp) / f"{variant}-{repeat}"
                work.mkdir()
                found = run_examples(code[variant], work)
                outputs[variant] = found.pop("output")
                runs[variant].append(found)
                print(f"{variant} {repeat + 1}/{repeats}: {found}", file=sys.stderr, flush=True)
    return {"before": before, "after": git_head(), "repeats": repeats, "runs": runs,
            "largest_output_difference": largest_difference(outputs["before"], outputs["after"]),
            "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                        "load_average_at_end": [round(x, 2) for x in os.getloadavg()]}}


def git_head() -> str:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "dialeval"], capture_output=True, text=True)
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def report(result: dict[str, Any]) -> str:
    def best(variant: str, key: str) -> float:
        return min(run[key] for run in result["runs"][variant])

    lines = ["# Peak memory and time of `dialeval examples` (examples/dialogues.jsonl, every metric, "
             "empty score cache)\n",
             f"before: {result['before']}; after: {result['after']}; {result['repeats']} run(s) each, alternating, "
             f"in one process of benchmarks/examples_memory.py; {result['machine']['cpus']} CPUs shared with other "
             f"jobs (load average at the end {result['machine']['load_average_at_end']}).\n",
             "| | peak RSS (MB) | CPU s (user + system) | wall s |", "|---|---|---|---|"]
    for variant in ("before", "after"):
        lines.append(f"| {variant} | {best(variant, 'peak_rss_mb'):.0f} | {best(variant, 'cpu_seconds'):.1f} | "
                     f"{best(variant, 'wall_seconds'):.1f} |")
    lines += ["", f"Best of the runs per column. Largest absolute difference between the two outputs' numbers: "
              f"{result['largest_output_difference']:.3g}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="the git revision measured as 'before'")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--save", type=Path, help="write this JSON file and the Markdown table beside it (.md)")
    args = p.parse_args(argv)
    result = measure(args.before, args.repeats)
    text = report(result)
    print(text)
    if args.save:
        args.save.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        args.save.with_suffix(".md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
