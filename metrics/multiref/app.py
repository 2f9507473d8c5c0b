"""Gradio widget of the multiref metric (a Hugging Face Space)."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("dialeval/multiref")
launch_gradio_widget(module)
