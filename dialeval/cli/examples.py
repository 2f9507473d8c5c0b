"""``dialeval examples``: score ``examples/dialogues.jsonl`` with every metric that runs offline
(each metric's ``MetricSpec.example_jobs``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dialeval import registry
from dialeval.cli.common import read_items
from dialeval.core.spec import Command
from dialeval.core.tables import fmt, format_table
from dialeval.models.shipped import shipped_dir
from dialeval.scoring.runners import RUNNERS, get_runner

EXAMPLES = shipped_dir("examples") / "dialogues.jsonl"


def cmd_examples(args: argparse.Namespace) -> int:
    """Run ``dialeval examples``; the exit status. Quiet by default: no loading bars, no progress;
    ``--verbose`` shows both, dialeval's progress from the start (:mod:`dialeval.core.quiet`)."""
    from dialeval.core.progress import silenced
    from dialeval.core.quiet import verbose_output

    with verbose_output() if args.verbose else silenced():
        return _examples(args)


def _scored(metric: str, items: list[dict], options: dict[str, Any]) -> tuple[dict[str, list[float]], str]:
    """The metric's runner on the items, with progress per metric (``examples: fed: 8/8 items``)."""
    from dialeval.core.progress import Progress

    with Progress(len(items), f"examples: {metric}") as bar:
        per_item, signature = get_runner(metric)(items, **options)
        bar.update(len(items))
    return per_item, signature


def _examples(args: argparse.Namespace) -> int:
    from dialeval.models import ModelNotFoundError

    items, _, _ = read_items(args.input)
    results: dict[str, Any] = {}
    # every metric's example jobs (MetricSpec.example_jobs); a job whose model is missing is skipped
    # with the resolver's message
    jobs = [(spec.name, options) for spec in registry.specs() for options in spec.example_jobs]
    for metric, options in jobs:
        if args.metrics and metric not in args.metrics:
            continue
        entry = results.setdefault(metric, {"scores": {}, "signatures": [], "skipped": []})
        try:
            per_item, signature = _scored(metric, items, options)
        except (ModelNotFoundError, FileNotFoundError) as e:
            entry["skipped"].append(str(e))
            continue
        entry["scores"].update(per_item)
        entry["signatures"].append(signature)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    columns = [(m, s) for m, r in results.items() for s in registry.spec(m).headline or r["scores"] if s in r["scores"]]
    rows = [
        [it.get("id") or str(i + 1), it["response"][:40]]
        + [fmt(results[m]["scores"][s][i]) for m, s in columns]
        for i, it in enumerate(items)
    ]
    print(format_table(["id", "response"] + [f"{m}:{s}" for m, s in columns], rows))
    for metric, r in results.items():
        for line in r["signatures"] + [f"skipped: {reason}" for reason in r["skipped"]]:
            print(f"{metric}: {line}")
    for metric, r in results.items():
        note = registry.spec(metric).example_note
        if note and r["signatures"] and (text := note(r["signatures"])):
            print(f"{metric}: {text}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval examples``."""
    p.add_argument("--input", type=Path, default=EXAMPLES)
    p.add_argument("--metrics", nargs="*", choices=sorted(RUNNERS), help="a subset of the metrics")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true",
                   help="show the models' loading bars and dialeval's progress on standard error (quiet by default)")


COMMAND = Command("examples", "score the example dialogues with every offline metric", add_arguments, cmd_examples)
