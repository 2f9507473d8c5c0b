"""What ``dialeval score`` keeps beside its output, and the checks that make a resume exact.

``OUT.jsonl.meta.json`` holds the settings of the run (metric, options, ``--chunk-size``, the shard),
the signature of the scores, the range and direction of every sub-score, and the input's identity:

* ``item_sha256``: one hash per item of the output, in output order (:func:`dialeval.data.record_hash`:
  sha256 of the record's canonical JSON, 16 hex digits), so that a line edited since it was scored
  is found by its number;
* ``input_sha256``: the hash of the whole input (of all its item hashes, :func:`input_digest`),
  equal in every shard of one input, so that ``dialeval merge`` joins shards of one file only.

A rerun resumes only when the lines already written were scored with the same settings from the
same records (:func:`resume_point`); otherwise it stops with a ``ValueError`` naming what differs --
the first edited input line, another input file, other options, another ``--chunk-size`` -- and
``--overwrite`` starts again. A meta file of an older dialeval, without hashes, is refused the same
way. The output is only ever extended by whole chunks; a resume goes on at the last chunk boundary
and cuts the lines of an unfinished chunk (left by a killed process) before it writes, so that every
chunk is scored as a single process scores it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple, Sequence

from dialeval.data import completed_lines

META_SUFFIX = ".meta.json"
RESTART = "pass --overwrite to start again, or another --output"


def meta_path(output: str | Path) -> Path:
    """Where ``dialeval score`` keeps how ``output`` was scored: ``<output>.meta.json``."""
    output = Path(output)
    return output.with_name(output.name + META_SUFFIX)


def read_meta(output: str | Path) -> dict[str, Any]:
    """The ``.meta.json`` of ``output``; ``FileNotFoundError`` when it has none."""
    meta = meta_path(output)
    if not meta.is_file():
        raise FileNotFoundError(f"{output}: no {meta.name} saying how it was scored (was it written by dialeval score?)")
    return json.loads(meta.read_text(encoding="utf-8"))


def input_digest(item_hashes: Sequence[str]) -> str:
    """The identity of a whole input: sha256 of its item hashes in order."""
    return hashlib.sha256("\n".join(item_hashes).encode("ascii")).hexdigest()


def write_meta(output: Path, settings: dict[str, Any], signature: str | None) -> None:
    """``<output>.meta.json``: the settings, the signature and the range and direction of every
    sub-score the metric declares (``scales``: sub-score -> range, low, high, higher_is_better,
    direction, raw, meaning), so the scores can be read without the library."""
    from dialeval import registry
    from dialeval.registry import scale_dict

    scales = {sub: scale_dict(settings["metric"], sub) for sub in registry.spec(settings["metric"]).scales()}
    meta = {**settings, "signature": signature, "scales": scales}
    meta_path(output).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def _check_settings(output: Path, stored: dict[str, Any], settings: dict[str, Any]) -> None:
    """``ValueError`` when ``output`` was scored with another metric, options, chunking, shard or
    percentiles (``dialeval score --percentiles``), or
    by a dialeval that kept no input hashes."""
    for key in ("metric", "options"):
        if stored.get(key) != settings[key]:
            raise ValueError(
                f"{output} holds scores of {key} {stored.get(key)!r}, this run asks for {settings[key]!r}; {RESTART}")
    if "item_sha256" not in stored or "chunk_size" not in stored:
        raise ValueError(f"{output} was written by an older dialeval that kept no hash of its input lines, so "
                         f"a resume cannot tell whether they changed; {RESTART}")
    if stored["chunk_size"] != settings["chunk_size"]:
        raise ValueError(f"{output} was scored in chunks of {stored['chunk_size']} items, this run asks for "
                         f"--chunk-size {settings['chunk_size']} (batched models can differ in the last float bits "
                         f"with other chunks); resume with --chunk-size {stored['chunk_size']}, or {RESTART}")
    if stored.get("percentiles") != settings.get("percentiles"):
        raise ValueError(f"{output} holds lines with percentiles {stored.get('percentiles')!r}, this run asks for "
                         f"{settings.get('percentiles')!r} (--percentiles, its human reference); {RESTART}")
    if stored.get("shard") != settings.get("shard"):
        raise ValueError(f"{output} holds shard {stored.get('shard')!r}, this run is shard {settings.get('shard')!r} "
                         f"(did the input change length?); {RESTART}")


def _check_lines(output: Path, stored: Sequence[str], current: Sequence[str], source: str, lines: Sequence[int]) -> None:
    """``ValueError`` naming the first line of ``source`` whose record differs from the one scored
    into ``output`` (``lines[k]``: the file line of item ``k``), or saying that none matches."""
    changed = [k for k, (old, new) in enumerate(zip(stored, current)) if old != new]
    if not changed:
        return
    if len(changed) == len(stored) > 1:
        raise ValueError(f"{output}: none of its {len(stored)} scored lines matches a record of {source}: "
                         f"another input file? {RESTART}")
    others = ", ".join(str(lines[k]) for k in changed[1:6]) + (", ..." if len(changed) > 6 else "")
    more = f" (and {len(changed) - 1} more: lines {others})" if len(changed) > 1 else ""
    raise ValueError(f"{source}:{lines[changed[0]]}: this line changed since it was scored into {output}{more}; "
                     "its score would be stale: pass --overwrite to score the input again")


def keep_lines(path: Path, keep: int) -> None:
    """Cut ``path`` to its first ``keep`` lines."""
    with open(path, "rb") as f:
        head = b"".join(f.readline() for _ in range(keep))
    path.write_bytes(head)


class Resume(NamedTuple):
    """Where a run goes on: ``done`` items already scored (a chunk boundary, or all), the
    ``signature`` of their scores, and ``written``: the finished lines the output holds now (more
    than ``done`` when a killed process left part of a chunk; :func:`keep_lines` cuts them before
    the run writes)."""

    done: int
    signature: str | None
    written: int


def resume_point(output: Path, settings: dict[str, Any], lines: Sequence[int]) -> Resume:
    """Where a run with ``settings`` goes on in ``output`` (``settings["item_sha256"]``: the hashes
    of the items this run scores, ``settings["input"]``: their file; ``lines[k]``: item ``k``'s file
    line). ``ValueError`` when the lines already written were scored otherwise or from other records.
    """
    done = completed_lines(output)
    if not done:
        return Resume(0, None, 0)
    if not meta_path(output).is_file():
        raise ValueError(f"{output} has {done} lines but no {meta_path(output).name} saying how they were scored; {RESTART}")
    stored = read_meta(output)
    _check_settings(output, stored, settings)
    n_items = len(settings["item_sha256"])
    if done > n_items or len(stored["item_sha256"]) < done:
        raise ValueError(f"{output} has {done} lines but the input only {n_items} items: wrong pair of files? {RESTART}")
    _check_lines(output, stored["item_sha256"][:done], settings["item_sha256"][:done], settings["input"], lines)
    aligned = done if done == n_items else done - done % settings["chunk_size"]
    return Resume(aligned, stored.get("signature"), done)
