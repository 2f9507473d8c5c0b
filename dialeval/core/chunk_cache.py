"""Long per-row computations (a corpus's encodings, its LM likelihoods) cached in chunks that a later run resumes.

:func:`cached_chunks` computes ``compute(rows[i:i + chunk])`` for each chunk in order and saves each one
as ``<folder>/<n>.npy`` when done (written to ``.partial.npy`` first, then renamed, so a crash never
leaves a half chunk), skipping the chunks already there; when ``deadline`` (a ``time.time()``) has
passed before a missing chunk it raises :class:`ChunksPaused`, the chunks done kept, so that running
the same command again goes on. The training of SSREM (``encode_cached``) and of USL-H use it; each
keys the folder by what it computes (:func:`cached_array`: by a name and the rows).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from dialeval.core.progress import Progress


class ChunksPaused(RuntimeError):
    """The deadline passed before a missing chunk; the chunks done stay and the same command goes on."""


def cached_chunks(folder: Path, rows: Sequence, compute: Callable[[Sequence], np.ndarray], chunk: int,
                  deadline: float | None = None, what: str = "chunks") -> list[Path]:
    """The chunk files of ``compute`` over ``rows`` (module docstring), computing the missing ones."""
    folder.mkdir(parents=True, exist_ok=True)
    starts = range(0, len(rows), chunk)
    parts = [folder / f"{n:05d}.npy" for n in range(len(starts))]
    done = sum(part.is_file() for part in parts)
    with Progress(len(parts), what, unit="chunk", initial=done, enabled=len(parts) > 1) as bar:
        for start, part in zip(starts, parts):
            if part.is_file():
                continue
            if deadline is not None and time.time() > deadline:
                raise ChunksPaused(f"time is up while computing {what}: {done} of {len(parts)} chunks of {chunk} "
                                   f"rows cached in {folder}; run the same command again to go on")
            partial = part.with_suffix(".partial.npy")
            np.save(partial, compute(rows[start:start + chunk]))
            partial.replace(part)
            done += 1
            bar.update(1)
    return parts


def cached_array(root: Path, name: str, rows: Sequence, compute: Callable[[Sequence], np.ndarray], chunk: int,
                 deadline: float | None = None, what: str | None = None) -> np.ndarray:
    """``compute(rows)`` by :func:`cached_chunks` under ``root/<name>-<key>/`` (``key``: the first 16 hex digits
    of the sha256 of ``[name, rows]`` in JSON), the chunks concatenated."""
    key = hashlib.sha256(json.dumps([name, list(rows)]).encode()).hexdigest()[:16]
    parts = cached_chunks(root / f"{name}-{key}", rows, compute, chunk, deadline, what or name)
    return np.concatenate([np.load(p) for p in parts])
