"""Gradio widget of the holistic metric (a Hugging Face Space), built by dialeval.modules.widget.
It shows the coherence configuration, the card's first example (model dialeval/gemma3-dailydialog).

Run locally: `python metrics/holistic/app.py`; GRADIO_SERVER_NAME / GRADIO_SERVER_PORT set the address.
The scoring endpoint is /compute (gradio_client).
"""

import evaluate
from dialeval.modules.widget import launch_widget

module = evaluate.load("dialeval/holistic", "coherence")
launch_widget(module)
