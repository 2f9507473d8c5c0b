"""On-disk cache of per-item metric scores, so a re-run of a long benchmark scores only what is new.

An entry is one JSON file ``<cache>/scores/<key>.json`` holding ``{"per_item": ..., "signature": ...,
"flags": ...}`` (``flags``: per item, the flags the scorer set, :mod:`dialeval.core.degenerate`).
The key is the SHA-256 of everything that decides the scores: the metric, its options, the dialeval
version, the models its runner loads for the options not given, as they resolve now
(:func:`dialeval.registry.resolved_defaults`: e.g. FED's DialoGPT vs. its bundled stand-in), the
fingerprint of the bundled weights (:func:`weights_fingerprint`) and the inputs (:func:`items_hash`). A result whose settings differ therefore never mixes with another; stale
entries are never read, only left behind (delete the folder to reclaim the space). An entry names
its format (:data:`CACHE_FORMAT`); :func:`cached_scores` scores again over an entry of another
format (format 1, written before the flags, has neither ``format`` nor ``flags``) rather than
return it without its flags; :func:`stored_scores` reads any format, for its scores alone.
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
from dialeval.core.results import flags_of

PerItem = dict[str, list[float]]
CACHE_FORMAT = 2  # 2: entries carry the scorer's per-item flags


def scores_dir() -> Path:
    return cache_dir() / "scores"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def items_hash(items: Sequence[dict]) -> str:
    """SHA-256 of the scored fields of the items (context, response, references), in order."""
    return _digest([[it.get("context"), it.get("response"), it.get("references")] for it in items])


@functools.lru_cache(maxsize=16)
def weights_fingerprint(metric: str) -> str:
    """Content hashes of the bundled model folders ``metric`` loads by default and of those of the
    metrics it reads (:func:`dialeval.registry.cache_folders`), so retrained weights miss the cache
    of the metrics that use them and only those; an unknown metric is keyed by every bundled folder."""
    from dialeval.hub import content_hash, hub_root
    from dialeval.registry import cache_folders

    root = hub_root()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and any(p.iterdir())) if root.is_dir() else []
    bundled = cache_folders()
    if metric in bundled:
        folders = [p for p in folders if p.name in bundled[metric]]
    return _digest({p.name: content_hash(p) for p in folders})


def cache_key(metric: str, options: dict[str, Any], items: Sequence[dict]) -> str:
    from dialeval import __version__
    from dialeval.registry import resolved_defaults

    key = {"metric": metric, "options": options, "version": __version__,
           "weights": weights_fingerprint(metric), "items": items_hash(items)}
    defaults = resolved_defaults(metric)
    if defaults:  # (absent for metrics with fixed defaults: their keys stay as before)
        key["defaults"] = defaults
    return _digest(key)


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def stored_scores(metric: str, options: dict[str, Any], items: Sequence[dict]) -> dict[str, Any] | None:
    """The stored entry of these settings and items, of any format (``per_item`` and ``signature``;
    ``flags`` from format 2 on), or ``None``; nothing is scored."""
    return _read(scores_dir() / f"{cache_key(metric, options, items)}.json")


def cached_scores(metric: str, options: dict[str, Any], items: Sequence[dict],
                  score: Callable[[], tuple[PerItem, str]], refresh: bool = False) -> dict[str, Any]:
    """``{"per_item", "signature", "flags", "seconds", "from_cache"}``: the stored entry when the key
    matches and the entry is of the current format, else ``score()``'s result (a runner's return
    value for ``items``; its flags as :func:`dialeval.core.results.flags_of` reads them), timed and
    stored (written to a temporary file, then renamed)."""
    path = scores_dir() / f"{cache_key(metric, options, items)}.json"
    stored = None if refresh else _read(path)
    if stored is not None and stored.get("format") == CACHE_FORMAT:
        return {**stored, "from_cache": True}
    start = time.perf_counter()
    scores = score()
    per_item, signature = scores
    entry = {"format": CACHE_FORMAT, "metric": metric, "options": options, "per_item": per_item,
             "signature": signature, "flags": flags_of(scores, items),
             "seconds": round(time.perf_counter() - start, 2)}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(entry), encoding="utf-8")
    partial.replace(path)
    return {**entry, "from_cache": False}
