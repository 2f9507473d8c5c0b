"""On-disk cache of per-item metric scores, so a re-run of a long benchmark scores only what is new.

An entry is one JSON file ``<cache>/scores/<key>.json`` holding ``{"per_item": ..., "signature": ...}``.
The key is the SHA-256 of everything that decides the scores: the metric, its options, the dialeval
version, the fingerprint of the bundled weights (:func:`weights_fingerprint`) and the inputs
(:func:`items_hash`). A result whose settings differ therefore never mixes with another; stale
entries are never read, only left behind (delete the folder to reclaim the space).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from dialeval.core.resources import cache_dir

PerItem = dict[str, list[float]]


def scores_dir() -> Path:
    return cache_dir() / "scores"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def items_hash(items: Sequence[dict]) -> str:
    """SHA-256 of the scored fields of the items (context, response, references), in order."""
    return _digest([[it.get("context"), it.get("response"), it.get("references")] for it in items])


@functools.lru_cache(maxsize=16)
def weights_fingerprint(metric: str) -> str:
    """Content hashes of the bundled model folders ``metric`` loads by default
    (``MetricSpec.bundled``, :func:`dialeval.registry.bundled_for_metric`), so retrained weights miss the cache of the metrics
    that use them and only those; an unknown metric is keyed by every bundled folder."""
    from dialeval.hub import content_hash, hub_root
    from dialeval.registry import bundled_for_metric

    root = hub_root()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and any(p.iterdir())) if root.is_dir() else []
    bundled = bundled_for_metric()
    if metric in bundled:
        folders = [p for p in folders if p.name in bundled[metric]]
    return _digest({p.name: content_hash(p) for p in folders})


def cache_key(metric: str, options: dict[str, Any], items: Sequence[dict]) -> str:
    from dialeval import __version__

    return _digest({"metric": metric, "options": options, "version": __version__,
                    "weights": weights_fingerprint(metric), "items": items_hash(items)})


def cached_scores(metric: str, options: dict[str, Any], items: Sequence[dict],
                  score: Callable[[], tuple[PerItem, str]], refresh: bool = False) -> dict[str, Any]:
    """``{"per_item", "signature", "seconds", "from_cache"}``: the stored entry when the key matches,
    else ``score()``'s result, timed and stored (written to a temporary file, then renamed)."""
    path = scores_dir() / f"{cache_key(metric, options, items)}.json"
    if path.is_file() and not refresh:
        return {**json.loads(path.read_text(encoding="utf-8")), "from_cache": True}
    start = time.perf_counter()
    per_item, signature = score()
    entry = {"metric": metric, "options": options, "per_item": per_item, "signature": signature,
             "seconds": round(time.perf_counter() - start, 2)}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(entry), encoding="utf-8")
    partial.replace(path)
    return {**entry, "from_cache": False}
