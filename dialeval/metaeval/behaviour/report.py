"""The behavioural suite's results as Markdown and JSON.

The summary table has one row per metric and judged sub-score and one column per kind: the share of
contexts where the real reply scores strictly better; a kind the metric declares it must catch is
marked ``pass`` or ``FAIL`` at the 90 % bar. The control columns give the standardized mean change
(mean of control minus real, over the real replies' standard deviation; ``pass`` within +-0.5).
Per metric follow the intervals, counts and signature.
"""

from __future__ import annotations

import json
from typing import Sequence

from dialeval.metaeval.behaviour.checks import BAR, CONTROL_BAR, ControlCheck, KindCheck
from dialeval.metaeval.behaviour.suite import MetricResult
from dialeval.core.spec import BEHAVIOUR_CONTROLS, BEHAVIOUR_KINDS
from dialeval.core.tables import fmt


def _verdict(passed: bool | None) -> str:
    return "" if passed is None else (" pass" if passed else " FAIL")


def kind_cell(check: KindCheck | None) -> str:
    if check is None or check.share is None:
        return "-"
    return f"{check.share:.2f}{_verdict(check.passed)}"


def control_cell(check: ControlCheck | None) -> str:
    if check is None or check.standardized is None:
        return "-"
    return f"{check.standardized:+.2f}{_verdict(check.passed)}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def summary_table(results: Sequence[MetricResult]) -> str:
    """One row per metric x judged sub-score (module docstring)."""
    lines = [_row(["metric: score", "N", *BEHAVIOUR_KINDS, *BEHAVIOUR_CONTROLS, "verdict"]),
             _row(["---"] * (3 + len(BEHAVIOUR_KINDS) + len(BEHAVIOUR_CONTROLS)))]
    for result in results:
        for score in result.scores:
            kinds = {c.kind: c for c in score.kinds}
            controls = {c.control: c for c in score.controls}
            verdict = "FAIL" if score.failures() else "pass"
            lines.append(_row([f"{result.metric}: {score.score}", str(result.n_cases),
                               *(kind_cell(kinds.get(k)) for k in BEHAVIOUR_KINDS),
                               *(control_cell(controls.get(c)) for c in BEHAVIOUR_CONTROLS), verdict]))
    return "\n".join(lines)


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{fmt(low)}, {fmt(high)}]"


def detail(result: MetricResult) -> str:
    """The intervals, counts and signature of one metric."""
    lines = [f"### {result.metric}", "",
             f"{result.n_cases} contexts from {result.source}, seed {result.seed}, options "
             f"`{json.dumps(dict(result.options), sort_keys=True)}`; {result.seconds:g} s (scores read from the cache "
             "count as free).", "", f"Why these scores: {result.note}.", "", f"Signature: `{result.signature}`", ""]
    for score in result.scores:
        lines += [f"**{score.score}** (mean of the real replies {fmt(score.real_mean)}; "
                  f"{'higher' if score.higher_is_better else 'lower'} = better)", "",
                  _row(["kind", "declared", "n", "real wins", "ties", "share", "95 % Wilson interval",
                        "mean change"]), _row(["---"] * 8)]
        lines += [_row([c.kind, "yes" if c.declared else "", str(c.n), str(c.wins), str(c.ties),
                        kind_cell(c), _interval(c.ci_low, c.ci_high), fmt(c.mean_change)]) for c in score.kinds]
        lines += ["", _row(["control", "declared", "n", "mean change", "95 % bootstrap interval", "standardized"]),
                  _row(["---"] * 6)]
        lines += [_row([c.control, "yes" if c.declared else "", str(c.n), fmt(c.mean_change),
                        _interval(c.ci_low, c.ci_high), control_cell(c)]) for c in score.controls]
        lines.append("")
    return "\n".join(lines)


def markdown(results: Sequence[MetricResult], title: str = "Behavioural suite", note: str = "") -> str:
    """The whole report: the bar, ``note`` (how it was run), the summary table, each metric's details."""
    failing = [r.metric for r in results if not r.passed]
    head = [f"# {title}", "",
            "Share of contexts where the real reply scores strictly better than each kind of reply "
            f"(CheckList, Ribeiro et al. 2020; Sai et al. 2020). A declared kind passes at a share >= {BAR:.2f}; "
            f"a declared control passes when it moves the score by at most {CONTROL_BAR} standard deviations "
            "of the real replies' scores. `-`: not built or not scored.", "", *([note, ""] if note else []),
            summary_table(results), "",
            f"Failing: {', '.join(failing) if failing else 'none'}.", ""]
    return "\n".join(head + [detail(r) for r in results])


def to_json(results: Sequence[MetricResult]) -> str:
    """Strict JSON of the results: ``{"bar", "control_bar", "metrics": [...]}``."""
    return json.dumps({"bar": BAR, "control_bar": CONTROL_BAR, "metrics": [r.to_dict() for r in results]},
                      indent=2, allow_nan=False)
