"""Data-parallel scoring: split ``dialeval score``'s input into shards and join their outputs.

``dialeval score --num-shards N --shard-index I`` scores the ``I``-th of ``N`` contiguous blocks
of the input into ``OUT.shard-I-of-N.jsonl`` (:func:`shard_path`). The blocks are made of whole
chunks (:func:`shard_range`: of the ``c`` chunks of ``--chunk-size`` items, shard ``I`` takes chunks
``floor(c I / N)`` to ``floor(c (I+1) / N)``, so the blocks differ by at most one chunk and keep the
input order): every item is scored in the same chunk as in a single process, and a batched model
gives it the same float bits. A shard may be empty when the input has fewer chunks than shards (a
smaller ``--chunk-size`` spreads it). ``dialeval merge --output OUT.jsonl`` then checks that the
shards were scored with the same metric, options, chunk size and signature from the same input
(:mod:`dialeval.scoring.resume`: the hash of every input line), that every input line was scored exactly
once, and writes them in input order (:func:`merge_shards`): the same file, and the same meta file,
a single process would write.

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

from dialeval.scoring.resume import RESTART, input_digest, meta_path, read_meta

SAME = ("metric", "options", "input", "input_sha256", "chunk_size")  # equal in every shard, and the signature


def shard_range(n_items: int, num_shards: int, index: int, chunk_size: int = 1) -> range:
    """The item indices of shard ``index`` of ``num_shards``, whole chunks of ``chunk_size``: of the
    ``c = ceil(n / chunk_size)`` chunks, ``[c*index // N, c*(index+1) // N)``."""
    if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
        raise ValueError(f"--num-shards must be an integer >= 1, got {num_shards!r}")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < num_shards:
        raise ValueError(f"--shard-index must be an integer in 0..{num_shards - 1}, got {index!r}")
    chunks = -(-n_items // chunk_size)
    first, stop = chunks * index // num_shards, chunks * (index + 1) // num_shards
    return range(min(first * chunk_size, n_items), min(stop * chunk_size, n_items))


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


def _check_same_run(paths: Sequence[Path], metas: Sequence[dict[str, Any]]) -> None:
    """``ValueError`` unless the shards are every shard of one run over one input (settings, input
    hashes, shard indices)."""
    first = metas[0]
    if any("item_sha256" not in m or "shard" not in m for m in metas):
        old = next(p for p, m in zip(paths, metas) if "item_sha256" not in m or "shard" not in m)
        raise ValueError(f"{old}: not a shard scored by this dialeval (no shard or no input hashes in its meta); "
                         f"score it again ({RESTART})")
    for path, meta in zip(paths[1:], metas[1:]):
        for key in SAME:
            if meta.get(key) != first.get(key):
                raise ValueError(f"{path} was scored with {key} {meta.get(key)!r}, {paths[0]} with {first.get(key)!r}")
    signed = [(p, m["signature"]) for p, m in zip(paths, metas) if m.get("signature") is not None]  # not an empty shard
    for path, signature in signed[1:]:
        if signature != signed[0][1]:
            raise ValueError(f"{path} was scored with signature {signature!r}, {signed[0][0]} with {signed[0][1]!r}")
    indices = sorted(m["shard"]["index"] for m in metas)
    if indices != list(range(first["shard"]["num_shards"])):
        raise ValueError(f"shards {indices} of {first['shard']['num_shards']} given: every shard is needed")


def merge_shards(output: str | Path, shards: Sequence[str | Path] | None = None) -> int:
    """Join shard outputs into ``output`` (input order) and its ``.meta.json``; return the item count.

    ``ValueError`` when the shards disagree on metric, options, chunk size, input (its hashes) or
    signature, when one is incomplete or missing, or when a line was scored twice.
    """
    output = Path(output)
    paths = [Path(p) for p in shards] if shards else find_shards(output)
    metas = [read_meta(p) for p in paths]
    _check_same_run(paths, metas)
    order = sorted(range(len(paths)), key=lambda k: metas[k]["shard"]["index"])
    hashes = [h for k in order for h in metas[k]["item_sha256"]]
    first = metas[0]
    total = first["shard"]["total_items"]
    if len(hashes) != total or input_digest(hashes) != first["input_sha256"]:
        raise ValueError(f"the shards' input hashes do not add up to the input {first['input']} they name: "
                         f"score the shards again ({RESTART})")
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
    merged = {k: v for k, v in first.items() if k not in ("shard", "item_sha256", "signature", "scales")}
    signature = next((m["signature"] for m in metas if m.get("signature") is not None), None)
    merged.update(items=total, item_sha256=hashes, signature=signature, scales=first["scales"])
    meta_path(output).write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    return total
