"""Every per-metric human-correlation run the metrics declare, one table file each.

The runs are the metrics' own declarations (:attr:`dialeval.core.spec.Benchmark.runs`, read through
:mod:`dialeval.registry`): for each, ``dialeval benchmark --metric M --dataset D --option ...``
writes ``OUT/<run>.json`` (``--save``) and ``OUT/<run>.txt`` (the printed table, the published
values beside). A new metric's runs join by being declared in its spec.

Usage: ``python benchmarks/correlations.py [OUT_DIR] [--metrics M ...] [--list]`` (default OUT_DIR
benchmarks/results; ``--list`` prints each run's command, runs none). 2-core CPU, uncontended, one
thread: FED and FULL dominate, 15-30 min per model for both levels (every variant in one pass);
combined's leave-one-set-out run reads its components from the score cache of ``dialeval benchmark
--all`` and scores what is missing there first. benchmarks/results/README.md says which file each
run writes and who reads it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping, NamedTuple

from dialeval import registry


class Run(NamedTuple):
    """One declared run: its results file name, the metric, the data set and the runner options."""

    name: str
    metric: str
    dataset: str
    options: Mapping[str, Any]


def declared_runs(metrics: tuple[str, ...] = registry.METRICS) -> Iterator[Run]:
    """The runs the ``metrics`` declare, in registry order, then as each metric declares them."""
    for spec in registry.specs():
        if spec.name in metrics:
            for dataset, benchmark in spec.benchmarks.items():
                for name, options in benchmark.runs.items():
                    yield Run(name, spec.name, dataset, options)


def command(run: Run, out: Path) -> list[str]:
    """The ``dialeval benchmark`` command of ``run``, saving its result under ``out``."""
    options = [f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in run.options.items()]
    return [sys.executable, "-m", "dialeval.cli", "benchmark", "--metric", run.metric, "--dataset", run.dataset,
            *(arg for option in options for arg in ("--option", option)), "--save", str(out / f"{run.name}.json")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="benchmarks/results", help="folder of the result files")
    parser.add_argument("--metrics", nargs="+", choices=registry.METRICS, default=registry.METRICS,
                        help="only these metrics' runs")
    parser.add_argument("--list", action="store_true", help="print the commands, run none")
    args = parser.parse_args(argv)
    out = Path(args.out)
    runs = list(declared_runs(tuple(args.metrics)))
    if args.list:
        for run in runs:
            print(f"{run.name}: {' '.join(['python', *command(run, out)[1:]])}")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for run in runs:
        print(f"== {run.name}", flush=True)
        done = subprocess.run(command(run, out), capture_output=True, text=True)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            return done.returncode
        (out / f"{run.name}.txt").write_text(done.stdout, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
