"""dialeval: automatic evaluation metrics for open-domain dialogue.

The metrics live in :mod:`dialeval` (the real implementations) and are exposed as Hugging Face
``evaluate`` modules under ``metrics/<name>/``; :func:`dialeval.load` returns such a module.
"""

__version__ = "0.1.0"

from dialeval.modules import available_metrics, load  # noqa: E402
from dialeval.core.quiet import quiet_third_party  # noqa: E402

quiet_third_party()  # evaluate's offline "latest cached version" notice; DIALEVAL_VERBOSE=1 keeps it

__all__ = ["__version__", "available_metrics", "load"]
