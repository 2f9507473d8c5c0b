"""What every dialeval sub-score means: its range, its direction and whether it is a raw value.

A number like FED's ``turn_interesting = 5.3`` says nothing without its scale: FED's scores are
differences of log-likelihoods (unbounded, comparable only under one model and variant), GRADE's
lie in [0, 1], the word-embedding cosines of multiref in [-1, 1]. This module is the one place that
says so, for every sub-score name the runners and the evaluate modules
produce (the per-item keys without ``_scores``), so the demo, reports and JSON output read the same
description instead of each keeping its own.

Each metric declares the scales of its sub-scores (``MetricSpec.scales``, in ``dialeval/<name>/scales.py``);
:func:`dialeval.registry.describe` (``describe("fed", "turn_interesting")``) finds one. The ranges are
those of the definitions in the metric code:

* ``low``/``high`` are the smallest / largest value the definition allows (``None``: no bound);
* ``higher_is_better`` is the direction (``None`` for a count that rates nothing);
* ``raw`` marks a value that no normalisation has put on a fixed scale (a log-likelihood, an
  entropy, an SSREM part before its min-max scaling): compare it only between items scored with
  the same model and settings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scale:
    """The scale of one sub-score (module docstring)."""

    low: float | None
    high: float | None
    higher_is_better: bool | None
    raw: bool
    meaning: str

    def range_text(self) -> str:
        """``"0 to 1"``, ``"-1 to 1"``, ``"0 or more"``, ``"0 or less"`` or ``"unbounded"``."""
        if self.low is not None and self.high is not None:
            return f"{_number(self.low)} to {_number(self.high)}"
        if self.low is not None:
            return f"{_number(self.low)} or more"
        if self.high is not None:
            return f"{_number(self.high)} or less"
        return "unbounded"

    def direction_text(self) -> str:
        """``"higher = better"``, ``"lower = better"`` or, for a count, ``"no direction (a count)"``."""
        if self.higher_is_better is None:
            return "no direction (a count)"
        return "higher = better" if self.higher_is_better else "lower = better"


def _number(value: float) -> str:
    return f"{value:g}"


def bounded(meaning: str, low: float = 0.0, high: float = 1.0) -> Scale:
    """A normalised score (higher = better) between ``low`` and ``high``."""
    return Scale(low, high, True, False, meaning)


def raw(meaning: str, low: float | None = None, high: float | None = None) -> Scale:
    """A raw score (higher = better) with the bounds its definition gives."""
    return Scale(low, high, True, True, meaning)
