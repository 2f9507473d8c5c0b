"""Which of a metric's sub-scores catch which kind of reply? The behavioural suite's shares for every
sub-score a runner returns, on any DailyDialog split (issue 32, item 3: "whatever the suite shows").

`dialeval behaviour` judges each metric's declared scores only (FED: ``turn_overall``, the mean of its
turn qualities). This script builds the same cases and kinds (:mod:`dialeval.metaeval.behaviour`),
scores them through the metric's runner and the score cache, and reports, for every sub-score, the
share of contexts where the real reply scores strictly higher with its 95 % Wilson interval
(:func:`dialeval.metaeval.behaviour.checks.check_kind`; a flagged reply counts as the worst). Run it
on *validation* contexts to choose among sub-scores without reading the suite's test contexts:

    python benchmarks/behaviour_subscores.py fed --split validation --n 40 --kinds generic other_reply salad \
        --options '{"level": "turn"}' --output benchmarks/results/behaviour-fed-qualities
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from dialeval.core.spec import BEHAVIOUR_KINDS
from dialeval.metaeval.behaviour.cases import dailydialog_cases
from dialeval.metaeval.behaviour.checks import BAR, check_kind
from dialeval.metaeval.behaviour.kinds import build
from dialeval.metaeval.behaviour.suite import REAL, score_replies
from dialeval.registry import describe, spec


def subscore_checks(metric: str, split: str, n: int, kinds: list[str], options: dict, seed: int = 0) -> dict:
    """Per sub-score, the :class:`KindCheck` of every kind (declared as the metric declares it for its
    judged scores, else not), and the runner's signatures."""
    cases = dailydialog_cases(n, seed, split)
    replies = {REAL: [case.reply for case in cases], **build(cases, seed, kinds)}
    behaviour = spec(metric).behaviour
    scored, signatures = score_replies(metric, cases, replies, options, behaviour.references)
    must_catch = behaviour.must_catch
    checks = {}
    for score, real in scored[REAL].items():
        higher = describe(metric, score).higher_is_better is not False
        checks[score] = [check_kind(kind, real, scored[kind].get(score, [None] * n), higher,
                                    kind in must_catch.get(score, ())) for kind in kinds]
    return {"metric": metric, "split": split, "n": n, "seed": seed, "options": options,
            "signatures": signatures, "checks": {s: [asdict(c) for c in cs] for s, cs in checks.items()}}


def markdown(result: dict) -> str:
    kinds = [c["kind"] for c in next(iter(result["checks"].values()))]
    lines = [f"# {result['metric']}: the behavioural suite's shares per sub-score",
             "",
             f"{result['n']} DailyDialog {result['split']} contexts, seed {result['seed']}, options "
             f"`{json.dumps(result['options'])}` (`benchmarks/behaviour_subscores.py`): the share of contexts where "
             f"the real reply scores strictly higher than each kind, 95 % Wilson interval; the bar is {BAR:.2f}.",
             "",
             f"Signature: `{' / '.join(result['signatures'])}`",
             "",
             "| sub-score | " + " | ".join(kinds) + " |",
             "| --- | " + " | ".join("---" for _ in kinds) + " |"]
    for score, checks in result["checks"].items():
        cells = [f"{c['share']:.2f} [{c['ci_low']:.2f}, {c['ci_high']:.2f}]" if c["share"] is not None else "-"
                 for c in checks]
        lines.append(f"| {score} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def report(result: dict, render, output: Path | None) -> None:
    """Print ``render(result)``, or write it to ``output.md`` and the result to ``output.json``."""
    if output is None:
        print(render(result))
        return
    output.with_suffix(".md").write_text(render(result), encoding="utf-8")
    output.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("metric")
    parser.add_argument("--split", default="validation", choices=("validation", "test"))
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", nargs="+", choices=BEHAVIOUR_KINDS, default=list(BEHAVIOUR_KINDS))
    parser.add_argument("--options", type=json.loads, default={}, help="the runner's options, as JSON")
    parser.add_argument("--output", type=Path, help="writes OUTPUT.md and OUTPUT.json (else prints the table)")
    args = parser.parse_args(argv)
    report(subscore_checks(args.metric, args.split, args.n, args.kinds, args.options, args.seed), markdown,
           args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
