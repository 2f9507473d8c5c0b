"""Every human-judgment set of ``$DIALEVAL_DATA`` in one generic form, for the meta-evaluation.

:func:`load_judgments` returns :class:`dialeval.data.JudgmentItem` s (``context``, ``response``,
``score`` = the set's headline human rating, ``references``, ``system``, ``id``) for a named set
or any JSON-lines file in the generic format; :func:`load_dataset` gives the same as a
``datasets.Dataset``, the ecosystem's way to hand data around.

| name | items | ``score`` | paper |
|---|---|---|---|
| ``fed-turn`` / ``fed-dialog`` | 375 / 125 | mean "Overall" rating (the last turn / the whole conversation) | Mehri & Eskenazi 2020 |
| ``grade-convai2`` / ``grade-dailydialog`` / ``grade-empathetic`` | 600 / 300 / 300 | mean coherence rating | Huang et al. 2020 |
| ``holistic-coherence`` / ``holistic-fluency`` / ``holistic-consistency`` | 200 / 200 / 200 | mean rating (coherence, fluency: 10 raters; consistency: 1) | Pang et al. 2020 |
| ``multiref-mturk`` | 500 | mean appropriateness; the paper's 5 references | Gupta et al. 2019 |

FED dialog-level items put the whole conversation in ``context + [response]`` (the last turn as
``response``), which is how FED's runner reads a conversation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from dialeval import registry
from dialeval.data.items import JudgmentItem, load_judgment_file


def sets() -> dict[str, Callable[[], list[JudgmentItem]]]:
    """Every named human-judgment set (declared by the metric that owns it): name -> loader."""
    return registry.judgment_sets()


def load_judgments(name_or_path: str | Path) -> list[JudgmentItem]:
    """A named set of :func:`sets` or a generic JSON-lines file (``context``, ``response``,
    ``score``, optional ``references``, ``system``, ``id``)."""
    named = sets()
    if str(name_or_path) in named:
        return named[str(name_or_path)]()
    if Path(name_or_path).is_file():
        return load_judgment_file(name_or_path)
    raise FileNotFoundError(f"unknown human-judgment set {str(name_or_path)!r}: not one of {sorted(named)} and not a file")


def load_dataset(name_or_path: str | Path):
    """:func:`load_judgments` as a ``datasets.Dataset`` with columns ``context``, ``response``,
    ``score``, ``references``, ``system``, ``id``."""
    from datasets import Dataset

    rows = [vars(item) for item in load_judgments(name_or_path)]
    return Dataset.from_list(rows)
