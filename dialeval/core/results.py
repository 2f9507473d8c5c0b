"""How every dialeval result looks: flat scores plus a reproducibility signature.

A result is a flat dict (what ``transformers.Trainer``'s ``compute_metrics`` and
``evaluate.combine`` expect): ``<name>`` is the mean over items, ``<name>_scores`` the per-item
list, and ``signature`` a sacrebleu-style string (``nrefs:1|tok:13a|...|version:2.x``) naming the
metric, model, mode and dialeval version, so a number can be reproduced. A scorer adds ``flags``, per
item the flags of :mod:`dialeval.core.degenerate` (``[]`` for an ordinary response).

One reading of a flagged (degenerate) reply, in every system summary (:func:`flag_summary`; the
evaluate modules, ``dialeval compare``, ``dialeval examples``, the demo and the ``Trainer`` hook):

* ``<score>``: the mean over every item, a flagged one at its worst value (a bound or the declared
  floor), so replacing a reply by a degenerate one never raises it, but a floor such as FED's -1000
  makes it unreadable;
* ``flagged``: the number of flagged items;
* ``<score>_unflagged``: the mean over the unflagged items, in the score's own units (NaN when every
  item is flagged);
* ``<score>_percentile`` (where a stored human reference is read, :mod:`dialeval.scoring.human_reference`):
  the mean of the items' percentiles among human replies, a flagged item at 0: readable, and it
  still falls when a reply is blanked.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, Sequence

from dialeval.core.degenerate import response_flags
from dialeval.core.scales import Scale

FLAGGED = "flagged"
UNFLAGGED = "_unflagged"
PERCENTILE = "_percentile"


def make_signature(metric: str, **fields: Any) -> str:
    """Return ``metric:<metric>|key:value|...|version:<dialeval version>``, written by
    :class:`dialeval.core.signature.Signature` (which also reads it back).

    Fields keep their given order; ``None`` values are left out, booleans are written ``yes``/``no``.
    """
    from dialeval.core.signature import Signature

    return Signature(metric, fields).format()


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean ignoring NaN (items a sub-metric does not apply to); NaN if none is left."""
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else float("nan")


def summarize(per_item: Mapping[str, Sequence[float]], signature: str, flags: Sequence[Sequence[str]] | None = None,
              scales: Mapping[str, Scale] | None = None) -> dict[str, Any]:
    """``{name: mean, name_scores: [...], ..., "signature": signature}``; with the items' ``flags``
    also ``flags``, ``flagged`` and, beside the mean of every sub-score with a direction in
    ``scales``, ``name_unflagged`` (:func:`flag_summary`)."""
    readings = flag_summary(per_item, flags, directed(per_item, scales)) if flags is not None else {}
    out: dict[str, Any] = {}
    for name, scores in per_item.items():
        out[name] = mean(scores)
        if f"{name}{UNFLAGGED}" in readings:
            out[f"{name}{UNFLAGGED}"] = readings[f"{name}{UNFLAGGED}"]
        out[f"{name}_scores"] = [float(s) for s in scores]
    out["signature"] = signature
    if flags is not None:
        out["flags"] = [list(f) for f in flags]
        out[FLAGGED] = readings[FLAGGED]
    return out


def directed(names: Iterable[str], scales: Mapping[str, Scale] | None) -> list[str]:
    """The names among ``names`` whose scale in ``scales`` has a direction (not a count)."""
    return [n for n in names if scales and n in scales and scales[n].higher_is_better is not None]


def flag_summary(per_item: Mapping[str, Sequence[float]], flags: Sequence[Sequence[str]],
                 scores: Iterable[str]) -> dict[str, float]:
    """``flagged`` (the number of items with a flag) and, for every sub-score in ``scores``,
    ``<score>_unflagged``: the mean (NaN left out) over the items without one (module docstring)."""
    flagged = [bool(f) for f in flags]
    out: dict[str, float] = {FLAGGED: sum(flagged)}
    for name in scores:
        values = per_item[name]
        if len(values) != len(flagged):
            raise ValueError(f"{len(flagged)} flags for {len(values)} {name} scores")
        out[f"{name}{UNFLAGGED}"] = mean([v for v, f in zip(values, flagged) if not f])
    return out


def percentile_means(percentiles: Mapping[str, Sequence[float | None]]) -> dict[str, float]:
    """``<score>_percentile`` for every ``<score>`` of per-item percentiles among human replies
    (flagged items already at 0, :meth:`dialeval.scoring.human_reference.HumanReference.percentiles`):
    their mean, items without one (``None``: the score does not apply) left out."""
    return {f"{name}{PERCENTILE}": mean([math.nan if v is None else float(v) for v in values])
            for name, values in percentiles.items()}


Flags = list[list[str]]  # per item, the degenerate-response flags of dialeval.core.degenerate


class ItemScores(tuple[dict[str, list[float]], str]):
    """What a metric's runner returns for generic items (:attr:`dialeval.core.spec.MetricSpec.runner`):
    the pair ``(per_item, signature)`` (per-item scores by sub-score name and the result's
    signature; it unpacks and indexes as that pair), and ``flags``, per item the flags its scorer
    set (:mod:`dialeval.core.degenerate`; ``[]`` for an ordinary response)."""

    flags: Flags

    def __new__(cls, per_item: dict[str, list[float]], signature: str, flags: Flags) -> "ItemScores":
        self = super().__new__(cls, (per_item, signature))
        self.flags = flags
        return self

    def __getnewargs__(self) -> tuple[dict[str, list[float]], str, Flags]:
        """What ``pickle`` and ``copy`` rebuild it from (a tuple's default would lose ``flags``)."""
        return (*self, self.flags)


Runner = Callable[..., ItemScores]


def split_result(result: Mapping[str, Any]) -> ItemScores:
    """The per-item lists of a result (``<name>_scores`` -> ``<name>``), its signature and its
    per-item ``flags``."""
    per_item = {k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")}
    return ItemScores(per_item, result["signature"], result["flags"])


def flags_of(scores: tuple[dict[str, list[float]], str], items: Sequence[Mapping[str, Any]]) -> Flags:
    """The per-item flags of a runner's return value for ``items``: its :attr:`ItemScores.flags`;
    from a runner that returns a plain ``(per_item, signature)`` pair, the part of the policy every
    metric applies, :func:`dialeval.core.degenerate.response_flags` of each item's ``response``."""
    if isinstance(scores, ItemScores):
        return scores.flags
    return [response_flags(it["response"]) for it in items]
