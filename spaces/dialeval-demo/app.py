"""dialeval demo (a Gradio Space): score one conversation with every dialeval metric.

Tab "Score": paste a conversation (one turn per line, the last line is the response being rated)
and, optionally, reference responses (one per line); pick metrics; every score comes back with its
range, its direction, a one-line meaning (as the metric declares them, :func:`dialeval.registry.describe`)
and what it refers to. The scoring goes through
:mod:`dialeval.scoring.runners`, the same code as ``dialeval score`` and the evaluate modules, and models
load once per process.

Run locally: ``pip install -e ".[demo]" && python spaces/dialeval-demo/app.py`` (http://127.0.0.1:7860).
"""

from __future__ import annotations

import math
from typing import Any

import gradio as gr

from dialeval import registry
from dialeval.core.scales import Scale
from dialeval.core.spec import DemoChoice
from dialeval.models import ModelNotFoundError
from dialeval.scoring.runners import get_runner

# What a choice may need beyond the response: item field -> what to ask the user for.
NEEDS = {
    "context": "a context turn (at least two lines: the context, then the response)",
    "references": "reference responses (paste at least one)",
}
# label -> (metric, choice): every metric's demo choices (MetricSpec.demo), in registry order
CHOICES: dict[str, tuple[str, DemoChoice]] = {
    choice.label: (spec.name, choice) for spec in registry.specs() for choice in spec.demo
}
NEED_REFERENCES = " and ".join(dict.fromkeys(m for m, c in CHOICES.values() if "references" in c.needs))
HEADERS = ["metric", "score", "value", "range", "direction", "refers to", "meaning"]
COLUMN_WIDTHS = ["7%", "14%", "8%", "11%", "11%", "12%", "37%"]  # the meaning wraps inside the page width
# No height limit: the table grows with its rows (about 40 with every metric) instead of scrolling
# inside the page (tests/test_demo_browser.py checks this in Chromium).
TABLE_MAX_HEIGHT = "none"
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


def choice_rows(metric: str, choice: DemoChoice, item: dict[str, Any]) -> list[list[Any]]:
    """The rows of one metric choice for ``item``."""
    missing = [NEEDS[name] for name in choice.needs if not item[name]]
    if missing:
        return [unscored_row(metric, choice, f"{metric} needs {' and '.join(missing)}")]
    try:
        per_item, _signature = get_runner(metric)([item], **choice.options)
    except (ValueError, ModelNotFoundError, FileNotFoundError) as e:
        return [unscored_row(metric, choice, str(e))]
    return [score_row(metric, choice, score, values[0]) for score, values in per_item.items()]


def score_conversation(conversation: str, references: str, metrics: list[str]) -> list[list[Any]]:
    """Rows ``[metric, score, value, range, direction, refers to, meaning]`` for the chosen ``metrics``
    (labels of :data:`CHOICES`); a metric that cannot run here (no model, no context or references)
    gets one row saying why."""
    turns = parse_lines(conversation)
    if not turns:
        raise gr.Error("Paste a conversation: one turn per line, the response to rate last.")
    if not metrics:
        raise gr.Error("Pick at least one metric.")
    item = {"context": turns[:-1], "response": turns[-1], "references": parse_lines(references)}
    return [row for label in metrics for row in choice_rows(*CHOICES[label], item)]


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
            table = gr.Dataframe(headers=HEADERS, label="Scores", wrap=True, max_height=TABLE_MAX_HEIGHT,
                                 column_widths=COLUMN_WIDTHS)
            gr.Markdown(RAW_NOTE)
            button.click(score_conversation, [conversation, references, metrics], table, api_name="score")
    return demo


if __name__ == "__main__":
    build_demo().launch()
