"""Correlation of dialeval metrics with human judgment (``dialeval benchmark``).

Named data sets have their own table layout (the paper's), declared by the metric they belong to
(``MetricSpec.benchmarks``, read through :mod:`dialeval.registry`); any JSON-lines file in the generic
format of :mod:`dialeval.data` is also accepted, giving one row per sub-metric.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.benchmark.common import format_generic, generic


def run_benchmark(metric: str, dataset: str, **options: Any) -> tuple[dict[str, Any], str]:
    """Compute a benchmark; return its result (for ``--json``) and its printed table."""
    named = registry.benchmarks()
    if dataset in named:
        owner, benchmark = named[dataset]
        if owner != metric:
            raise ValueError(f"data set {dataset!r} belongs to metric {owner!r}, not {metric!r}")
        return benchmark.run(**options)
    if not Path(dataset).is_file():
        raise FileNotFoundError(
            f"unknown data set {dataset!r}: not one of {sorted(named)} and not a JSONL file"
        )
    result = generic(metric, dataset, **options)
    return result, format_generic(result)
