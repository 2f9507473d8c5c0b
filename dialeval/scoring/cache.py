"""On-disk cache of per-item metric scores, so a re-run of a long benchmark scores only what is new.

An entry is one JSON file ``<cache>/scores/<key>.json`` holding ``{"per_item": ..., "signature": ...,
"flags": ...}`` (``flags``: per item, the flags the scorer set, :mod:`dialeval.core.degenerate`).
The key is the SHA-256 of everything that decides the scores: the metric, its options (``precision`` as
it will run, :func:`dialeval.scoring.runners.precision_keyed`), the dialeval
version, the models its runner loads for the options not given, as they resolve now
(:func:`dialeval.registry.resolved_defaults`: e.g. FED's DialoGPT vs. its bundled stand-in), the
fingerprint of the bundled weights (:func:`weights_fingerprint`) and the fields of the inputs that
the metric reads with these options (:func:`items_hash`, :attr:`dialeval.core.spec.MetricSpec.reads_fields`):
the same replies scored with and without references share the entries of a metric that reads no
references (FED, FULL, GRADE, holistic, SSREM's ``reference_free``). A result whose settings
differ therefore never mixes with another; stale entries are never read, only left behind (delete
the folder to reclaim the space). An entry names
its format (:data:`CACHE_FORMAT`); :func:`cached_scores` scores again over an entry of another
format (format 1, written before the flags, has neither ``format`` nor ``flags``; format 2 gave
flagged items NaN where format 3 gives the scale's floor) rather than return it with another policy; :func:`stored_scores` reads any format, for its scores alone.

:func:`scores_for` is how every long run scores (the grid's cells, ``dialeval compare``, the
combined metric's components): through the chunks of :func:`dialeval.scoring.score_chunks` (fixed
input positions) with per-item progress (:class:`dialeval.core.progress.Progress`: items done, rate and
time left, once the run has taken 10 s), each finished chunk
appended to ``<key>.chunks-<format>-<size>.jsonl`` beside the entry. An interrupted run (Ctrl-C, a crash)
resumes after its last saved chunk and ends with the same entry, byte for byte, as an uninterrupted
one; the chunk file is deleted when the entry is written.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from dialeval.core.resources import cache_dir
from dialeval.core.results import ItemScores, flags_of
from dialeval.core.spec import ITEM_FIELDS

PerItem = dict[str, list[float]]
CACHE_FORMAT = 6  # 2: entries carry the scorer's per-item flags; 3: flagged items at their floor, no_words; 4: the echo flag; 5: the salad flag; 6: an echo copies a turn nearly whole or at length (issue 54)
CHUNK_SIZE = 16  # items per saved chunk of scores_for: a save every few seconds even for FED
_SLOTS = ("context", "response", "references")  # every item_record's first three places, read or not
_UNREAD = {"context": None, "response": None, "references": []}


def scores_dir() -> Path:
    return cache_dir() / "scores"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def item_record(item: Mapping[str, Any], fields: Sequence[str] = ITEM_FIELDS) -> list[Any]:
    """What of ``item`` keys an entry of a metric that reads ``fields``: ``[context, response,
    references]`` with a field it does not read as an item without it (``[]`` for the references, as
    :class:`dialeval.data.JudgmentItem` has none, ``None`` for the others), then ``{name: value}`` of
    any other field read (holistic diversity's ``group``) where the item has one. Items that differ
    only in fields not read key the same entry. An item without references (``[]``) or group keeps
    the key it had before the fields were declared for a metric that reads its context and response,
    so those stored entries are still read (the referenced entries of a metric that reads no
    references are not: scored once more, they are then shared with the items without references)."""
    record = [item.get(f) if f in fields else _UNREAD[f] for f in _SLOTS]
    extra = {f: item[f] for f in fields if f not in _SLOTS and item.get(f) is not None}
    return record + [extra] if extra else record


def items_hash(items: Sequence[Mapping[str, Any]], fields: Sequence[str] = ITEM_FIELDS) -> str:
    """SHA-256 of the items' :func:`item_record` for a metric that reads ``fields``, in order."""
    return _digest([item_record(it, fields) for it in items])


@functools.lru_cache(maxsize=16)
def weights_fingerprint(metric: str) -> str:
    """Content hashes of the bundled model folders ``metric`` loads by default and of those of the
    metrics it reads (:func:`dialeval.registry.cache_folders`), so retrained weights miss the cache
    of the metrics that use them and only those; an unknown metric is keyed by every bundled folder."""
    from dialeval.models.hub import content_hash, hub_root
    from dialeval.registry import cache_folders

    root = hub_root()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and any(p.iterdir())) if root.is_dir() else []
    bundled = cache_folders()
    if metric in bundled:
        folders = [p for p in folders if p.name in bundled[metric]]
    return _digest({p.name: content_hash(p) for p in folders})


