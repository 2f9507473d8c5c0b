"""How GRADE scores generic items (context, response).
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.results import ItemScores, split_result

# The precisions `precision="auto"` may choose (dialeval.core.precision), those that passed the fidelity
# rule against float32 on a CPU that runs them natively (per-item Spearman >= 0.999: bfloat16 0.9999 on
# 500 items, benchmarks/results/precision.md; no grid cell moved by more than 0.005: at most 0.0023,
# precision-grid.md); int8 fails the per-item rule (0.67), bfloat16-matmul (1.06x) was not run on the grid.
AUTO_PRECISIONS: tuple[str, ...] = ("bfloat16",)


def run_grade(items: Sequence[dict], model: str | None = None, graph: bool = True, batch_size: int = 32,
              device: str | None = None, precision: str | None = None) -> ItemScores:
    """GRADE coherence of each item's ``response`` to its ``context`` (Huang et al. 2020, :mod:`dialeval.grade`);
    ``precision``: the encoder's forward (:mod:`dialeval.core.precision`; ``None`` is float32, ``"auto"``
    chooses among :data:`AUTO_PRECISIONS`)."""
    from dialeval.core.precision import runner_precision
    from dialeval.grade.scorer import DEFAULT_MODEL, grade_scorer

    precision = runner_precision(precision, device, AUTO_PRECISIONS)  # as the score cache keys it
    scorer = grade_scorer(model or DEFAULT_MODEL, device, batch_size, precision)
    return split_result(scorer.score([it["context"] for it in items], [it["response"] for it in items], graph=graph))
