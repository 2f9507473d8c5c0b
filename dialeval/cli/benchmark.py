"""``dialeval benchmark``: correlation with human judgment (:mod:`dialeval.metaeval`), and ``--all``,
the meta-evaluation grid (:mod:`dialeval.metaeval.grid`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dialeval import registry
from dialeval.cli.common import parse_options
from dialeval.cli.outputs import check_output_dir, check_output_path
from dialeval.core.precision import AUTO, PRECISIONS
from dialeval.core.spec import Command
from dialeval.scoring.runners import RUNNERS


def cmd_benchmark(args: argparse.Namespace) -> int:
    """Run ``dialeval benchmark``; the exit status."""
    from dialeval.metaeval import run_benchmark

    if args.all:
        return _benchmark_all(args)
    if not args.metric:
        raise ValueError("benchmark needs --metric (or --all for every metric on every set)")
    if args.aspect and args.dataset:
        raise ValueError("give --aspect or --dataset, not both")
    dataset = f"{args.metric}-{args.aspect}" if args.aspect else args.dataset
    if not dataset:
        raise ValueError("benchmark needs --dataset (or --aspect for a metric with aspects)")
    if args.save:
        check_output_path(args.save, [dataset])
    options = parse_options(args.option)
    if args.precision:
        options["precision"] = args.precision
    result, table = run_benchmark(args.metric, dataset, **options)
    if args.save:
        Path(args.save).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else table)
    return 0


def _benchmark_all(args: argparse.Namespace) -> int:
    """``dialeval benchmark --all``: the meta-evaluation grid (:mod:`dialeval.metaeval.grid`)."""
    from dialeval.metaeval.grid import check_readme, run_grid, summary_table, update_readme, write_outputs

    if args.dataset or args.aspect or args.option:
        raise ValueError("--all runs every metric with its defaults: use --metrics/--datasets, not --dataset/--aspect/--option")
    if not args.output_dir:
        raise ValueError("--all needs --output-dir (where metaeval.md, metaeval.json and plots/ go)")
    folder = check_output_dir(args.output_dir, ("metaeval.md", "metaeval.json"), args.datasets or ())
    check_output_dir(folder / "plots")  # all before an hour of scoring
    if args.readme:
        check_readme(args.readme)  # before the run, not after it
    result = run_grid(sets=args.datasets, metrics=args.metrics or ([args.metric] if args.metric else None),
                      refresh=args.refresh, n_resamples=args.resamples,
                      after_set=lambda partial: write_outputs(partial, args.output_dir), precision=args.precision)
    paths = write_outputs(result, args.output_dir)
    if args.readme:
        paths["readme"] = update_readme(result, args.readme)
    print(json.dumps({k: str(v) for k, v in paths.items()}) if args.json else summary_table(result))
    print(f"wrote {paths['markdown']}, {paths['json']} and {Path(args.output_dir) / 'plots'}/", file=sys.stderr)
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval benchmark``."""
    p.add_argument("--metric", choices=sorted(RUNNERS))
    p.add_argument("--dataset", help="a named data set or a JSONL file")
    with_aspects = [spec for spec in registry.specs() if spec.aspects]
    p.add_argument("--aspect", choices=list(dict.fromkeys(a for spec in with_aspects for a in spec.aspects)),
                   help="; ".join(f"{spec.name}: the set of this aspect (same as --dataset {spec.name}-<aspect>)"
                                  for spec in with_aspects))
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", action="store_true")
    p.add_argument("--save", metavar="FILE.json", help="also write the result as JSON to this file")
    p.add_argument("--all", action="store_true", help="every metric x every human-judgment set (meta-evaluation)")
    p.add_argument("--output-dir", help="--all: folder for metaeval.md, metaeval.json and plots/")
    p.add_argument("--metrics", nargs="+", help="--all: only these metrics (grid job names or runner names)")
    p.add_argument("--datasets", nargs="+", help="--all: only these sets (names or JSONL files)")
    p.add_argument("--refresh", action="store_true", help="--all: rescore instead of reading cached scores")
    p.add_argument("--precision", choices=[*PRECISIONS, AUTO],
                   help="the model-based metrics' forward in this precision (dialeval.core.precision; default float32); "
                        "with --all every such metric's")
    p.add_argument("--resamples", type=int, default=1000, help="--all: bootstrap resamples per interval")
    p.add_argument("--readme", metavar="README.md", help="--all: also put the summary table in this file, between "
                   "<!-- metaeval:start --> and <!-- metaeval:end -->")


COMMAND = Command("benchmark", "correlation with human judgment", add_arguments, cmd_benchmark)
