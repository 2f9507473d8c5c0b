"""Correlation of dialeval metrics with human judgment (``dialeval benchmark``).

Named data sets have their own table layout (the paper's), one module per metric; any JSON-lines
file in the generic format of :mod:`dialeval.data` is also accepted, giving one row per sub-metric.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

from dialeval.benchmark import fed, holistic, multiref
from dialeval.benchmark import ssrem
from dialeval.benchmark import grade
from dialeval.benchmark.common import format_generic, generic

# name -> (metric it belongs to, compute, format)
NAMED: dict[str, tuple[str, Callable[..., dict], Callable[[dict], str]]] = {
    "multiref-mturk": ("multiref", multiref.multiref_mturk, multiref.format_multiref_mturk),
    "fed-turn": ("fed", functools.partial(fed.fed, "turn"), fed.format_fed),
    "fed-dialog": ("fed", functools.partial(fed.fed, "dialog"), fed.format_fed),
    "holistic-coherence": ("holistic", functools.partial(holistic.holistic, "coherence"), holistic.format_holistic),
    "holistic-fluency": ("holistic", functools.partial(holistic.holistic, "fluency"), holistic.format_holistic),
    "holistic-consistency": ("holistic", functools.partial(holistic.holistic, "consistency"), holistic.format_holistic),
    **{f"ssrem-{s}": ("ssrem", functools.partial(ssrem.table4, s), ssrem.format_table4) for s in ssrem.TABLE4_SETS},
    "ssrem-all": ("ssrem", ssrem.table4_all, ssrem.format_table4), "ssrem-heldout": ("ssrem", ssrem.heldout, ssrem.format_heldout),
    **{f"grade-{s}": ("grade", functools.partial(grade.grade, s), grade.format_grade) for s in grade.SETS},
    "grade-ablations": ("grade", grade.grade_ablations, grade.format_grade_ablations),
}


def run_benchmark(metric: str, dataset: str, **options: Any) -> tuple[dict[str, Any], str]:
    """Compute a benchmark; return its result (for ``--json``) and its printed table."""
    if dataset in NAMED:
        owner, compute, render = NAMED[dataset]
        if owner != metric:
            raise ValueError(f"data set {dataset!r} belongs to metric {owner!r}, not {metric!r}")
        result = compute(**options)
        return result, render(result)
    if not Path(dataset).is_file():
        raise FileNotFoundError(
            f"unknown data set {dataset!r}: not one of {sorted(NAMED)} and not a JSONL file"
        )
    result = generic(metric, dataset, **options)
    return result, format_generic(result)
