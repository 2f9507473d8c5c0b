"""The behavioural suite (issue 32) of the bundled defaults, written to benchmarks/results/behaviour.md
and .json.

    python benchmarks/behaviour.py ssrem=200 holistic=100 grade=100 fed=50 combined=50

Each ``metric=N`` runs :func:`dialeval.metaeval.behaviour.behaviour` on the first ``N`` DailyDialog test
contexts of seed 0 (a smaller N is a prefix of a larger one); scores come from the score cache when
an earlier run stored them, so the file can be rewritten from cache alone. Different N per metric
are named in the table's N column. ``--cards`` also rewrites each metric card's paragraphs on the
suite (``metrics/<name>/README.md``, between the ``behaviour:start`` / ``behaviour:end`` markers
of its "Behavioural suite" section; a card without them is refused before the suite runs).
``--keep`` rescores only the metrics named and keeps every other metric's result as the existing
``.json`` stores it (read back exactly, :meth:`~dialeval.metaeval.behaviour.suite.MetricResult.from_dict`),
in the file's order:

    python benchmarks/behaviour.py holistic=100 --keep --note "..."

The note (how the file was made) is stored in the ``.json`` too: a ``--keep`` run without ``--note``
keeps the stored one. ``--keep`` alone rescores nothing: it rewrites the report (and with ``--cards``
every kept metric's card paragraphs) from the ``.json``, e.g. after the report's verdict changed:

    python benchmarks/behaviour.py --keep --cards

``--readme README.md`` also rewrites the summary table in the README (between the
``behaviour-table:start`` / ``behaviour-table:end`` markers; ``tests/test_behaviour.py`` checks it
equals the stored ``.json``'s table).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dialeval.metaeval.behaviour import behaviour, markdown, to_json
from dialeval.metaeval.behaviour.report import card_section, summary_table
from dialeval.metaeval.behaviour.suite import MetricResult
from dialeval.metaeval.marked import check_marked, write_marked

RESULTS = Path(__file__).resolve().parent / "results"
CARDS = Path(__file__).resolve().parents[1] / "metrics"
CARD_BLOCK = "behaviour"  # <!-- behaviour:start --> ... <!-- behaviour:end --> in each card's Behavioural suite
README_BLOCK = "behaviour-table"  # <!-- behaviour-table:start --> ... in the README: the summary table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", metavar="METRIC=N")
    parser.add_argument("--output", type=Path, default=RESULTS / "behaviour")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--note", default="", help="a paragraph on how the file was made (N per metric, cost)")
    parser.add_argument("--cards", action="store_true", help="also rewrite each metric card's paragraphs on the suite")
    parser.add_argument("--readme", type=Path, help="also rewrite the summary table in this README's block")
    parser.add_argument("--keep", action="store_true",
                        help="keep the results of the metrics not named from the existing --output .json")
    args = parser.parse_args()
    if not args.runs and not args.keep:
        parser.error("name at least one METRIC=N to run, or --keep alone to rewrite the report from its .json")
    kept, note = kept_results(args.output.with_suffix(".json")) if args.keep else ({}, "")
    carded = [run.partition("=")[0] for run in args.runs] or list(kept)  # --keep alone: every kept metric
    if args.cards:  # before the run, not after it
        for metric in carded:
            check_marked(CARDS / metric / "README.md", CARD_BLOCK)
    if args.readme:
        check_marked(args.readme, README_BLOCK)
    note = args.note or note
    rescored: dict[str, MetricResult] = {}
    for run in args.runs or [None]:
        if run is not None:
            metric, _, n = run.partition("=")
            rescored[metric] = behaviour(metric, n=int(n) if n else None, seed=args.seed)
        results = list({**kept, **rescored}.values())
        args.output.with_suffix(".json").write_text(to_json(results, note) + "\n", encoding="utf-8")
        args.output.with_suffix(".md").write_text(markdown(results, note=note), encoding="utf-8")
    if args.cards:
        by_metric = {**kept, **rescored}
        for metric in carded:
            write_marked(CARDS / metric / "README.md", CARD_BLOCK, card_section(by_metric[metric]))
    if args.readme:
        write_marked(args.readme, README_BLOCK, summary_table(results))
    print(markdown(results, note=note))


def kept_results(path: Path) -> tuple[dict[str, MetricResult], str]:
    """metric -> its result in an existing report's JSON, in the file's order; and the report's note."""
    if not path.is_file():
        raise FileNotFoundError(f"--keep: no {path} to keep results from")
    stored = json.loads(path.read_text(encoding="utf-8"))
    return {m["metric"]: MetricResult.from_dict(m) for m in stored["metrics"]}, stored.get("note", "")


if __name__ == "__main__":
    main()
