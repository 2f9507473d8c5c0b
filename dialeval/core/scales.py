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
  the same model and settings;
* ``floor`` is declared by a sub-score that has a direction but no bound on its bad side (FED's
  log-likelihood differences, holistic's raw log-probabilities, SSREM's bilinear fit): the value a
  flagged (degenerate) response counts as, and the value below which a real response's score is
  clipped (:func:`dialeval.core.degenerate.apply_policy`). Every floor lies far below any value a
  real reply reaches under the bundled models (measured: ``docs/inputs.md``), so a flagged item
  enters every mean, comparison and logged metric as clearly the worst item, and replacing a reply
  by a degenerate one can never raise a system's mean on any sub-score.
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
    floor: float | None = None

    def range_text(self) -> str:
        """``"0 to 1"``, ``"-1 to 1"``, ``"0 or more"``, ``"0 or less"`` or ``"unbounded"``."""
        if self.low is not None and self.high is not None:
            return f"{_number(self.low)} to {_number(self.high)}"
        if self.floor is not None:
            side = f" to {_number(self.high)}" if self.high is not None else " or more"
            return f"{_number(self.floor)}{side} (clipped at the floor {_number(self.floor)})"
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
    """``0.5``, ``-1``, ``-1000``; large whole numbers with separators (``-1,000,000``, not ``-1e+06``)."""
    return f"{value:,.0f}" if value == int(value) and abs(value) >= 1e5 else f"{value:g}"


def bounded(meaning: str, low: float = 0.0, high: float = 1.0) -> Scale:
    """A normalised score (higher = better) between ``low`` and ``high``."""
    return Scale(low, high, True, False, meaning)


def raw(meaning: str, low: float | None = None, high: float | None = None, floor: float | None = None) -> Scale:
    """A raw score (higher = better) with the bounds its definition gives; an unbounded one declares
    the ``floor`` a flagged response counts as (module docstring)."""
    if low is None and floor is None:
        raise ValueError(f"a raw score without a lower bound needs a floor: {meaning!r}")
    return Scale(low, high, True, True, meaning, None if low is not None else floor)
