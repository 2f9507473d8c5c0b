"""System-level agreement with human judgments over a judgment set whose systems may or may not
have answered the same contexts (moved from ``dialeval.compare``): :func:`pair_items` lines the
items up, :func:`system_agreement` runs the paired (:mod:`dialeval.stats.paired`) or the unpaired
(:mod:`dialeval.stats.unpaired`) agreement accordingly."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

from dialeval.stats.paired import human_agreement
from dialeval.stats.results import Agreement, Settings
from dialeval.stats.unpaired import unpaired_agreement


def pair_items(contexts: Sequence[Sequence[str]], systems: Sequence[Optional[str]]) -> dict[str, Any]:
    """How the items of a human-judgment set line up across its systems.

    Items are keyed by (context, how often that context came before in the same system). When every
    system has exactly the same keys, the set is paired: ``{"paired": True, "indices": {system: [item
    index per key, in the first system's order]}}``; else ``{"paired": False, "indices": {system: [its
    items in set order]}, "shared": number of keys all systems have}``. Items without a system are
    left out."""
    keys: dict[str, dict[tuple, int]] = {}
    for i, (context, system) in enumerate(zip(contexts, systems)):
        if system is None:
            continue
        seen = keys.setdefault(system, {})
        base = tuple(context)
        occurrence = sum(1 for key in seen if key[0] == base)
        seen[(base, occurrence)] = i
    names = list(keys)
    first = list(keys[names[0]]) if names else []
    shared = [key for key in first if all(key in keys[s] for s in names)]
    paired = bool(names) and all(len(keys[s]) == len(first) for s in names) and len(shared) == len(first)
    if paired:
        return {"paired": True, "indices": {s: [keys[s][key] for key in first] for s in names}, "shared": len(first)}
    return {"paired": False, "indices": {s: list(keys[s].values()) for s in names}, "shared": len(shared)}


def system_agreement(per_item: Sequence[float], human: Sequence[float], pairing: Mapping[str, Any],
                     higher_is_better: Optional[bool] = True, settings: Optional[Settings] = None,
                     **overrides: Any) -> Optional[Agreement]:
    """System-level agreement of one sub-score with the human scores of a judgment set, paired or not
    (:func:`pair_items`); the metric is negated first when lower is better. ``None`` with fewer than
    3 systems or when an item's score is missing. ``settings`` and keyword overrides as for
    :func:`dialeval.stats.paired.compare`."""
    indices = pairing["indices"]
    if len(indices) < 3:
        return None
    sign = -1.0 if higher_is_better is False else 1.0
    metric = {s: [sign * float(per_item[i]) for i in idx] for s, idx in indices.items()}
    humans = {s: [float(human[i]) for i in idx] for s, idx in indices.items()}
    if any(not math.isfinite(v) for values in (*metric.values(), *humans.values()) for v in values):
        return None
    settings = Settings.of(settings, **overrides)
    if pairing["paired"]:
        return human_agreement(humans, metric, settings)
    return unpaired_agreement(humans, metric, settings)


__all__ = ["pair_items", "system_agreement"]
