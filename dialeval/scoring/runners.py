"""How each metric scores generic dialogue items, for the CLI and the benchmarks.

An item is a dict in the generic format of :mod:`dialeval.data`: ``context`` (list of turns),
``response`` and, for referenced metrics, ``references``. A runner takes a list of items and
returns a :class:`~dialeval.core.results.ItemScores`: per-item scores (``{sub-metric: [score per
item]}``) and the result's signature, the pair it unpacks as, with the per-item flags its scorer
set (``.flags``, :mod:`dialeval.core.degenerate`). Each metric declares its runner
(``dialeval/<name>/runner.py``, :mod:`dialeval.registry`); runners load their models once per
process (cached on first use).
"""

from __future__ import annotations

import inspect
from typing import Any

from dialeval import registry
from dialeval.core.results import ItemScores, Runner

__all__ = ["ItemScores", "RUNNERS", "Runner", "get_runner"]

RUNNERS: dict[str, Runner] = {s.name: s.runner for s in registry.specs()}


def get_runner(metric: str) -> Runner:
    """The runner of ``metric``; ``ValueError`` naming the metrics for an unknown one."""
    if metric not in RUNNERS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(RUNNERS)}")
    return RUNNERS[metric]


def precision_keyed(metric: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``precision`` as the runner will run it (:func:`dialeval.core.precision.runner_precision`
    with the metric's declared ``auto_precisions`` and the ``device`` option; for a metric that reads others,
    ``MetricSpec.reads``, one entry per component that takes the option), float32 (the default) left out: what the score cache
    keys, so scores of two precisions never mix and ``precision="float32"`` or an ``"auto"`` that
    resolves to float32 reuses the float32 entries."""
    from dialeval.core.precision import DEFAULT, runner_precision

    if options.get("precision") is None:
        return dict(options)
    rest = {k: v for k, v in options.items() if k != "precision"}
    spec = registry.spec(metric)
    used = {m: runner_precision(options["precision"], options.get("device"), registry.spec(m).auto_precisions)
            for m in (spec.reads or (metric,)) if "precision" in inspect.signature(registry.spec(m).runner).parameters}
    if all(p == DEFAULT for p in used.values()):
        return rest
    return {**rest, "precision": used[metric] if not spec.reads else used}
