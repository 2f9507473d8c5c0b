"""The behavioural suite (issue 32) of the bundled defaults, written to benchmarks/results/behaviour.md
and .json.

    python benchmarks/behaviour.py ssrem=200 holistic=100 grade=100 fed=50 combined=50

Each ``metric=N`` runs :func:`dialeval.metaeval.behaviour.behaviour` on the first ``N`` DailyDialog test
contexts of seed 0 (a smaller N is a prefix of a larger one); scores come from the score cache when
an earlier run stored them, so the file can be rewritten from cache alone. Different N per metric
are named in the table's N column. ``--cards`` also rewrites each metric card's paragraphs on the
suite (``metrics/<name>/README.md``, between the ``behaviour:start`` / ``behaviour:end`` markers
of its "Behavioural suite" section, which the first run puts around the paragraphs it replaces).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.metaeval.behaviour import behaviour, markdown, to_json
from dialeval.metaeval.behaviour.report import card_section

RESULTS = Path(__file__).resolve().parent / "results"
CARDS = Path(__file__).resolve().parents[1] / "metrics"
START, END = "<!-- behaviour:start -->", "<!-- behaviour:end -->"


def write_card_section(card: Path, section: str) -> None:
    """Put ``section`` between the markers of ``card``; without markers, in place of the generated
    paragraphs of its "Behavioural suite" section (from the one on ``dialeval behaviour --metric``
    to the last one on a score), else at the start of that section. ``ValueError`` without one."""
    text = card.read_text(encoding="utf-8")
    block = f"{START}\n{section}\n{END}"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        header = "## Behavioural suite\n\n"
        if header not in text:
            raise ValueError(f"{card}: no '## Behavioural suite' section")
        head, rest = text.split(header, 1)
        paragraphs = rest.split("\n\n")
        generated = [i for i, p in enumerate(paragraphs) if p.startswith("`dialeval behaviour --metric")
                     or (p.startswith("`") and "share of contexts where the real reply" in p)]
        if generated and generated == list(range(generated[0], generated[-1] + 1)):
            paragraphs[generated[0]:generated[-1] + 1] = [block]
        else:
            paragraphs.insert(0, block)
        text = head + header + "\n\n".join(paragraphs)
    card.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", metavar="METRIC=N")
    parser.add_argument("--output", type=Path, default=RESULTS / "behaviour")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--note", default="", help="a paragraph on how the file was made (N per metric, cost)")
    parser.add_argument("--cards", action="store_true", help="also rewrite each metric card's paragraphs on the suite")
    args = parser.parse_args()
    results = []
    for run in args.runs:
        metric, _, n = run.partition("=")
        results.append(behaviour(metric, n=int(n) if n else None, seed=args.seed))
        args.output.with_suffix(".json").write_text(to_json(results) + "\n", encoding="utf-8")
        args.output.with_suffix(".md").write_text(markdown(results, note=args.note), encoding="utf-8")
    if args.cards:
        for result in results:
            write_card_section(CARDS / result.metric / "README.md", card_section(result))
    print(markdown(results, note=args.note))


if __name__ == "__main__":
    main()
