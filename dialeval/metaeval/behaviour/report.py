"""The behavioural suite's results as Markdown and JSON.

The summary table has one row per metric and judged sub-score and one column per kind: the share of
contexts where the real reply scores strictly better; a kind the metric declares it must catch is
marked ``pass`` (a share of at least 0.90 whose 95 % Wilson interval starts at 0.80 or above),
``FAIL`` (a share below 0.90) or ``not enough contexts`` (:func:`~dialeval.metaeval.behaviour.checks.kind_verdict`).
The control columns give the standardized mean change
(mean of control minus real, over the real replies' standard deviation; ``pass`` within +-0.5).
Per metric follow the intervals, counts and signature.
"""

from __future__ import annotations

import json
from typing import Sequence

from dialeval.metaeval.behaviour.checks import BAR, CONTROL_BAR, LOW_BAR, ControlCheck, KindCheck
from dialeval.metaeval.behaviour.suite import MetricResult
from dialeval.core.spec import BEHAVIOUR_CONTROLS, BEHAVIOUR_KINDS
from dialeval.core.tables import fmt


def kind_cell(check: KindCheck | None) -> str:
    if check is None or check.share is None:
        return "-"
    return f"{check.share:.2f}" + ("" if check.verdict is None else f" {check.verdict}")


def control_cell(check: ControlCheck | None) -> str:
    if check is None or check.standardized is None:
        return "-"
    return f"{check.standardized:+.2f}" + ("" if check.passed is None else (" pass" if check.passed else " FAIL"))


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
            lines.append(_row([f"{result.metric}: {score.score}", str(result.n_cases),
                               *(kind_cell(kinds.get(k)) for k in BEHAVIOUR_KINDS),
                               *(control_cell(controls.get(c)) for c in BEHAVIOUR_CONTROLS), score.verdict]))
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


def card_section(result: MetricResult, results_file: str = "benchmarks/results/behaviour.md") -> str:
    """The metric card's paragraphs on ``result``: per judged score, the share of each declared kind
    with its interval, each declared control's standardized change, and the verdict."""
    lines = [f"`dialeval behaviour --metric {result.metric}` ({result.n_cases} contexts from {result.source}, "
             f"seed {result.seed}; `{results_file}`, issue 32): the real reply against replies built from the "
             "same context (95 % Wilson intervals in brackets; what the metric must catch is declared in its spec)."]
    for score in result.scores:
        kinds = ", ".join(f"{c.kind} {kind_cell(c).split()[0]}"
                          + ("" if c.ci_low is None or c.ci_high is None else f" [{c.ci_low:.2f}, {c.ci_high:.2f}]")
                          for c in score.kinds if c.declared)
        controls = ", ".join(f"{c.control} {'-' if c.standardized is None else f'{c.standardized:+.2f}'} SD"
                             for c in score.controls if c.declared)
        failed = [name.split(":", 1)[1] for name in score.failures()]
        undecided = [name.split(":", 1)[1] for name in score.undecided()]
        verdict = (f"**Fails** its declared checks on {', '.join(failed)} (a kind: real-reply share below {BAR:.2f}; "
                   f"a control: a change beyond {CONTROL_BAR} SD)." if failed else
                   f"**Not enough contexts** to pass on {', '.join(undecided)} (a share of at least {BAR:.2f} whose "
                   f"95 % Wilson interval starts below {LOW_BAR:.2f})." if undecided else "**Passes** every declared check.")
        lines.append(f"`{score.score}`: share of contexts where the real reply scores strictly higher than {kinds}"
                     + (f"; controls (standardized mean change) {controls}" if controls else "") + f". {verdict}")
    return "\n\n".join(lines)


def markdown(results: Sequence[MetricResult], title: str = "Behavioural suite", note: str = "") -> str:
    """The whole report: the bar, ``note`` (how it was run), the summary table, each metric's details."""
    failing = [r.metric for r in results if r.failures]
    undecided = [r.metric for r in results if r.undecided and not r.failures]
    head = [f"# {title}", "",
            "Share of contexts where the real reply scores strictly better than each kind of reply "
            f"(CheckList, Ribeiro et al. 2020; Sai et al. 2020). A declared kind passes at a share >= {BAR:.2f} "
            f"whose 95 % Wilson interval starts at {LOW_BAR:.2f} or above, fails below {BAR:.2f}, and has not enough "
            "contexts otherwise (9 of 10: [0.60, 0.98]); "
            f"a declared control passes when it moves the score by at most {CONTROL_BAR} standard deviations "
            "of the real replies' scores. `-`: not built or not scored.", "", *([note, ""] if note else []),
            summary_table(results), "",
            f"Failing: {', '.join(failing) if failing else 'none'}."
            + (f" Not enough contexts: {', '.join(undecided)}." if undecided else ""), ""]
    return "\n".join(head + [detail(r) for r in results])


def to_json(results: Sequence[MetricResult], note: str = "") -> str:
    """Strict JSON of the results: ``{"bar", "low_bar", "control_bar", "metrics": [...]}``, and ``"note"`` (how
    the file was made, as :func:`markdown` prints it) when given."""
    return json.dumps({"bar": BAR, "low_bar": LOW_BAR, "control_bar": CONTROL_BAR, **({"note": note} if note else {}),
                       "metrics": [r.to_dict() for r in results]}, indent=2, allow_nan=False)
