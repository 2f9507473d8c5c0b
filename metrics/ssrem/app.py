"""Gradio widget of the SSREM metric (a Hugging Face Space)."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("dialeval/ssrem")
launch_gradio_widget(module)
