"""The registry of dialeval's metrics: the one list of their names, and lookups over their specs.

Each name is a sub-package ``dialeval/<name>/`` whose ``spec.py`` declares the metric
(:class:`dialeval.core.spec.MetricSpec`). Everything that works on "every metric" (runners, the
human-judgment sets, the benchmark grid, hub/publish, the CLI, the demo) asks this module; no
other module outside a metric's own package names a metric. To add a metric, add its name here
(ARCHITECTURE.md has the checklist).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any, Callable, Mapping

from dialeval.core.scales import Scale
from dialeval.core.spec import ITEM_FIELDS, Benchmark, Job, MetricSpec, PaperCell
from dialeval.data.items import JudgmentItem, load_judgment_file

METRICS: tuple[str, ...] = ("multiref", "fed", "holistic", "grade", "ssrem", "combined", "full", "usl")


@functools.lru_cache(maxsize=None)
def spec(name: str) -> MetricSpec:
    """The declaration of metric ``name``; ``ValueError`` naming the metrics for an unknown one."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; choose from {sorted(METRICS)}")
    declared = importlib.import_module(f"dialeval.{name}.spec").SPEC
    if declared.name != name:
        raise ValueError(f"dialeval/{name}/spec.py declares {declared.name!r}, not {name!r}")
    return declared


def specs() -> list[MetricSpec]:
    """Every metric's declaration, in :data:`METRICS` order."""
    return [spec(name) for name in METRICS]


def judgment_sets() -> dict[str, Callable]:
    """Every human-judgment set: name -> loader of :class:`dialeval.data.JudgmentItem` s, ordered by
    the owning metric's name, then as the metric declares them (the grid's column order)."""
    return {name: load for s in sorted(specs(), key=lambda s: s.name) for name, load in s.judgment_sets.items()}


def load_judgments(name_or_path: str | Path) -> list[JudgmentItem]:
    """The items of a named human-judgment set (:func:`judgment_sets`) or of a JSON-lines file in the
    generic format (``context``, ``response``, ``score``, optional ``references``, ``system``,
    ``id``): :class:`dialeval.data.JudgmentItem` s whose ``score`` is the set's headline human rating
    (each owning metric's ``data.py`` says which; FED's dialog-level items put the whole conversation
    in ``context + [response]``)."""
    named = judgment_sets()
    if str(name_or_path) in named:
        return named[str(name_or_path)]()
    if Path(name_or_path).is_file():
        return load_judgment_file(name_or_path)
    raise FileNotFoundError(f"unknown human-judgment set {str(name_or_path)!r}: not one of {sorted(named)} and not a file")


def load_dataset(name_or_path: str | Path):
    """:func:`load_judgments` as a ``datasets.Dataset`` with columns ``context``, ``response``,
    ``score``, ``references``, ``system``, ``id``."""
    from datasets import Dataset

    return Dataset.from_list([vars(item) for item in load_judgments(name_or_path)])


def set_owner(set_name: str) -> MetricSpec | None:
    """The metric that owns the human-judgment set ``set_name`` (``None``: a file or unknown)."""
    return next((s for s in specs() if set_name in s.judgment_sets), None)


def benchmarks() -> dict[str, tuple[str, Benchmark]]:
    """Every named paper benchmark: data set name -> (metric, benchmark), the set owner's where
    several metrics benchmark one set (a metric may benchmark a set another owns: :func:`benchmark_of`)."""
    found: dict[str, tuple[str, Benchmark]] = {}
    for s in specs():
        for name, bench in s.benchmarks.items():
            if name not in found or set_owner(name) is s:
                found[name] = (s.name, bench)
    return found


def benchmark_of(metric: str, set_name: str) -> Benchmark | None:
    """``metric``'s own paper benchmark on ``set_name`` (``None`` when it declares none there)."""
    return spec(metric).benchmarks.get(set_name)


def grid_jobs() -> tuple[Job, ...]:
    """Every metric's jobs in the meta-evaluation grid."""
    return tuple(job for s in specs() for job in s.grid_jobs)


