"""``dialeval publish``: validate (``--dry-run``) and upload a ``hub/<name>`` folder to the Hub
(:mod:`dialeval.publish`)."""

from __future__ import annotations

import argparse

from dialeval.core.spec import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval publish``."""
    from dialeval import publish

    publish.add_arguments(p)


def cmd_publish(args: argparse.Namespace) -> int:
    """Run ``dialeval publish``; the exit status."""
    from dialeval import publish

    return publish.run(args)


COMMAND = Command("publish", "validate (--dry-run) and upload a hub/<name> folder to the Hub", add_arguments,
                  cmd_publish)
