"""The packaged ``evaluate`` modules: find them, load them, register them in evaluate's cache.

The scripts live in ``metrics/<name>/<name>.py`` of the source tree, and a wheel carries the same
folders (:mod:`dialeval.models.shipped`). Three ways load the same file:

* ``dialeval.load("multiref")`` — the module by its path, no network;
* ``evaluate.load("metrics/multiref")`` — from a checkout;
* ``evaluate.load("dialeval/multiref")`` — the design card's call. Offline, evaluate falls back to
  its module cache ``$HF_MODULES_CACHE/evaluate_modules/metrics/dialeval--<name>/<sha256>/``;
  :func:`register` (``dialeval register``, run by ``install.sh``) puts the scripts there.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from dialeval.core.held import held
from dialeval.models.shipped import shipped_dir

METRICS_ROOT = shipped_dir("metrics")
HUB_NAMESPACE = "dialeval"


def available_metrics() -> list[str]:
    """Names of the evaluate modules shipped with this checkout."""
    if not METRICS_ROOT.is_dir():
        return []
    return sorted(p.name for p in METRICS_ROOT.iterdir() if (p / f"{p.name}.py").is_file())


def module_dir(name: str) -> Path:
    """Folder of the evaluate module ``name``; ``ValueError`` for an unknown name."""
    if not isinstance(name, str) or name not in available_metrics():
        raise ValueError(
            f"unknown dialeval metric {name!r}; available: {available_metrics()} "
            f"(looked in {METRICS_ROOT}: a wheel or a checkout of dialeval ships them)"
        )
    return METRICS_ROOT / name


def load(name: str, config_name: str | None = None, **kwargs: Any):
    """``evaluate.load`` of the packaged module ``name`` by its local path (never the network)."""
    import evaluate

    from dialeval.core.quiet import quiet_third_party

    quiet_third_party(models_next=True)

    return evaluate.load(str(module_dir(name)), config_name, **kwargs)


def register(modules_cache: str | Path | None = None) -> list[Path]:
    """Copy every packaged module into evaluate's module cache as ``dialeval--<name>``.

    Mirrors what evaluate itself does after a Hub download: a folder per script hash holding the
    script, its card and its sibling files, ``__init__.py`` files and a json of the script's
    origin. Returns the folders written. Idempotent.
    """
    from evaluate.loading import init_dynamic_modules

    dynamic = Path(init_dynamic_modules(hf_modules_cache=modules_cache))
    metrics_dir = dynamic / "metrics"
    metrics_dir.mkdir(parents=True, exist_ok=True)
    (metrics_dir / "__init__.py").touch()
    written = []
    for name in available_metrics():
        src = METRICS_ROOT / name
        script = src / f"{name}.py"
        digest = hashlib.sha256(script.read_bytes()).hexdigest()
        base = metrics_dir / f"{HUB_NAMESPACE}--{name}"
        target = base / digest
        base.mkdir(exist_ok=True)
        (base / "__init__.py").touch()
        for old in base.iterdir():  # evaluate loads the newest hash: leave no stale script there
            if old.is_dir() and len(old.name) == 64:
                shutil.rmtree(old)
        shutil.copytree(
            src, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), copy_function=shutil.copyfile
        )
        (target / "__init__.py").touch()
        meta = {"original file path": str(script), "local file path": str(target / script.name)}
        (target / f"{name}.json").write_text(json.dumps(meta))
        written.append(target)
    return written


_LATEST: dict[str, Any] = {}  # "<metric>:<configuration>" -> its held loader of the latest scorer


def _latest_scorer(metric: str) -> Any:
    """The held loader (:mod:`dialeval.core.held`) keeping the latest scorer ``metric`` built:
    ``loader(settings, build)`` is ``build()``, or the kept scorer when ``settings`` are its own."""
    if metric not in _LATEST:
        _LATEST[metric] = held(maxsize=1, key=lambda settings, build: settings)(lambda settings, build: build())
    return _LATEST[metric]


def kept_scorer(module: Any, settings: Any, build: Any) -> Any:
    """The scorer of an evaluate ``module`` for ``settings``: the module's own while its settings (with
    the dialeval version) stay the same; else the latest one any instance of the metric (in the same
    configuration) built in this process, when its settings are these; else ``build()``. So another
    ``compute()``, or another ``evaluate.load`` of the metric (a notebook cell run again), reloads no
    model, word vectors or JVM. The latest scorer of each metric is kept with the runners' models and
    released with them (:func:`dialeval.core.held.release`); ``module._cached_scorer`` is the module's."""
    from dialeval.version import __version__

    key = repr((settings, __version__))
    if getattr(module, "_cached_key", None) != key:
        module._cached_scorer = _latest_scorer(f"{module.name}:{module.config_name}")(key, build)
        module._cached_key = key
    return module._cached_scorer
