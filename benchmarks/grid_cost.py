"""What ``dialeval benchmark --all`` costs from scratch on this machine, per metric and in all.

The grid's cached cells keep the seconds they took when they were scored, often while other jobs
shared the CPU. This script measures instead, in one run: every grid job (same options as the grid,
:meth:`dialeval.core.spec.Job.options_on`) scores the first ``--n`` items of every set it applies to,
through :func:`dialeval.scoring.cache.scores_for` into an empty, temporary score cache (as the grid
does), after one warm-up call that loads its models (load time reported apart). A job that reads
other jobs' scores (the combined metric) finds its components there, scored on the same items just
before, as it finds their cells in a real grid; its own cost is what it adds.
The full-grid estimate of a job is ``sum over sets of (seconds per item on that set) x (set size)``,
so longer contexts (FED's dialog set) weigh as they do in the real run. ``--precision`` runs every job
whose runner takes the option in that precision (``auto``: what the grid runs with ``dialeval benchmark
--all --precision auto``); the jobs' signatures name it where it is not float32.

    OMP_NUM_THREADS=2 python benchmarks/grid_cost.py --n 20 --save benchmarks/results/metaeval/cost.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dialeval.core.precision import AUTO, PRECISIONS  # noqa: E402
from dialeval.metaeval.grid import JOBS  # noqa: E402
from dialeval.registry import judgment_sets, load_judgments  # noqa: E402
from dialeval.scoring import cache  # noqa: E402
from dialeval.scoring.cache import scores_for  # noqa: E402
from dialeval.scoring.chunks import with_precision_option  # noqa: E402
from dialeval.scoring.runners import get_runner  # noqa: E402
from dialeval.core.tables import format_table  # noqa: E402
from throughput import machine  # noqa: E402


def measure(n: int, sets: list[str], jobs: list[str] | None, precision: str | None = None) -> dict:
    out: dict = {"n_per_set": n, "precision": precision, "jobs": {}}
    loaded: set[str] = set()
    for job in (j for j in JOBS if not jobs or j.name in jobs):
        rows = {}
        for set_name in sets:
            items = [vars(it) for it in load_judgments(set_name)]
            options = with_precision_option(job.metric, job.options_on(set_name, items), precision)
            run = get_runner(job.metric)
            sample = items[:n]
            try:
                if job.name not in loaded:  # load the models once, timed apart
                    start = time.perf_counter()
                    run(sample[:1], **options)
                    out["jobs"].setdefault(job.name, {})["load_seconds"] = round(time.perf_counter() - start, 1)
                    loaded.add(job.name)
                start = time.perf_counter()
                scored = scores_for(job.metric, options, sample, progress=False)
            except (ValueError, FileNotFoundError) as e:  # not applicable (e.g. no references)
                rows[set_name] = {"status": f"n/a: {str(e)[:60]}"}
                continue
            per_item = (time.perf_counter() - start) / len(sample)
            rows[set_name] = {"seconds_per_item": round(per_item, 4), "set_size": len(items),
                              "full_set_seconds": round(per_item * len(items), 1), "signature": scored["signature"]}
            print(f"{job.name} on {set_name}: {per_item:.3f} s/item", file=sys.stderr, flush=True)
        entry = out["jobs"].setdefault(job.name, {})
        entry["sets"] = rows
        entry["full_grid_seconds"] = round(sum(r.get("full_set_seconds", 0.0) for r in rows.values()), 1)
    out["full_grid_seconds"] = round(sum(j["full_grid_seconds"] for j in out["jobs"].values()), 1)
    return out


def table(result: dict) -> str:
    rows = [[name, job.get("load_seconds", ""), *[
        f"{job['sets'][s]['seconds_per_item']:.3f}" if "seconds_per_item" in job["sets"].get(s, {}) else "n/a"
        for s in result["sets"]], f"{job['full_grid_seconds'] / 60:.1f}"] for name, job in result["jobs"].items()]
    head = ["job", "load s", *[f"{s} s/item" for s in result["sets"]], "full grid min"]
    precision = f", precision {result['precision']}" if result.get("precision") else ""
    return (format_table(head, rows) + f"\nwhole grid from scratch (estimate from {result['n_per_set']} items per set"
            f"{precision}): "
            f"{result['full_grid_seconds'] / 60:.1f} min, plus model loading")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20, help="items per set")
    parser.add_argument("--sets", nargs="+", default=list(judgment_sets()))
    parser.add_argument("--jobs", nargs="+", default=None, help=f"grid jobs (default all: {[j.name for j in JOBS]})")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--precision", choices=[*PRECISIONS, AUTO], default=None,
                        help="every model-based job in this precision (default: each metric's, float32)")
    parser.add_argument("--save", type=Path, default=None)
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as scores:  # an empty score cache: every cell from scratch
        cache.scores_dir = lambda: Path(scores)
        result = {**measure(args.n, args.sets, args.jobs, args.precision), "sets": args.sets, "machine": machine()}
    print(table(result))
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
