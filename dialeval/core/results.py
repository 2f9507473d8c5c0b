"""How every dialeval result looks: flat scores plus a reproducibility signature.

A result is a flat dict (what ``transformers.Trainer``'s ``compute_metrics`` and
``evaluate.combine`` expect): ``<name>`` is the mean over items, ``<name>_scores`` the per-item
list, and ``signature`` a sacrebleu-style string (``nrefs:1|tok:13a|...|version:2.x``) naming the
metric, model, mode and dialeval version, so a number can be reproduced. A scorer adds ``flags``, per
item the flags of :mod:`dialeval.core.degenerate` (``[]`` for an ordinary response).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from dialeval.core.degenerate import response_flags


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


def summarize(per_item: Mapping[str, Sequence[float]], signature: str) -> dict[str, Any]:
    """``{name: mean, name_scores: [...], ..., "signature": signature}``."""
    out: dict[str, Any] = {}
    for name, scores in per_item.items():
        out[name] = mean(scores)
        out[f"{name}_scores"] = [float(s) for s in scores]
    out["signature"] = signature
    return out


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