def cache_key(metric: str, options: dict[str, Any], items: Sequence[dict]) -> str:
    from dialeval.version import __version__
    from dialeval.registry import fields_read, resolved_defaults

    from dialeval.scoring.runners import precision_keyed

    key = {"metric": metric, "options": precision_keyed(metric, options), "version": __version__,
           "weights": weights_fingerprint(metric), "items": items_hash(items, fields_read(metric, options))}
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
    return _store(path, metric, options, scores, flags_of(scores, items), time.perf_counter() - start)


def _store(path: Path, metric: str, options: dict[str, Any], scores: tuple[PerItem, str], flags: list[list[str]],
           seconds: float) -> dict[str, Any]:
    """Write the entry of ``scores`` to ``path`` (a temporary file, then renamed) and return it."""
    per_item, signature = scores
    entry = {"format": CACHE_FORMAT, "metric": metric, "options": options, "per_item": per_item,
             "signature": signature, "flags": flags, "seconds": round(seconds, 2)}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(entry), encoding="utf-8")
    partial.replace(path)
    return {**entry, "from_cache": False}


def _saved_chunks(path: Path) -> list[dict[str, Any]]:
    """The complete chunk records of a chunk file, in order; a half-written last line is dropped."""
    if not path.is_file():
        return []
    text = path.read_bytes()
    whole = text[: text.rfind(b"\n") + 1]
    if len(whole) != len(text):
        path.write_bytes(whole)
    return [json.loads(line) for line in whole.decode("utf-8").splitlines()]


def scores_for(metric: str, options: dict[str, Any], items: Sequence[dict], refresh: bool = False,
               progress: bool = True, desc: str | None = None, chunk_size: int = CHUNK_SIZE) -> dict[str, Any]:
    """:func:`cached_scores` of ``metric``'s runner on ``items``, scored in chunks that are saved as
    they finish and resumed after an interruption (module docstring): ``{"per_item", "signature",
    "flags", "seconds", "from_cache"}``. ``seconds`` adds up the chunks' time over every run.

    A metric that reads other metrics' scores (``MetricSpec.reads``: the combined metric) is scored
    in one chunk: its components then score the whole ``items`` through this function themselves,
    with their own chunks, progress and resume, under the same keys as their own grid cells, so a
    grid reuses them instead of scoring every component again per chunk of 16.

    ``progress=False`` silences the progress lines of this run and of everything it calls."""
    from dialeval.core.progress import Progress
    from dialeval.registry import spec
    from dialeval.scoring.chunks import score_chunks

    if spec(metric).reads:
        chunk_size = max(len(items), 1)
    key = cache_key(metric, options, items)
    path = scores_dir() / f"{key}.json"
    stored = None if refresh else _read(path)
    if stored is not None and stored.get("format") == CACHE_FORMAT:
        return {**stored, "from_cache": True}
    chunks_path = scores_dir() / f"{key}.chunks-{CACHE_FORMAT}-{chunk_size}.jsonl"
    if refresh:
        chunks_path.unlink(missing_ok=True)
    saved = _saved_chunks(chunks_path)
    done = saved[-1]["stop"] if saved else 0
    chunks_path.parent.mkdir(parents=True, exist_ok=True)
    with Progress(len(items), desc or metric, initial=done, enabled=progress) as bar:
        began = time.perf_counter()
        for start, chunk, scores, signature in score_chunks(metric, items, options, start=done, chunk_size=chunk_size):
            record = {"start": start, "stop": start + len(chunk), "per_item": scores[0], "signature": signature,
                      "flags": flags_of(scores, chunk), "seconds": round(time.perf_counter() - began, 3)}
            with open(chunks_path, "a", encoding="utf-8") as out:  # opened per chunk: no empty file on an error
                out.write(json.dumps(record) + "\n")
            saved.append(record)
            bar.update(len(chunk))
            began = time.perf_counter()
    joined = _joined(metric, saved, len(items))
    entry = _store(path, metric, options, joined, joined.flags, sum(r["seconds"] for r in saved))
    chunks_path.unlink(missing_ok=True)
    return entry


def _joined(metric: str, chunks: list[dict[str, Any]], n_items: int) -> ItemScores:
    """The per-item scores and signature of consecutive chunk records (a sub-score missing from a
    chunk is NaN there); ``ValueError`` when they hold other settings or leave a gap."""
    per_item: PerItem = {}
    signatures = {r["signature"] for r in chunks}
    if len(signatures) > 1:
        raise ValueError(f"{metric}: the saved chunks were scored with different settings {sorted(signatures)}; "
                         "delete the cache's chunk file (or pass refresh) to score again")
    position = 0
    for record in chunks:
        if record["start"] != position:
            raise ValueError(f"{metric}: the saved chunks leave items {position}..{record['start'] - 1} unscored")
        for name, values in record["per_item"].items():
            per_item.setdefault(name, [float("nan")] * position).extend(values)
        position = record["stop"]
        for values in per_item.values():
            values.extend([float("nan")] * (position - len(values)))
    if position != n_items:
        raise ValueError(f"{metric}: the saved chunks hold {position} of {n_items} items")
    return ItemScores(per_item, signatures.pop(), [f for r in chunks for f in r["flags"]])
