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

from dialeval import registry
from dialeval.core.results import ItemScores, Runner

__all__ = ["ItemScores", "RUNNERS", "Runner", "get_runner"]

RUNNERS: dict[str, Runner] = {s.name: s.runner for s in registry.specs()}


def get_runner(metric: str) -> Runner:
    """The runner of ``metric``; ``ValueError`` naming the metrics for an unknown one."""
    if metric not in RUNNERS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(RUNNERS)}")
    return RUNNERS[metric]
