"""Gradio widget of the holistic metric (a Hugging Face Space); the diversity aspect needs no model."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("dialeval/holistic", "diversity")
launch_gradio_widget(module)
