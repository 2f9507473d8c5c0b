"""Gradio widget of the GRADE metric (a Hugging Face Space)."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("dialeval/grade")
launch_gradio_widget(module)
