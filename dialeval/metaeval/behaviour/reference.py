"""Building the stored human references (:mod:`dialeval.scoring.human_reference`) from the suite's real replies.

The real replies of the behavioural suite's cases (:func:`dialeval.metaeval.behaviour.cases.dailydialog_cases`:
people answering DailyDialog test contexts) are scored like the suite scores them
(:func:`dialeval.metaeval.behaviour.suite.score_replies`: the same chunks, through the score cache, so
a reference of cases the suite has scored costs nothing), and each judged sub-score's distribution
(:attr:`dialeval.core.spec.Behaviour.scores`) is stored beside the metric's bundled weights.

    dialeval behaviour --reference --all              # every metric the suite runs, n = 200
    dialeval behaviour --reference --metric M --n 100 # one metric, fewer cases (the stored note says so)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from dialeval import registry
from dialeval.metaeval.behaviour.cases import DEFAULT_N, DEFAULT_SPLIT, dailydialog_cases
from dialeval.metaeval.behaviour.suite import REAL, judged_scores, score_replies
from dialeval.scoring.cache import items_hash
from dialeval.scoring.chunks import check_options
from dialeval.scoring.human_reference import store_reference


def build_reference(metric: str, n: int = DEFAULT_N, seed: int = 0, options: Mapping[str, Any] | None = None,
                    refresh: bool = False, progress: bool = True) -> Path:
    """Score the real replies of ``n`` DailyDialog test cases (``seed``) with ``metric`` (its declared
    suite options, ``options`` over them) and store every judged sub-score's distribution (with a
    note when ``n`` is below the default); the path written."""
    behaviour = registry.spec(metric).behaviour
    if not behaviour.scores:
        raise ValueError(f"no human reference for {metric}: {behaviour.note}")
    merged = {**behaviour.options, **(options or {})}
    check_options(metric, merged)
    cases = dailydialog_cases(n, seed)
    replies = [case.reply for case in cases]
    scored, signatures = score_replies(metric, cases, {REAL: replies}, merged, behaviour.references, refresh, progress)
    items = [{"context": list(c.context), "response": c.reply, "references": [c.reply] if behaviour.references else []}
             for c in cases]
    about = {"source": f"DailyDialog {DEFAULT_SPLIT}", "n": n, "seed": seed, "items": items_hash(items),
             "references": "the real reply" if behaviour.references else "none"}
    note = f"n = {n}, fewer than the default {DEFAULT_N}" if n < DEFAULT_N else ""
    judged = {score: scored[REAL][score] for score in judged_scores(metric, scored[REAL])}
    return store_reference(metric, options, judged, about,
                           " / ".join(signatures), note)
