"""Gradio widget of the combined metric (a Hugging Face Space), built by dialeval.modules.widget.

Run locally: `python metrics/combined/app.py`; GRADIO_SERVER_NAME / GRADIO_SERVER_PORT set the address.
The scoring endpoint is /compute (gradio_client).
"""

import evaluate
from dialeval.modules.widget import launch_widget

module = evaluate.load("dialeval/combined")
launch_widget(module)
