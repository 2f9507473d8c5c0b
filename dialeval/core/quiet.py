"""Third-party chatter dialeval keeps quiet unless asked (``DIALEVAL_VERBOSE=1`` or ``dialeval --verbose``).

* evaluate's "Using the latest cached version of the module ..." warning, printed on every offline
  ``evaluate.load("dialeval/<name>")`` (the modules are registered in its cache on purpose);
* transformers' "Loading weights" bars and the GGUF "Converting and de-quantizing" bar of the first
  run, which builds the local SmolLM2 from its GGUF file;
* transformers' FutureWarning that ``is_gradient_checkpointing`` is deprecated, raised from inside
  peft whenever a LoRA adapter is applied.

dialeval's own progress bars (benchmarks, ``dialeval score``) are untouched. :func:`quiet_third_party`
runs when dialeval is imported (so ``import dialeval`` before ``evaluate.load`` silences the first) and
again before dialeval loads a model; transformers is only patched once something has imported it, so
``import dialeval`` stays light.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import warnings

VERBOSE_ENV = "DIALEVAL_VERBOSE"


def verbose() -> bool:
    """True when ``$DIALEVAL_VERBOSE`` asks for the third-party messages."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def quiet_third_party(models_next: bool = False) -> None:
    """Silence the messages listed in the module docstring (idempotent; nothing when :func:`verbose`).

    transformers is patched when already imported, or imported for it when ``models_next`` (the
    caller is about to load a model anyway)."""
    if verbose():
        return
    logging.getLogger("evaluate.loading").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.* is deprecated", category=FutureWarning)
    if "transformers" not in sys.modules and not models_next:
        return
    try:
        import transformers
        from transformers import modeling_gguf_pytorch_utils as gguf
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - transformers is a dependency; gguf support may be absent
        return
    transformers.utils.logging.disable_progress_bar()
    gguf.tqdm = functools.partial(tqdm, disable=True)  # this bar bypasses transformers' switch
