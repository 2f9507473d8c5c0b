"""How USL-H scores generic items (context, response).
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.results import ItemScores, split_result

# The precisions `precision="auto"` may choose (dialeval.core.precision), those that passed the fidelity
# rule against float32 (benchmarks/results/precision.md, precision-grid.md): bfloat16 meets the per-item
# rule (0.9997 on 200 items) and moves the usl cells by less than 0.002, but usl_u on grade-empathetic by
# 0.012 (-0.059 -> -0.071: bfloat16 moves an item's U by 0.0012 at the median, as much as the median gap
# between two items' U there, 0.001, so it reorders them); int8 fails the per-item rule (0.38). So auto is
# float32.
AUTO_PRECISIONS: tuple[str, ...] = ()


def run_usl(items: Sequence[dict], model: str | None = None, hierarchy: str | None = None,
            device: str | None = None, precision: str | None = None) -> ItemScores:
    """USL-H (Phy et al. 2020, :mod:`dialeval.usl.scorer`) of each item's ``response`` given its
    ``context``; ``hierarchy`` ``"HS"`` (default, the authors' scorer) or ``"H"`` (the paper's formula);
    ``precision``: the encoder's forward (``None`` is float32, ``"auto"`` chooses among :data:`AUTO_PRECISIONS`)."""
    from dialeval.core.precision import runner_precision
    from dialeval.usl.formula import DEFAULT_HIERARCHY
    from dialeval.usl.heads import DEFAULT_MODEL
    from dialeval.usl.scorer import cached_scorer

    precision = runner_precision(precision, device, AUTO_PRECISIONS)
    scorer = cached_scorer(model or DEFAULT_MODEL, device, precision)
    return split_result(scorer.score([it["context"] for it in items], [it["response"] for it in items],
                                     hierarchy or DEFAULT_HIERARCHY))
