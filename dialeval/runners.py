"""How each metric scores generic dialogue items, for the CLI and the benchmarks.

An item is a dict in the generic format of :mod:`dialeval.data`: ``context`` (list of turns),
``response`` and, for referenced metrics, ``references``. A runner takes a list of items and
returns per-item scores (``{sub-metric: [score per item]}``) and the result's signature.
Runners load their models once per process (cached on first use).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

ItemScores = tuple[dict[str, list[float]], str]
Runner = Callable[..., ItemScores]


def _split(result: dict[str, Any]) -> ItemScores:
    per_item = {k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")}
    return per_item, result["signature"]


@functools.lru_cache(maxsize=4)
def _multiref_scorer(metrics: tuple[str, ...] | None, word_vectors: str | None):
    from dialeval.multiref import QUALITY_METRICS, MultiRefScorer

    return MultiRefScorer(metrics or QUALITY_METRICS, word_vectors)


def run_multiref(
    items: Sequence[dict], metrics: Sequence[str] | None = None, word_vectors: str | None = None
) -> ItemScores:
    """Multi-reference quality of each item's response against its references."""
    for i, item in enumerate(items):
        if not item.get("references"):
            raise ValueError(f"item {i}: multiref needs a non-empty 'references' list")
    scorer = _multiref_scorer(tuple(metrics) if metrics else None, word_vectors)
    return _split(scorer.quality([it["response"] for it in items], [it["references"] for it in items]))


RUNNERS: dict[str, Runner] = {"multiref": run_multiref}


def get_runner(metric: str) -> Runner:
    if metric not in RUNNERS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(RUNNERS)}")
    return RUNNERS[metric]
