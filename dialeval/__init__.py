"""dialeval: automatic evaluation metrics for open-domain dialogue.

The metrics live in :mod:`dialeval` (the real implementations) and are exposed as Hugging Face
``evaluate`` modules under ``metrics/<name>/``; :func:`dialeval.load` returns such a module.
ARCHITECTURE.md describes the layout of the package.

Modules that moved into sub-packages keep their old import path for one release (:data:`MOVED`):
``import dialeval.metric_base`` (as copies of the evaluate modules in evaluate's cache do) gives
the module at its new path, ``dialeval.modules.metric_base``, with a ``DeprecationWarning`` naming
that path. A moved package's sub-modules follow it (``dialeval.benchmark.grid`` is
``dialeval.metaeval.grid``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from dialeval.version import __version__

# old module path -> new module path; removed in the release after 0.1
MOVED = {
    "dialeval.behaviour": "dialeval.metaeval.behaviour",
    "dialeval.benchmark": "dialeval.metaeval",
    "dialeval.core.significance": "dialeval.stats.paired",
    "dialeval.corpora": "dialeval.data.corpora",
    "dialeval.correlation": "dialeval.stats.correlation",
    "dialeval.hub": "dialeval.models.hub",
    "dialeval.inputs": "dialeval.modules.inputs",
    "dialeval.data.judgments": "dialeval.registry",
    "dialeval.judgments": "dialeval.registry",
    "dialeval.metric_base": "dialeval.modules.metric_base",
    "dialeval.outputs": "dialeval.cli.outputs",
    "dialeval.paper": "dialeval.data.paper",
    "dialeval.resume": "dialeval.scoring.resume",
    "dialeval.runners": "dialeval.scoring.runners",
    "dialeval.score_cache": "dialeval.scoring.cache",
    "dialeval.sharding": "dialeval.scoring.sharding",
    "dialeval.shipped": "dialeval.models.shipped",
    "dialeval.widget": "dialeval.modules.widget",
}


def new_path(name: str) -> str | None:
    """The new path of the moved module ``name`` (or of a sub-module of a moved package), else ``None``."""
    if not name.startswith("dialeval."):
        return None
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path as the module at its new path: the same module object, so that
    attributes set on one are seen through the other, and a ``DeprecationWarning``."""

    def __init__(self) -> None:
        self._specs: dict = {}  # alias -> the module's own spec, which the import system overwrites

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if new_path(name) else None

    def create_module(self, spec):
        new = new_path(spec.name)
        warnings.warn(f"{spec.name} moved to {new}; import it from there (the old path goes in the next release)",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._specs.pop(module.__spec__.name)


sys.meta_path.insert(0, _MovedModules())

from dialeval.core.quiet import quiet_third_party  # noqa: E402
from dialeval.models.resolve import set_advice  # noqa: E402
from dialeval.modules import available_metrics, load  # noqa: E402


def _hub_alternatives() -> dict[str, str]:
    from dialeval import registry  # imported when an error is written, so `import dialeval` stays light

    return registry.hub_alternatives()


def _build_hints() -> dict[str, str]:
    from dialeval import registry

    return registry.build_hints()


set_advice(_hub_alternatives, _build_hints)  # the metrics' stand-ins and build commands, handed down to models/

quiet_third_party()  # evaluate's offline "latest cached version" notice; DIALEVAL_VERBOSE=1 keeps it

__all__ = ["__version__", "MOVED", "available_metrics", "load"]
