"""Gradio widget of the fed metric (a Hugging Face Space)."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("dialeval/fed")
launch_gradio_widget(module)
