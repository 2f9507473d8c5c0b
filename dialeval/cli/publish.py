"""``dialeval publish``: write a ``hub/<name>`` folder's card (``--card``) or reference scores
(``--reference``), validate it (``--dry-run``) and upload it to the Hub (:mod:`dialeval.publish`).

Usage::

    dialeval publish hub/smollm2-dailydialog --repo-id dialeval/smollm2-dailydialog --dry-run
    dialeval publish hub/smollm2-dailydialog --card        # rewrite the card from the reports
    dialeval publish hub/smollm2-dailydialog --reference   # (re)store the reference scores
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dialeval.core.spec import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dialeval publish``."""
    parser.add_argument("folder", type=Path, help="a hub/<name> folder")
    parser.add_argument("--repo-id", help="Hub repository (default dialeval/<folder name>)")
    parser.add_argument("--dry-run", action="store_true", help="validate only: card, sizes, loading, sample scores")
    parser.add_argument("--card", action="store_true", help="rewrite the model card from the reports, then stop")
    parser.add_argument("--reference", action="store_true", help="store the reference scores, then stop")


def cmd_publish(args: argparse.Namespace) -> int:
    """Run ``dialeval publish``; the exit status (2: the Hub cannot be reached)."""
    from dialeval.models.hub import NAMESPACE
    from dialeval.publish import publish, write_model_card, write_reference

    if args.card:
        print(f"wrote {write_model_card(args.folder)}")
        return 0
    if args.reference:
        print(f"wrote {write_reference(args.folder)}")
        return 0
    repo_id = args.repo_id or f"{NAMESPACE}/{Path(args.folder).name}"
    try:
        lines = publish(args.folder, repo_id, dry_run=args.dry_run)
    except ConnectionError as e:  # offline: one clear line, no traceback
        print(f"dialeval publish: {e}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        print(json.dumps({"folder": str(args.folder), "repo_id": repo_id, "checks": lines}))
    else:
        print("\n".join(f"ok: {line}" for line in lines))
    return 0


COMMAND = Command("publish", "validate (--dry-run) and upload a hub/<name> folder to the Hub", add_arguments,
                  cmd_publish)
