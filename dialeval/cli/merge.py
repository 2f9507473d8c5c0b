"""``dialeval merge``: join the shard outputs of ``dialeval score --num-shards`` (:mod:`dialeval.scoring.sharding`)."""

from __future__ import annotations

import argparse

from dialeval.cli.outputs import check_output_path
from dialeval.core.spec import Command
from dialeval.scoring.resume import meta_path
from dialeval.scoring.sharding import merge_shards


def cmd_merge(args: argparse.Namespace) -> int:
    """Run ``dialeval merge``; the exit status."""
    output = check_output_path(args.output, args.shards)
    check_output_path(meta_path(output), args.shards)
    total = merge_shards(args.output, args.shards or None)
    print(f"merged {total} items into {args.output}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval merge``."""
    p.add_argument("--output", required=True, help="the OUT.jsonl whose OUT.shard-I-of-N.jsonl files to join")
    p.add_argument("shards", nargs="*", help="shard files (default: every OUT.shard-*-of-*.jsonl)")


COMMAND = Command("merge", "join the shard outputs of dialeval score --num-shards", add_arguments, cmd_merge)
