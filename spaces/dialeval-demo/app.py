"""dialeval demo (a Gradio Space): score one conversation with every dialeval metric.

Tab "Score": paste a conversation (one turn per line, the last line is the response being rated)
and, optionally, reference responses (one per line); pick metrics; every score comes back with a
one-line meaning and the turn it refers to. The scoring goes through :mod:`dialeval.runners`, the
same code as ``dialeval score`` and the evaluate modules, and models load once per process.

Run locally: ``pip install -e ".[demo]" && python spaces/dialeval-demo/app.py`` (http://127.0.0.1:7860).
"""

from __future__ import annotations

import math
from typing import Any

import gradio as gr

from dialeval.models import ModelNotFoundError
from dialeval.runners import get_runner

# Metric choices shown in the demo: label -> (runner name, runner options, what the scores refer to).
CHOICES: dict[str, tuple[str, dict[str, Any], str]] = {
    "multiref (BLEU / METEOR / ROUGE-L / embeddings vs. references)": ("multiref", {}, "response vs. references"),
    "fed (18 qualities from follow-up likelihoods)": ("fed", {"level": "both"}, "response (turn_*) / whole conversation (dialog_*)"),
    "holistic coherence + fluency": ("holistic", {"aspects": ["coherence", "fluency"]}, "response given the context"),
    "holistic consistency (NLI)": ("holistic", {"aspects": ["consistency"]}, "response vs. its speaker's earlier turns"),
}
# One-line meaning of a score, by the start of its name.
MEANINGS: tuple[tuple[str, str], ...] = (
    ("bleu", "n-gram precision against the best-matching reference (0-1, higher = closer wording)"),
    ("meteor", "unigram match with stems and synonyms against the best reference (0-1)"),
    ("rouge", "longest common subsequence F-measure against the best reference (0-1)"),
    ("embedding_average", "cosine of mean word vectors, best reference (-1..1)"),
    ("vector_extrema", "cosine of extreme word-vector values, best reference (-1..1)"),
    ("greedy_matching", "mean best word-to-word vector cosine, best reference (-1..1)"),
    ("turn_", "FED turn level: positive minus negative follow-up likelihood (higher = better)"),
    ("dialog_", "FED dialog level: positive minus negative follow-up likelihood (higher = better)"),
    ("coherence", "how likely the response is after the context under a dialogue LM (0-1)"),
    ("fluency", "how likely the response is on its own under a dialogue LM (0-1)"),
    ("consistency", "1 - mean NLI contradiction with the speaker's earlier turns (0-1)"),
)
HEADERS = ["metric", "score", "value", "refers to", "meaning"]


def meaning(score_name: str) -> str:
    return next((text for prefix, text in MEANINGS if score_name.startswith(prefix)), "")


def parse_lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def score_conversation(conversation: str, references: str, metrics: list[str]) -> list[list[Any]]:
    """Rows ``[metric, score name, value, refers to, meaning]`` for the chosen ``metrics`` (labels of
    :data:`CHOICES`); a metric that cannot run here (no model, no references) gets one row saying why."""
    turns = parse_lines(conversation)
    if not turns:
        raise gr.Error("Paste a conversation: one turn per line, the response to rate last.")
    if not metrics:
        raise gr.Error("Pick at least one metric.")
    item = {"context": turns[:-1], "response": turns[-1], "references": parse_lines(references)}
    rows: list[list[Any]] = []
    for label in metrics:
        name, options, refers_to = CHOICES[label]
        try:
            per_item, _signature = get_runner(name)([item], **options)
        except (ValueError, ModelNotFoundError, FileNotFoundError) as e:
            rows.append([name, "-", None, refers_to, f"not scored: {e}"])
            continue
        for sub, values in per_item.items():
            value = values[0]
            rows.append([name, sub, None if math.isnan(value) else round(value, 4), refers_to, meaning(sub)])
    return rows


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="dialeval") as demo:
        gr.Markdown("# dialeval\nAutomatic evaluation of open-domain dialogue: score a conversation's last turn.")
        with gr.Tab("Score"):
            conversation = gr.Textbox(
                label="Conversation (one turn per line; the last line is the response rated)", lines=6,
                value="Hi! How was your weekend?\nGreat, I went hiking in the mountains with my sister.",
            )
            references = gr.Textbox(label="Reference responses (optional, one per line)", lines=3,
                                    value="It was lovely, I went for a long walk in the hills.")
            metrics = gr.CheckboxGroup(list(CHOICES), value=[next(iter(CHOICES))], label="Metrics")
            button = gr.Button("Score", variant="primary")
            table = gr.Dataframe(headers=HEADERS, label="Scores", wrap=True)
            button.click(score_conversation, [conversation, references, metrics], table, api_name="score")
    return demo


if __name__ == "__main__":
    build_demo().launch()
