"""dialeval demo (a Gradio Space): score one conversation with every dialeval metric.

Tab "Score": paste a conversation (one turn per line, the last line is the response being rated)
and, optionally, reference responses (one per line); pick metrics; every score comes back with its
range, its direction, a one-line meaning (as the metric declares them, :func:`dialeval.registry.describe`)
and what it refers to. Beside the table, a bar chart reads each score that has a stored human
reference as its percentile among human replies to DailyDialog test contexts
(:mod:`dialeval.scoring.human_reference`; 100: better than every one), and a line names the flags a
metric set on the response (a degenerate reply: empty, no words, repetitive, unknown words, ...).
Every registered metric is offered: its declared demo choices, or one choice with its runner's
defaults. The scoring goes through
:mod:`dialeval.scoring.runners`, the same code as ``dialeval score`` and the evaluate modules, and models
load once per process.

Run locally: ``pip install -e ".[demo]" && python spaces/dialeval-demo/app.py`` (http://127.0.0.1:7860).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
import pandas as pd

from dialeval import registry
from dialeval.core.results import FLAGGED, flag_summary, flags_of, percentile_means
from dialeval.core.scales import Scale
from dialeval.core.spec import DemoChoice, MetricSpec
from dialeval.models import ModelNotFoundError
from dialeval.scoring.human_reference import load_reference, ordinal
from dialeval.scoring.runners import get_runner

# What a choice may need beyond the response: item field -> what to ask the user for.
NEEDS = {
    "context": "a context turn (at least two lines: the context, then the response)",
    "references": "reference responses (paste at least one)",
}


def demo_choices(spec: MetricSpec) -> tuple[DemoChoice, ...]:
    """The metric's declared demo choices, or one with its runner's defaults (labelled with its summary)."""
    return spec.demo or (DemoChoice(f"{spec.name} ({spec.summary})"),)


# label -> (metric, choice): every registered metric's demo choices, in registry order
CHOICES: dict[str, tuple[str, DemoChoice]] = {
    choice.label: (spec.name, choice) for spec in registry.specs() for choice in demo_choices(spec)
}
NEED_REFERENCES = " and ".join(dict.fromkeys(m for m, c in CHOICES.values() if "references" in c.needs))
HEADERS = ["metric", "score", "value", "range", "direction", "refers to", "meaning"]
COLUMN_WIDTHS = ["7%", "14%", "8%", "11%", "11%", "12%", "37%"]  # the meaning wraps inside the page width
# No height limit: the table grows with its rows (about 40 with every metric) instead of scrolling
# inside the page (tests/test_demo_browser.py checks this in Chromium).
TABLE_MAX_HEIGHT = "none"
PLOT_COLUMNS = ["score", "percentile"]
Y_LIM = (0, 100)  # the chart's axis: every percentile on the whole scale
SUMMARY_NOTE = ("Summary, named as in every dialeval result: flagged (1 when the response is degenerate), "
                "<score>_unflagged (the score leaving flagged replies out: '-' here when it is flagged) and "
                "<score>_percentile (among human replies, a flagged reply at 0).")
RAW_NOTE = ("**raw**: a value no normalisation has put on a fixed scale (a log-likelihood, an SSREM part "
            "before scaling); compare it only between responses scored with the same model and settings.")


def parse_lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def range_cell(scale: Scale) -> str:
    """The range, marked raw when the value is not normalised (``"unbounded, raw"``)."""
    return f"{scale.range_text()}, raw" if scale.raw else scale.range_text()


def score_row(metric: str, choice: DemoChoice, score: str, value: float) -> list[Any]:
    """``[metric, score, value, range, direction, refers to, meaning]`` of one sub-score."""
    scale = registry.describe(metric, score)
    shown = None if math.isnan(value) else round(value, 4)
    return [metric, score, shown, range_cell(scale), scale.direction_text(), choice.subject(score), scale.meaning]


def unscored_row(metric: str, choice: DemoChoice, reason: str) -> list[Any]:
    """The one row of a metric that could not run, saying why."""
    subjects = " / ".join(text for _prefix, text in choice.refers_to)
    return [metric, "-", None, "-", "-", subjects, f"not scored: {reason}"]


@dataclass
class Scored:
    """What one metric choice gives for the item: its table rows, the percentile of each score with a
    human reference (``"metric: score"`` -> percentile; a flagged reply at 0), the flags it set on the
    response, the summary every dialeval result carries (:mod:`dialeval.core.results`: ``flagged``,
    ``<score>_unflagged``, ``<score>_percentile``, for the scores with a percentile) and notes (why a
    score has no percentile)."""

    metric: str
    rows: list[list[Any]]
    percentiles: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    summary: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def choice_scored(metric: str, choice: DemoChoice, item: dict[str, Any]) -> Scored:
    """The rows, percentiles and flags of one metric choice for ``item``."""
    missing = [NEEDS[name] for name in choice.needs if not item[name]]
    if missing:
        return Scored(metric, [unscored_row(metric, choice, f"{metric} needs {' and '.join(missing)}")])
    try:
        scores = get_runner(metric)([item], **choice.options)
    except (ValueError, ModelNotFoundError, FileNotFoundError) as e:
        return Scored(metric, [unscored_row(metric, choice, str(e))])
    per_item, _signature = scores
    flags = flags_of(scores, [item])
    found = Scored(metric, [score_row(metric, choice, score, values[0]) for score, values in per_item.items()],
                   flags=flags[0], summary=flag_summary(per_item, flags, []))
    if not registry.spec(metric).behaviour.scores:
        return found  # no human reference: the suite does not judge it (MetricSpec.behaviour's note)
    try:
        reference = load_reference(metric, choice.options, bool(item["references"]))
        read = {score: values for score, values in reference.read(per_item, flags).items() if values[0] is not None}
    except ValueError as e:
        found.notes.append(f"{metric}: no percentile ({e})")
        return found
    found.percentiles = {f"{metric}: {score}": values[0] for score, values in read.items()}
    found.summary.update({**flag_summary(per_item, flags, list(read)), **percentile_means(read)})
    return found


def summary_text(s: Scored) -> str:
    """One metric's summary line, named as in every dialeval result (:mod:`dialeval.core.results`)."""
    readings = [f"{name} {'-' if math.isnan(value) else f'{value:.4g}'}"
                for name, value in s.summary.items() if name != FLAGGED]
    return f"**{s.metric}**: {FLAGGED} {s.summary[FLAGGED]}" + "".join(f", {text}" for text in readings)


