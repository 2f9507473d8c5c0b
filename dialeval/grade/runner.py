"""How GRADE scores generic items (context, response).
"""

from __future__ import annotations

from typing import Sequence

from dialeval.core.results import ItemScores, split_result


def run_grade(items: Sequence[dict], model: str | None = None, graph: bool = True, batch_size: int = 32,
              device: str | None = None) -> ItemScores:
    """GRADE coherence of each item's ``response`` to its ``context`` (Huang et al. 2020, :mod:`dialeval.grade`)."""
    from dialeval.grade.scorer import DEFAULT_MODEL, grade_scorer

    scorer = grade_scorer(model or DEFAULT_MODEL, device, batch_size)
    return split_result(scorer.score([it["context"] for it in items], [it["response"] for it in items], graph=graph))
