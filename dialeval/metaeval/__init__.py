"""Meta-evaluation: how well the metrics agree with people.

* here, :func:`run_benchmark`: correlation of one metric with human judgment on one set
  (``dialeval benchmark``), with :mod:`~dialeval.metaeval.common` for generic JSON-lines sets;
* :mod:`~dialeval.metaeval.grid`: every metric on every human-judgment set (``dialeval benchmark --all``);
* :mod:`~dialeval.metaeval.length`: the sub-scores' correlations with reply length and degenerate replies;
* :mod:`~dialeval.metaeval.behaviour`: the behavioural suite (``dialeval behaviour``).

Named data sets have their own table layout (the paper's), declared by the metric benchmarked on
them (``MetricSpec.benchmarks``, read through :mod:`dialeval.registry`; a metric may declare one on a
set another metric owns); any JSON-lines file in the generic
format of :mod:`dialeval.data` is also accepted, giving one row per sub-metric.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.metaeval.common import format_generic, generic


def run_benchmark(metric: str, dataset: str, **options: Any) -> tuple[dict[str, Any], str]:
    """Compute a benchmark; return its result (for ``--json``) and its printed table."""
    own = registry.benchmark_of(metric, dataset)
    if own is not None:
        return own.run(**options)
    named = registry.benchmarks()
    if dataset in named:
        raise ValueError(f"data set {dataset!r} has a paper benchmark of metric {named[dataset][0]!r}, not {metric!r}")
    if not Path(dataset).is_file():
        raise FileNotFoundError(
            f"unknown data set {dataset!r}: not one of {sorted(named)} and not a JSONL file"
        )
    result = generic(metric, dataset, **options)
    return result, format_generic(result)