def percentile_text(scored: list[Scored]) -> str:
    """The line under the chart: each percentile in words, the flags set on the response, the notes."""
    lines = [f"**{label}**: {ordinal(value)} percentile of human replies on DailyDialog test"
             for s in scored for label, value in s.percentiles.items()]
    flagged = {", ".join(s.flags) for s in scored if s.flags}
    if flagged:
        lines.append(f"**Flagged as degenerate**: {'; '.join(sorted(flagged))} (scored at each score's worst "
                     "value and read as the 0th percentile, the policy of docs/inputs.md)")
    summaries = [summary_text(s) for s in scored if s.summary]
    if summaries:
        lines.append(SUMMARY_NOTE + "\n\n" + "\n\n".join(summaries))
    return "\n\n".join(lines + [note for s in scored for note in s.notes])


def score_conversation(conversation: str, references: str,
                       metrics: list[str]) -> tuple[list[list[Any]], pd.DataFrame, str]:
    """Rows ``[metric, score, value, range, direction, refers to, meaning]`` for the chosen ``metrics``
    (labels of :data:`CHOICES`; a metric that cannot run here, for want of a model, a context or
    references, gets one row saying why), the percentiles among human replies (columns
    :data:`PLOT_COLUMNS`) and the text under the chart (:func:`percentile_text`)."""
    turns = parse_lines(conversation)
    if not turns:
        raise gr.Error("Paste a conversation: one turn per line, the response to rate last.")
    if not metrics:
        raise gr.Error("Pick at least one metric.")
    item = {"context": turns[:-1], "response": turns[-1], "references": parse_lines(references)}
    scored = [choice_scored(*CHOICES[label], item) for label in metrics]
    plot = pd.DataFrame([(label, value) for s in scored for label, value in s.percentiles.items()],
                        columns=PLOT_COLUMNS)
    return [row for s in scored for row in s.rows], plot, percentile_text(scored)


def score_page(conversation: str, references: str, metrics: list[str]) -> tuple[list[list[Any]], gr.BarPlot, str]:
    """:func:`score_conversation` for the page: the chart's data with its axis fixed at 0 to 100 in
    every update (:data:`Y_LIM`), so that equal percentiles (every one 0 for a degenerate reply) are
    drawn as bars at their height on the full scale, never on an axis collapsed to their one value."""
    rows, plot, text = score_conversation(conversation, references, metrics)
    return rows, gr.BarPlot(value=plot, y_lim=list(Y_LIM)), text


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="dialeval") as demo:
        gr.Markdown("# dialeval\nAutomatic evaluation of open-domain dialogue: score a conversation's last turn.")
        with gr.Tab("Score"):
            conversation = gr.Textbox(
                label="Conversation (one turn per line; the last line is the response rated)", lines=6,
                value="Hi! How was your weekend?\nGreat, I went hiking in the mountains with my sister.",
            )
            references = gr.Textbox(label=f"Reference responses (optional; {NEED_REFERENCES} need one)", lines=3,
                                    value="It was lovely, I went for a long walk in the hills.")
            metrics = gr.CheckboxGroup(list(CHOICES), value=[next(iter(CHOICES))], label="Metrics")
            button = gr.Button("Score", variant="primary")
            with gr.Row():
                table = gr.Dataframe(headers=HEADERS, label="Scores", wrap=True, max_height=TABLE_MAX_HEIGHT,
                                     column_widths=COLUMN_WIDTHS, scale=3)
                with gr.Column(scale=1):
                    plot = gr.BarPlot(pd.DataFrame(columns=PLOT_COLUMNS), x="score", y="percentile", y_lim=list(Y_LIM),
                                      label="Percentile among human replies (DailyDialog test)", sort="-y",
                                      x_label_angle=-30)
                    readings = gr.Markdown()
            gr.Markdown(RAW_NOTE)
            button.click(score_page, [conversation, references, metrics], [table, plot, readings],
                         api_name="score")
    return demo


if __name__ == "__main__":
    build_demo().launch()
