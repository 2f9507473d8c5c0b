"""``dialeval behaviour``: does the real reply beat echoes, word salads, generic and other dialogues'
replies? (:mod:`dialeval.metaeval.behaviour`)"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.cli.common import add_report_arguments, metric_options
from dialeval.cli.outputs import check_output_path
from dialeval.core.spec import Command
from dialeval.scoring.runners import RUNNERS


def cmd_behaviour(args: argparse.Namespace) -> int:
    """``dialeval behaviour``: the behavioural suite (:mod:`dialeval.metaeval.behaviour`) of each ``--metric``."""
    from dialeval.metaeval.behaviour import load_cases, markdown, run, runnable_metrics, to_json

    if args.all:
        args.metric = list(dict.fromkeys([*(args.metric or []), *runnable_metrics()]))
    if not args.metric:
        raise ValueError("give --metric M (repeat for several) or --all")
    if args.reference:
        return _build_references(args)
    for given in (args.save, args.markdown):
        if given:
            check_output_path(given)
    options = metric_options(args.option, args.metric)
    cases, source = load_cases(args.dataset, args.n, args.seed)
    results = [run(metric, cases, source, args.seed, options.get(metric), args.refresh, not args.quiet)
               for metric in args.metric]
    text, report = to_json(results), markdown(results)
    if args.save:
        Path(args.save).write_text(text + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(report, encoding="utf-8")
    print(text if args.json else report, end="\n" if args.json else "")
    return 0


def _build_references(args: argparse.Namespace) -> int:
    """``dialeval behaviour --reference``: store each metric's human reference
    (:mod:`dialeval.metaeval.behaviour.reference`) instead of running the suite."""
    from dialeval.metaeval.behaviour.cases import DEFAULT_N
    from dialeval.metaeval.behaviour.reference import build_reference

    if args.dataset:
        raise ValueError("--reference is built from DailyDialog test (the stored percentiles say so); drop --dataset")
    options = metric_options(args.option, args.metric)
    for metric in args.metric:
        n = args.n or DEFAULT_N
        path = build_reference(metric, n, args.seed, options.get(metric), args.refresh, not args.quiet)
        print(f"{metric}: the human reference of {n} DailyDialog test replies stored in {path}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval behaviour``."""
    p.add_argument("--metric", action="append", choices=sorted(RUNNERS),
                   help="run the suite on this metric (repeat for several)")
    p.add_argument("--all", action="store_true", help="every metric the suite runs")
    p.add_argument("--reference", action="store_true",
                   help="instead of the suite: score the real replies only and store them as the metric's human "
                        "reference for percentiles (hub/<folder>/dialeval_percentiles.json)")
    p.add_argument("--dataset", metavar="FILE.jsonl",
                   help="contexts and real replies (context, response, optional next_turn); default: DailyDialog test")
    p.add_argument("--n", type=int, help="how many contexts (default: 200 from DailyDialog; all lines of --dataset)")
    p.add_argument("--seed", type=int, default=0, help="seeds the contexts and the built replies")
    p.add_argument("--option", action="append", default=[], metavar="[METRIC:]KEY=VALUE", help="metric option")
    add_report_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress messages")


COMMAND = Command("behaviour", "does the real reply beat echoes, word salads, generic replies, ...?", add_arguments,
                  cmd_behaviour)
