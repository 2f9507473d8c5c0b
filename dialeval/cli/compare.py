"""``dialeval compare``: is one system better than another? (:mod:`dialeval.compare`)"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.cli.common import add_report_arguments, metric_options
from dialeval.cli.outputs import check_output_path
from dialeval.core.spec import Command
from dialeval.scoring.runners import RUNNERS


def cmd_compare(args: argparse.Namespace) -> int:
    """Run ``dialeval compare``; the exit status."""
    from dialeval import compare

    for given in (args.save, args.markdown, args.plot):
        if given:
            check_output_path(given, args.systems)
    systems = compare.read_systems(args.systems, names=args.names, join=args.join)
    metrics = args.metric or ([systems.scored[systems.names[0]]["metric"]] if systems.kind == "scored" else [])
    if not metrics:
        raise ValueError("compare needs --metric to score response files (dialeval score outputs carry theirs)")
    result = compare.compare_systems(
        systems, metrics, metric_options(args.option, metrics), args.scores, human=not args.no_human,
        n_resamples=args.resamples, n_permutations=args.permutations, seed=args.seed, confidence=args.confidence,
        alpha=args.alpha, correction=args.correction, test=args.test, refresh=args.refresh,
        progress=not args.quiet, percentiles=args.percentiles)
    text = compare.to_json(result)
    report = compare.markdown(result)
    if args.save:
        Path(args.save).write_text(text + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(report, encoding="utf-8")
    if args.plot:
        compare.plot(result, args.plot)
    print(text if args.json else report, end="\n" if args.json else "")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval compare``."""
    from dialeval.stats.results import CORRECTIONS, TESTS

    p.add_argument("systems", nargs="+", metavar="SYSTEM.jsonl",
                   help="two or more systems' responses to the same contexts (generic JSONL), or outputs of "
                        "dialeval score")
    p.add_argument("--metric", action="append", choices=sorted(RUNNERS),
                   help="score the responses with this metric (repeat for several)")
    p.add_argument("--scores", nargs="+", metavar="SUB", help="only these sub-scores (default: all)")
    p.add_argument("--names", nargs="+", help="system names (default: the file names without .jsonl)")
    p.add_argument("--join", choices=("auto", "id", "line"), default="auto",
                   help="pair items on 'id' or line order (auto: on id when every record has one)")
    p.add_argument("--option", action="append", default=[], metavar="[METRIC:]KEY=VALUE", help="metric option")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (intervals, bootstrap p)")
    p.add_argument("--permutations", type=int, default=10000, help="approximate-randomization trials")
    p.add_argument("--seed", type=int, default=12345)
    p.add_argument("--confidence", type=float, default=0.95, help="level of the intervals")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm", help="for the number of pairs")
    p.add_argument("--test", choices=TESTS, default="ar", help="the test that decides significance and ranks")
    p.add_argument("--no-human", action="store_true",
                   help="do not score the references as a human pseudo-system shown beside the systems")
    p.add_argument("--percentiles", action="store_true",
                   help="show each system's mean as a percentile among human replies to DailyDialog test contexts "
                        "(the reference stored with the bundled weights)")
    add_report_arguments(p)
    p.add_argument("--plot", metavar="FILE.png", help="plot each system's mean and interval per sub-score")
    p.add_argument("--quiet", action="store_true", help="no progress messages")


COMMAND = Command("compare", "compare systems: intervals, paired significance tests, ranking", add_arguments,
                  cmd_compare)
