"""The ``dialeval`` command line.

* ``dialeval examples`` — score ``examples/dialogues.jsonl`` with every metric that runs offline.
* ``dialeval score --metric M --input IN.jsonl --output OUT.jsonl`` — resumable batch scoring.
* ``dialeval benchmark --metric M --dataset D`` — correlation with human judgment.
* ``dialeval augment --method ws|ctg --input IN.jsonl --output OUT.jsonl`` — query paraphrases.
* ``dialeval register`` — put the evaluate modules into evaluate's cache and prepare WordNet.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from dialeval import augment
from dialeval.data import REPO_ROOT, JudgmentItem, completed_lines, read_jsonl
from dialeval.runners import RUNNERS, get_runner
from dialeval.tables import fmt, format_table

EXAMPLES = REPO_ROOT / "examples" / "dialogues.jsonl"
# The sub-metrics `dialeval examples` shows per metric (all are in --json).
HEADLINE = {
    "multiref": ("bleu2", "meteor", "rougeL", "greedy_matching"),
    "fed": ("turn_overall", "turn_interesting", "turn_relevant", "turn_fluent"),
    "holistic": ("coherence", "fluency", "diversity", "consistency"),
}


def _parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``--option key=value``; values are JSON when they parse as JSON, else strings."""
    options = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--option expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def _validated_items(rows: list[dict], source: str) -> list[dict]:
    items = []
    for i, row in enumerate(rows):
        row = {"score": 0.0, **row}  # scoring input needs no human score
        item = vars(JudgmentItem.from_dict(row, f"{source}:{i + 1}"))
        item.pop("score")
        items.append(item)
    return items


def cmd_score(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    runner = get_runner(args.metric)
    options = _parse_options(args.option)
    items = _validated_items(read_jsonl(args.input), args.input)
    output = Path(args.output)
    done = completed_lines(output)
    if done > len(items):
        raise ValueError(f"{output} has {done} lines but {args.input} only {len(items)}: wrong pair of files?")
    summary: dict[str, list[float]] = {}
    with open(output, "a", encoding="utf-8") as out, tqdm(total=len(items), initial=done, desc=args.metric) as bar:
        for start in range(done, len(items), args.chunk_size):
            chunk = items[start : start + args.chunk_size]
            per_item, signature = runner(chunk, **options)
            for k, item in enumerate(chunk):
                scores = {name: values[k] for name, values in per_item.items()}
                record = {"line": start + k + 1, "id": item.get("id"), "scores": scores, "signature": signature}
                out.write(json.dumps(record) + "\n")
                for name, value in scores.items():
                    summary.setdefault(name, []).append(value)
            out.flush()
            bar.update(len(chunk))
    if args.json:
        print(json.dumps({"output": str(output), "scored": len(items) - done, "skipped": done}))
    else:
        print(f"wrote {len(items) - done} new lines to {output} ({done} already there, skipped)")
    return 0


def cmd_benchmark(args: argparse.Namespace) -> int:
    from dialeval.benchmark import run_benchmark

    if args.aspect and args.dataset:
        raise ValueError("give --aspect or --dataset, not both")
    dataset = f"{args.metric}-{args.aspect}" if args.aspect else args.dataset
    if not dataset:
        raise ValueError("benchmark needs --dataset (or --aspect for holistic)")
    result, table = run_benchmark(args.metric, dataset, **_parse_options(args.option))
    if args.save:
        Path(args.save).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else table)
    return 0


# What `dialeval examples` runs: (metric, options) jobs; a job whose model is missing is skipped
# with the resolver's message (holistic consistency needs the NLI model, the rest runs on SmolLM2).
# FED runs the paper's Eq. 1: with the local stand-ins for DialoGPT it correlates far better with
# humans than the authors' whole-string loss (metrics/fed/README.md).
EXAMPLE_JOBS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("multiref", {}),
    ("fed", {"mode": "conditional"}),
    ("holistic", {"aspects": ["coherence", "fluency", "diversity"]}),
    ("holistic", {"aspects": ["consistency"]}),
)


def cmd_examples(args: argparse.Namespace) -> int:
    from dialeval.models import ModelNotFoundError

    items = _validated_items(read_jsonl(args.input), str(args.input))
    results: dict[str, Any] = {}
    for metric, options in EXAMPLE_JOBS:
        if args.metrics and metric not in args.metrics:
            continue
        entry = results.setdefault(metric, {"scores": {}, "signatures": [], "skipped": []})
        try:
            per_item, signature = get_runner(metric)(items, **options)
        except (ModelNotFoundError, FileNotFoundError) as e:
            entry["skipped"].append(str(e))
            continue
        entry["scores"].update(per_item)
        entry["signatures"].append(signature)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    columns = [(m, s) for m, r in results.items() for s in HEADLINE.get(m, r["scores"]) if s in r["scores"]]
    rows = [
        [it.get("id") or str(i + 1), it["response"][:40]]
        + [fmt(results[m]["scores"][s][i]) for m, s in columns]
        for i, it in enumerate(items)
    ]
    print(format_table(["id", "response"] + [f"{m}:{s}" for m, s in columns], rows))
    for metric, r in results.items():
        for line in r["signatures"] + [f"skipped: {reason}" for reason in r["skipped"]]:
            print(f"{metric}: {line}")
    return 0


def cmd_register(args: argparse.Namespace) -> int:
    from dialeval.modules import register
    from dialeval.resources import prepare_wordnet

    for path in register():
        print(f"registered {path}")
    print(f"WordNet ready in {prepare_wordnet()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dialeval", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("examples", help="score the example dialogues with every offline metric")
    p.add_argument("--input", type=Path, default=EXAMPLES)
    p.add_argument("--metrics", nargs="*", choices=sorted(RUNNERS), help="a subset of the metrics")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_examples)

    p = sub.add_parser("score", help="score a JSONL file (context, response, references)")
    p.add_argument("--metric", required=True, choices=sorted(RUNNERS))
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--chunk-size", type=int, default=64, help="items scored between two flushes")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="metric option, e.g. --option metrics='[\"bleu2\"]'")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("benchmark", help="correlation with human judgment")
    p.add_argument("--metric", required=True, choices=sorted(RUNNERS))
    p.add_argument("--dataset", help="a named data set or a JSONL file")
    p.add_argument("--aspect", choices=("coherence", "fluency", "consistency"),
                   help="holistic: the Pang et al. set of this aspect (same as --dataset holistic-<aspect>)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", action="store_true")
    p.add_argument("--save", metavar="FILE.json", help="also write the result as JSON to this file")
    p.set_defaults(func=cmd_benchmark)

    p = sub.add_parser("augment", help="paraphrase queries for holistic diversity (WordNet substitution / CTG)")
    augment.add_arguments(p)
    p.set_defaults(func=augment.run)

    p = sub.add_parser("register", help="register the evaluate modules for offline evaluate.load")
    p.set_defaults(func=cmd_register)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"dialeval: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
