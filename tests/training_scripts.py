"""The ``training/*.py`` scripts as modules, for the tests that run one end to end through its
``main(argv)``: loaded from their paths, without putting ``training/`` on ``sys.path``. What the
scripts run is library code (``dialeval/<metric>/training*``, ``dialeval/core/*_training.py``), which
the tests import directly."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TRAINING = Path(__file__).resolve().parents[1] / "training"


@functools.lru_cache(maxsize=None)
def script(name: str) -> ModuleType:
    """``training/<name>.py``, imported once as the module ``training_scripts.<name>``."""
    module_name = f"{__name__}.{name}"
    spec = importlib.util.spec_from_file_location(module_name, TRAINING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