def published_cell(set_name: str, metric: str, sub: str) -> PaperCell | None:
    """The paper cell comparable with ``metric``'s ``sub`` on ``set_name``, as the set's owner declares it."""
    owner = set_owner(set_name)
    return owner.published(set_name, metric, sub) if owner and owner.published else None


def reported_value(set_name: str, metric: str, sub: str) -> tuple[float, str] | None:
    """``(value, source)`` that ``metric`` declares for its own ``sub`` on ``set_name`` (``MetricSpec.reported``)."""
    return spec(metric).reported.get((set_name, sub)) if metric in METRICS else None


def bundled_for_metric() -> dict[str, tuple[str, ...]]:
    """metric -> the bundled hub/ folders it loads by default."""
    return {s.name: s.bundled for s in specs()}


def cache_folders() -> dict[str, tuple[str, ...]]:
    """metric -> the bundled folders that key its cached scores: its own (``MetricSpec.bundled``)
    and those of the metrics it reads (``MetricSpec.reads``)."""
    own = bundled_for_metric()
    return {s.name: own[s.name] + tuple(f for m in s.reads for f in own[m]) for s in specs()}


def resolved_defaults(metric: str) -> dict[str, dict[str, str]]:
    """``metric`` and each metric it reads -> the models their runners load by default, as they
    resolve now (:attr:`MetricSpec.default_models`), and, for ``metric`` itself, its default settings
    (:attr:`MetricSpec.default_settings`); metrics without either, and names that are no registered
    metric, are left out."""
    if metric not in METRICS:
        return {}
    found = {}
    for name in (metric, *spec(metric).reads):
        defaults = dict(spec(name).default_models()) if spec(name).default_models else {}
        if name == metric:
            defaults.update(spec(name).default_settings)
        if defaults:
            found[name] = defaults
    return found


def fields_read(metric: str, options: Mapping[str, Any]) -> tuple[str, ...]:
    """The item fields ``metric``'s runner reads with ``options`` (:meth:`MetricSpec.fields_read`),
    which key its cached scores; every field (:data:`~dialeval.core.spec.ITEM_FIELDS`) for a name
    that is no registered metric."""
    return spec(metric).fields_read(options) if metric in METRICS else ITEM_FIELDS


def hub_alternatives() -> dict[str, str]:
    """A published model id -> the bundled stand-in any metric uses when it cannot be had."""
    return {model: stand_in for s in specs() for model, stand_in in s.hub_alternatives.items()}


def build_hints() -> dict[str, str]:
    """A model id -> the command that (re)builds it, from every metric."""
    return {model: command for s in specs() for model, command in s.build_hints.items()}


def paraphraser() -> Callable[[str, int], str | None] | None:
    """The first paraphraser a metric brings (:attr:`MetricSpec.paraphrase`), or ``None``."""
    return next((s.paraphrase for s in specs() if s.paraphrase is not None), None)


def describe(metric: str, score: str) -> Scale:
    """The :class:`~dialeval.core.scales.Scale` of ``metric``'s sub-score ``score`` (e.g. ``"fed"``,
    ``"turn_interesting"``); ``ValueError`` naming both when the pair is unknown."""
    known = spec(metric).scales()
    if score not in known:
        raise ValueError(f"no scale for {metric} score {score!r}; {metric} scores: {', '.join(known)}")
    return known[score]


def scale_dict(metric: str, sub: str) -> dict | None:
    """The scale of ``metric``'s ``sub`` as JSON (``None`` for a sub-score without a declared scale):
    range, low, high, higher_is_better, direction, raw, meaning (moved from ``dialeval.compare``)."""
    try:
        scale = describe(metric, sub)
    except ValueError:
        return None
    return {"range": scale.range_text(), "low": scale.low, "high": scale.high,
            "higher_is_better": scale.higher_is_better, "direction": scale.direction_text(), "raw": scale.raw,
            "meaning": scale.meaning}
