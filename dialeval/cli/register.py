"""``dialeval register``: put the evaluate modules into evaluate's cache and prepare WordNet."""

from __future__ import annotations

import argparse

from dialeval.core.spec import Command


def cmd_register(args: argparse.Namespace) -> int:
    """Run ``dialeval register``; the exit status."""
    from dialeval.modules import register
    from dialeval.core.resources import prepare_wordnet

    for path in register():
        print(f"registered {path}")
    print(f"WordNet ready in {prepare_wordnet()}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``dialeval register`` takes no arguments."""


COMMAND = Command("register", "register the evaluate modules for offline evaluate.load", add_arguments, cmd_register)
