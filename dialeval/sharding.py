"""Data-parallel scoring: split ``dialeval score``'s input into shards and join their outputs.

``dialeval score --num-shards N --shard-index I`` scores the ``I``-th of ``N`` contiguous blocks
of the input (:func:`shard_range`: item ``k`` of ``n`` goes to shard ``floor(k N / n)``, so the
blocks differ in size by at most one and keep the input order) into ``OUT.shard-I-of-N.jsonl``
(:func:`shard_path`). ``dialeval merge --output OUT.jsonl`` then checks that the shards were scored
with the same metric, options and signature, that every input line was scored exactly once, and
writes them in input order (:func:`merge_shards`): the same file a single process would write.

Under ``accelerate launch`` (or ``torchrun``) every process gets the same command line; the
launcher's ``WORLD_SIZE`` / ``RANK`` variables then choose the shard (:func:`launcher_shard`), and
``LOCAL_RANK`` the GPU, so a corpus is scored data-parallel across GPUs and nodes with the
standard launcher::

    accelerate launch --num_processes 4 -m dialeval.cli score --metric fed --input big.jsonl --output fed.jsonl
    dialeval merge --output fed.jsonl
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

META_SUFFIX = ".meta.json"


def shard_range(n_items: int, num_shards: int, index: int) -> range:
    """The item indices of shard ``index`` of ``num_shards``: ``[n*index // N, n*(index+1) // N)``."""
    if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
        raise ValueError(f"--num-shards must be an integer >= 1, got {num_shards!r}")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < num_shards:
        raise ValueError(f"--shard-index must be an integer in 0..{num_shards - 1}, got {index!r}")
    return range(n_items * index // num_shards, n_items * (index + 1) // num_shards)


def launcher_shard() -> tuple[int, int] | None:
    """``(num_shards, index)`` from ``WORLD_SIZE`` and ``RANK`` when a launcher started several
    processes (accelerate, torchrun), else ``None``."""
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world <= 1:
        return None
    return world, int(os.environ.get("RANK", "0") or 0)


def launcher_device() -> str | None:
    """``cuda:<LOCAL_RANK>`` under a multi-process launcher on a machine with GPUs, else ``None``."""
    import torch

    if launcher_shard() is None or not torch.cuda.is_available():
        return None
    return f"cuda:{int(os.environ.get('LOCAL_RANK', '0') or 0)}"


def shard_path(output: str | Path, index: int, num_shards: int) -> Path:
    """``out.jsonl`` -> ``out.shard-1-of-4.jsonl`` (shard 1 of 4)."""
    output = Path(output)
    return output.with_name(f"{output.stem}.shard-{index}-of-{num_shards}{output.suffix}")


def find_shards(output: str | Path) -> list[Path]:
    """The shard files of ``output`` on disk, ordered by index; ``FileNotFoundError`` when there are none."""
    output = Path(output)
    pattern = re.compile(rf"^{re.escape(output.stem)}\.shard-(\d+)-of-(\d+){re.escape(output.suffix)}$")
    found = sorted(
        ((int(m.group(1)), int(m.group(2)), p) for p in output.parent.glob(f"{output.stem}.shard-*")
         if (m := pattern.match(p.name))),
    )
    if not found:
        raise FileNotFoundError(f"no shard files {shard_path(output, 0, 2).name.replace('0-of-2', '*-of-*')} "
                                f"beside {output}")
    return [p for _, _, p in found]


def _meta(path: Path) -> dict[str, Any]:
    meta = path.with_name(path.name + META_SUFFIX)
    if not meta.is_file():
        raise FileNotFoundError(f"{path}: no {meta.name} saying how it was scored (was it written by dialeval score?)")
    return json.loads(meta.read_text(encoding="utf-8"))


def merge_shards(output: str | Path, shards: Sequence[str | Path] | None = None) -> int:
    """Join shard outputs into ``output`` (input order) and its ``.meta.json``; return the item count.

    ``ValueError`` when the shards disagree on metric, options, input or signature, when one is
    incomplete or missing, or when a line was scored twice.
    """
    output = Path(output)
    paths = [Path(p) for p in shards] if shards else find_shards(output)
    metas = [_meta(p) for p in paths]
    first = metas[0]
    for path, meta in zip(paths[1:], metas[1:]):
        for key in ("metric", "options", "input", "signature"):
            if meta.get(key) != first.get(key):
                raise ValueError(f"{path} was scored with {key} {meta.get(key)!r}, {paths[0]} with {first.get(key)!r}")
    total = first["shard"]["total_items"]
    indices = sorted(m["shard"]["index"] for m in metas)
    if indices != list(range(first["shard"]["num_shards"])):
        raise ValueError(f"shards {indices} of {first['shard']['num_shards']} given: every shard is needed")
    records: dict[int, str] = {}
    for path in paths:
        for text in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)["line"]
            if line in records:
                raise ValueError(f"{path}: input line {line} was scored in two shards")
            records[line] = text
    if len(records) != total:
        raise ValueError(f"the shards hold {len(records)} of {total} items: finish (resume) the incomplete shard(s) first")
    output.write_text("".join(records[k] + "\n" for k in sorted(records)), encoding="utf-8")
    merged = {k: v for k, v in first.items() if k != "shard"}
    merged["items"] = total
    output.with_name(output.name + META_SUFFIX).write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    return total
