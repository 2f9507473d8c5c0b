"""Gradio widget of the USL-H metric (a Hugging Face Space), built by dialeval.modules.widget.

Run locally: `python metrics/usl/app.py`; GRADIO_SERVER_NAME / GRADIO_SERVER_PORT set the address.
The scoring endpoint is /compute (gradio_client).
"""

import evaluate
from dialeval.modules.widget import launch_widget

module = evaluate.load("dialeval/usl")
launch_widget(module)
