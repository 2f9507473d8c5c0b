"""Third-party chatter dialeval keeps quiet unless asked (``DIALEVAL_VERBOSE=1``, or
``dialeval examples --verbose`` for its bars).

* evaluate's "Using the latest cached version of the module ..." warning, printed on every offline
  ``evaluate.load("dialeval/<name>")`` (the modules are registered in its cache on purpose);
* transformers' "Loading weights" bars and the GGUF "Converting and de-quantizing" bar of the first
  run, which builds the local SmolLM2 from its GGUF file;
* transformers' FutureWarning that ``is_gradient_checkpointing`` is deprecated, raised from inside
  peft whenever a LoRA adapter is applied.

dialeval's own progress (:mod:`dialeval.core.progress`) is untouched; asking for verbosity also shows
its lines from the start instead of after 10 s. :func:`quiet_third_party` runs when dialeval is
imported (so ``import dialeval`` before ``evaluate.load`` silences the first) and again before
dialeval loads a model (:func:`dialeval.core.lm_loading.load_causal_lm`, the NLI and sentence
encoders); transformers is only patched once something has imported it, so ``import dialeval`` stays
light. :func:`verbose_output` asks for verbosity inside a block (``dialeval examples --verbose``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import warnings
from typing import Iterator

VERBOSE_ENV = "DIALEVAL_VERBOSE"
_asked: list[bool] = []  # one entry per open verbose_output() block


def verbose() -> bool:
    """True when ``$DIALEVAL_VERBOSE`` or an open :func:`verbose_output` block asks for the messages."""
    return bool(_asked) or os.environ.get(VERBOSE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


@contextlib.contextmanager
def verbose_output() -> Iterator[None]:
    """Inside the block :func:`verbose` is true: evaluate's notice and the loading bars are shown
    (turned back on if transformers was already quietened) and dialeval's progress lines start at once;
    quiet again after it, unless ``$DIALEVAL_VERBOSE`` asks otherwise."""
    _asked.append(True)
    logging.getLogger("evaluate.loading").setLevel(logging.NOTSET)
    if "transformers" in sys.modules:
        import transformers
        from transformers import modeling_gguf_pytorch_utils as gguf
        from tqdm.auto import tqdm

        transformers.utils.logging.enable_progress_bar()
        gguf.tqdm = tqdm
    try:
        yield
    finally:
        _asked.pop()
        quiet_third_party()


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
