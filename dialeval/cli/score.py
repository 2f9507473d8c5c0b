"""``dialeval score``: resumable, shardable batch scoring of a JSONL file (:mod:`dialeval.scoring.resume`,
:mod:`dialeval.scoring.sharding`; chunks at fixed input positions, :mod:`dialeval.scoring.chunks`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from dialeval.cli.common import parse_options, read_items
from dialeval.cli.outputs import STDOUT, check_output_path, json_line
from dialeval.core.results import flags_of
from dialeval.core.spec import Command
from dialeval.data import completed_lines
from dialeval.scoring.chunks import CHUNK_SIZE
from dialeval.scoring.human_reference import HumanReference, load_reference, reference_signature
from dialeval.scoring.resume import input_digest, keep_lines, meta_path, resume_point, write_meta
from dialeval.scoring.runners import RUNNERS, get_runner
from dialeval.scoring.sharding import launcher_device, launcher_shard, shard_path, shard_range


class Interrupted(Exception):
    """Ctrl-C during ``dialeval score``: what was saved and how to go on (one line, no traceback)."""


@contextlib.contextmanager
def saved_on_interrupt(output: Path) -> Iterator[None]:
    """Turn Ctrl-C into :class:`Interrupted` saying how many lines ``output`` holds."""
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: {completed_lines(output)} lines saved in {output}; "
                          "rerun the same command to resume") from None


def _shard(args: argparse.Namespace) -> tuple[int, int]:
    """``(num_shards, index)``: ``--num-shards``/``--shard-index``, else the launcher's processes
    (``accelerate launch``, ``torchrun``), else one shard."""
    if args.num_shards is None and args.shard_index is None:
        return launcher_shard() or (1, 0)
    if args.num_shards is None or args.shard_index is None:
        raise ValueError("give --num-shards and --shard-index together")
    return args.num_shards, args.shard_index


def _launcher_device(metric: str, options: dict[str, Any]) -> dict[str, Any]:
    """``{"device": "cuda:<LOCAL_RANK>"}`` under a multi-process launcher on GPUs when the metric takes
    a device and none was given, else ``{}``."""
    from dialeval.scoring.chunks import accepted_options

    device = launcher_device()
    if device is None or "device" in options or "device" not in accepted_options(get_runner(metric)):
        return {}
    return {"device": device}


def _score_output(args: argparse.Namespace, num_shards: int) -> Path | None:
    """The checked ``--output`` of ``dialeval score`` (and its meta file), or ``None`` for ``-``
    (standard output: no meta file, no resume, one process)."""
    if args.output == STDOUT:
        if num_shards > 1:
            raise ValueError("--output - (standard output) scores in one process: give a file path to shard")
        return None
    output = check_output_path(args.output, [args.input])
    check_output_path(meta_path(output), [args.input])
    return output


def _score_settings(args: argparse.Namespace, options: dict[str, Any], hashes: list[str], shard: range,
                    num_shards: int, index: int) -> dict[str, Any]:
    """What ``OUT.jsonl.meta.json`` keeps of a run (:mod:`dialeval.scoring.resume`)."""
    settings = {"metric": args.metric, "options": options, "input": str(args.input), "items": len(shard),
                "chunk_size": args.chunk_size, "input_sha256": input_digest(hashes),
                "item_sha256": hashes[shard.start:shard.stop]}
    if num_shards > 1:
        settings["shard"] = {"index": index, "num_shards": num_shards, "total_items": len(hashes)}
    return settings


def _score_lines(args: argparse.Namespace, items: list[dict], lines: list[int], options: dict[str, Any],
                 block: range, expected: str | None, target: str,
                 reference: HumanReference | None = None) -> Iterator[tuple[str, int, str]]:
    """``(output text, item count, signature)`` of each chunk of the items in ``block``;
    ``ValueError`` when a chunk is scored with another signature than ``expected``, that of the
    lines ``target`` already holds. With a ``reference`` each line also carries ``percentiles``
    (sub-score -> its percentile among human replies) and ``percentiles_signature``."""
    from dialeval.scoring.chunks import score_chunks

    chunks = score_chunks(args.metric, items, options, start=block.start, stop=block.stop,
                          chunk_size=args.chunk_size, where=lambda i: f"{args.input}:{lines[i]}")
    for start, chunk, item_scores, signature in chunks:
        if expected is not None and signature != expected:
            raise ValueError(
                f"{target}: its lines were scored as {expected!r}, this run scores as {signature!r} "
                "(another model or version); pass --overwrite to start again, or another --output")
        expected = signature
        per_item, _ = item_scores
        chunk_flags = flags_of(item_scores, chunk)
        records = [{"line": lines[start + k], "id": item.get("id"),
                    "scores": {name: values[k] for name, values in per_item.items()}, "flags": flags,
                    "signature": signature}
                   for k, (item, flags) in enumerate(zip(chunk, chunk_flags))]
        if reference is not None:
            read = reference.read(per_item, chunk_flags)  # a flagged reply at 0
            for k, record in enumerate(records):
                record["percentiles"] = {name: values[k] for name, values in read.items()}
                record["percentiles_signature"] = reference_signature(reference)
        yield "".join(json_line(record) + "\n" for record in records), len(chunk), signature


def _warn_save_every(args: argparse.Namespace) -> None:
    """``--save-every`` no longer sizes the chunks (scores would follow time): say so once."""
    if args.save_every is not None:
        print("dialeval: --save-every is deprecated and ignored: chunks no longer follow time; progress is saved "
              "after every chunk of --chunk-size items (a smaller --chunk-size saves more often)", file=sys.stderr)


def cmd_score(args: argparse.Namespace) -> int:
    """Run ``dialeval score``; the exit status. Progress per item on standard error once the run has
    taken 10 s (:mod:`dialeval.core.progress`)."""
    from dialeval.core.options import check_number
    from dialeval.core.progress import Progress
    from dialeval.scoring.chunks import check_options

    check_number("--chunk-size", args.chunk_size, minimum=1, integer=True)
    _warn_save_every(args)
    options = parse_options(args.option)
    check_options(args.metric, options)
    num_shards, index = _shard(args)
    output = _score_output(args, num_shards)
    items, lines, hashes = read_items(args.input)
    shard = shard_range(len(items), num_shards, index, args.chunk_size)
    run_options = {**options, **_launcher_device(args.metric, options)}  # a GPU per process, not a setting
    reference = None
    if args.percentiles:  # a stale reference is refused before any scoring
        reference = load_reference(args.metric, options, any(item.get("references") for item in items))
    if output is None:
        with Progress(len(shard), args.metric) as bar:
            for text, count, _ in _score_lines(args, items, lines, run_options, shard, None, STDOUT, reference):
                sys.stdout.write(text)
                sys.stdout.flush()
                bar.update(count)
        print(f"wrote {len(shard)} lines to standard output", file=sys.stderr)
        return 0
    if num_shards > 1:
        output = check_output_path(shard_path(output, index, num_shards), [args.input])
    if args.overwrite:
        for path in (output, meta_path(output)):
            path.unlink(missing_ok=True)
    settings = _score_settings(args, options, hashes, shard, num_shards, index)
    if reference is not None:  # lines with and without percentiles never mix in one output
        settings["percentiles"] = reference_signature(reference)
    done, expected, written = resume_point(output, settings, lines[shard.start:shard.stop])
    write_meta(output, settings, expected)
    output.touch()  # also for an empty shard (fewer chunks than shards)
    with saved_on_interrupt(output), Progress(len(shard), args.metric, initial=done) as bar:
        block = range(shard.start + done, shard.stop)
        for text, count, signature in _score_lines(args, items, lines, run_options, block, expected, str(output),
                                                         reference):
            if written > done:  # part of a chunk that a killed process left: scored again as a whole
                keep_lines(output, done)
                written = done
            if expected is None:
                expected = signature
                write_meta(output, settings, signature)
            with open(output, "a", encoding="utf-8") as out:
                out.write(text)  # a whole chunk at once: a resume goes on at a chunk boundary
            bar.update(count)
    if args.json:
        print(json.dumps({"output": str(output), "scored": len(shard) - done, "skipped": done}))
    else:
        print(f"wrote {len(shard) - done} new lines to {output} ({done} already there, skipped)")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval score``."""
    p.add_argument("--metric", required=True, choices=sorted(RUNNERS))
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True,
                   help="a JSONL file (resumable, OUT.jsonl.meta.json beside it), or - for standard output")
    p.add_argument("--chunk-size", type=int, default=CHUNK_SIZE,
                   help="items per runner call, in chunks at fixed input positions; progress is saved after "
                        "each chunk (batched models: other sizes change scores in the last float32 bits only)")
    p.add_argument("--save-every", type=float, metavar="SECONDS", help="deprecated and ignored (see --chunk-size)")
    p.add_argument("--overwrite", action="store_true", help="discard an existing --output and start again")
    p.add_argument("--num-shards", type=int, help="split the input into this many contiguous shards (see dialeval merge)")
    p.add_argument("--shard-index", type=int, help="score this shard (0-based) into OUT.shard-I-of-N.jsonl")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="metric option, e.g. --option metrics='[\"bleu2\"]'")
    p.add_argument("--percentiles", action="store_true",
                   help="add each score's percentile among human replies to DailyDialog test contexts (the "
                        "reference stored with the bundled weights; refused when it does not match the options)")
    p.add_argument("--json", action="store_true")


COMMAND = Command("score", "score a JSONL file (context, response, references)", add_arguments, cmd_score)
