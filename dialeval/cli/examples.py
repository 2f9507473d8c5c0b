"""``dialeval examples``: score ``examples/dialogues.jsonl`` with every metric that runs offline
(each metric's ``MetricSpec.example_jobs``), and print per item each headline value (a flagged reply
as ``flagged:<flag>``, a percentile among human replies where a stored reference matches), below
them each column's mean, mean over unflagged replies, flagged count and mean percentile
(:mod:`dialeval.core.results`), then each column's scale and direction. ``--json``: every
sub-score's values, flags, percentiles and that summary.

One metric's models at a time: a metric's example jobs and the runs that a metric reading others
(``MetricSpec.reads_runs``: the combined metric) reads of it are scored together, the latter through
the score cache where the reader finds them (a job with the same options as such a run is scored
once), then the models it loaded are released (:mod:`dialeval.core.held`; a model loaded before the command
stays); the readers come last and load no model (``benchmarks/results/examples-memory.md``)."""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from dialeval import registry
from dialeval.cli.common import read_items
from dialeval.core import held
from dialeval.core.results import (FLAGGED, PERCENTILE, UNFLAGGED, Flags, ItemScores, directed, flag_summary, flags_of,
                                   mean, percentile_means)
from dialeval.core.spec import Command
from dialeval.core.tables import fmt, format_table
from dialeval.models.shipped import shipped_dir
from dialeval.scoring.runners import RUNNERS, get_runner

EXAMPLES = shipped_dir("examples") / "dialogues.jsonl"
LEGEND = ("Each value is on its column's own scale (below), never a percentile unless marked pNN; "
          "flagged:<flag>: a degenerate reply (docs/inputs.md), scored at the scale's worst value. Columns:")
RAW_NOTE = ("raw: a value no normalisation has put on a fixed scale (a log-likelihood, a perplexity, an SSREM "
            "part): compare it only between replies scored with the same model and settings.")


def cmd_examples(args: argparse.Namespace) -> int:
    """Run ``dialeval examples``; the exit status. Quiet by default: no loading bars, no progress;
    ``--verbose`` shows both, dialeval's progress from the start (:mod:`dialeval.core.quiet`)."""
    from dialeval.core.progress import silenced
    from dialeval.core.quiet import verbose_output

    with verbose_output() if args.verbose else silenced():
        return _examples(args)


def _scored(metric: str, items: list[dict], options: dict[str, Any]) -> ItemScores:
    """The metric's runner on the items (its scores, signature and flags), with progress per metric
    (``examples: fed: 8/8 items``)."""
    from dialeval.core.progress import Progress

    with Progress(len(items), f"examples: {metric}") as bar:
        scores = get_runner(metric)(items, **options)
        bar.update(len(items))
    return scores


def _examples(args: argparse.Namespace) -> int:
    items, _, _ = read_items(args.input)
    # every metric's example jobs (MetricSpec.example_jobs); a job whose model is missing is skipped
    # with the resolver's message
    jobs = [(spec.name, options) for spec in registry.specs() for options in spec.example_jobs
            if not args.metrics or spec.name in args.metrics]
    results: dict[str, Any] = {metric: {"scores": {}, "signatures": [], "skipped": []} for metric, _ in jobs}
    runs = _runs_read(jobs, items)
    for metric in _in_order(jobs, runs):
        loaded = held.mark()
        stored = _score_runs(metric, runs.get(metric, ()), items)
        for options in (o for m, o in jobs if m == metric):
            _score_job(results[metric], metric, options, items, stored)
        held.release(since=loaded)  # the models this metric loaded: no later job reads them (module docstring)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(examples_report(items, results))
    return 0


def _runs_read(jobs: Sequence[tuple[str, Mapping[str, Any]]], items: list[dict]) -> dict[str, list[dict[str, Any]]]:
    """Metric -> the options of its runs that the metrics of ``jobs`` which read others
    (``MetricSpec.reads_runs``: the combined metric) read from the score cache for ``items``."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for metric, options in jobs:
        reads_runs = registry.spec(metric).reads_runs
        for read, read_options in reads_runs(items, options) if reads_runs else ():
            if read_options not in runs.setdefault(read, []):
                runs[read].append(read_options)
    return runs


def _in_order(jobs: Sequence[tuple[str, Mapping[str, Any]]], runs: Mapping[str, Any]) -> list[str]:
    """The metrics to score, in the registry's order, those that read others last: every model is
    loaded once, for its own jobs and the runs read of it together."""
    names = [s.name for s in registry.specs() if s.name in runs or any(m == s.name for m, _ in jobs)]
    return sorted(names, key=lambda name: bool(registry.spec(name).reads))


def _score_runs(metric: str, runs: Sequence[dict[str, Any]], items: list[dict]) -> list[tuple[dict[str, Any], Any]]:
    """``metric``'s runs read by another metric, scored through the score cache (where that metric
    reads them): ``(options, entry)`` of each one scored; one that cannot be scored is left to the
    reader, which reports it."""
    from dialeval.models import ModelNotFoundError
    from dialeval.scoring.cache import scores_for

    stored = []
    for options in runs:
        try:
            stored.append((options, scores_for(metric, options, items, desc=f"examples: {metric}")))
        except (ModelNotFoundError, FileNotFoundError, ValueError):
            continue
    return stored


def _score_job(entry: dict[str, Any], metric: str, options: Mapping[str, Any], items: list[dict],
               stored: Sequence[tuple[dict[str, Any], Any]]) -> None:
    """One example job's scores, flags, percentiles and summary into ``entry``, or why it was skipped:
    a run in ``stored`` with the same options as the job (the runner's defaults filled in) gives
    its scores, the runner scores any other."""
    from dialeval.models import ModelNotFoundError

    same = [found for run_options, found in stored if _as_run(metric, run_options) == _as_run(metric, options)]
    if same:
        per_item, signature, flags = same[0]["per_item"], same[0]["signature"], same[0]["flags"]
    else:
        try:
            scores = _scored(metric, items, dict(options))
        except (ModelNotFoundError, FileNotFoundError) as e:
            entry["skipped"].append(str(e))
            return
        (per_item, signature), flags = scores, flags_of(scores, items)
    entry["scores"].update(per_item)
    entry["signatures"].append(signature)
    add_readings(entry, metric, options, items, per_item, flags)


def _as_run(metric: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the runner's defaults of the options not given: two jobs with equal runs score the same."""
    params = list(inspect.signature(get_runner(metric)).parameters.values())[1:]
    return {**{p.name: p.default for p in params if p.default is not p.empty}, **options}


def add_readings(entry: dict[str, Any], metric: str, options: Mapping[str, Any], items: Sequence[Mapping[str, Any]],
                 per_item: Mapping[str, list[float]], flags: Flags) -> None:
    """Beside ``entry["scores"]`` of one example job: per sub-score the items' ``flags``, their
    ``percentiles`` among human replies where a stored reference matches the job's options and holds
    the sub-score (a flagged item at 0; ``percentiles_among`` names the reference) and the ``summary``
    of :mod:`dialeval.core.results` (``mean``, ``flagged``, ``unflagged``, ``percentile``)."""
    from dialeval.scoring.human_reference import load_reference, reference_signature

    percentiles: dict[str, list[float | None]] = {}
    if registry.spec(metric).behaviour.scores:
        try:
            reference = load_reference(metric, options, any(it.get("references") for it in items))
            percentiles = reference.read(per_item, flags)
            entry.setdefault("percentiles_among", {})[reference.label] = reference_signature(reference)
        except ValueError:  # no reference of these options, a stale one, none of these sub-scores: no percentile
            pass
    readings = flag_summary(per_item, flags, directed(per_item, registry.spec(metric).scales()))
    means = percentile_means(percentiles)
    for sub, values in per_item.items():
        entry.setdefault("flags", {})[sub] = [list(f) for f in flags]
        if sub in percentiles:
            entry.setdefault("percentiles", {})[sub] = percentiles[sub]
        entry.setdefault("summary", {})[sub] = {"mean": mean(values), FLAGGED: readings[FLAGGED],
                                                "unflagged": readings.get(f"{sub}{UNFLAGGED}"),
                                                "percentile": means.get(f"{sub}{PERCENTILE}")}


def cell(value: float, flags: Sequence[str], percentile: float | None) -> str:
    """One item's cell: ``flagged:<flags>`` for a flagged reply (its value is the scale's worst, not a
    measurement), else the value and, where read, its percentile among human replies (``0.612 p71``)."""
    if flags:
        return "flagged:" + "+".join(flags)
    return fmt(value) + ("" if percentile is None else f" p{percentile:.0f}")


def examples_report(items: Sequence[Mapping[str, Any]], results: Mapping[str, Any]) -> str:
    """The table of ``dialeval examples`` (a row per item, a column per headline sub-score; below the
    items, each column's mean, mean over unflagged items, flagged count and mean percentile), then
    each column's scale and direction, the signatures, skipped jobs and the metrics' notes."""
    columns = [(m, s) for m, r in results.items() for s in registry.spec(m).headline or r["scores"] if s in r["scores"]]
    rows = [
        [it.get("id") or str(i + 1), it["response"][:40]]
        + [cell(results[m]["scores"][s][i], results[m]["flags"][s][i],
                (results[m].get("percentiles", {}).get(s) or [None] * len(items))[i]) for m, s in columns]
        for i, it in enumerate(items)
    ]
    summary = [results[m]["summary"][s] for m, s in columns]
    rows += [["", "mean"] + [fmt(x["mean"]) for x in summary],
             ["", "mean unflagged"] + ["-" if x["unflagged"] is None else fmt(x["unflagged"]) for x in summary],
             ["", "flagged"] + [str(x[FLAGGED]) for x in summary],
             ["", "mean percentile"] + ["-" if x["percentile"] is None else f"{x['percentile']:.1f}" for x in summary]]
    lines = [format_table(["id", "response"] + [f"{m}:{s}" for m, s in columns], rows), "", LEGEND]
    for m, s in columns:
        scale = registry.describe(m, s)
        lines.append(f"  {m}:{s}: {scale.range_text()}, {scale.direction_text()}{', raw' if scale.raw else ''}; "
                     f"{scale.meaning}")
    if any(registry.describe(m, s).raw for m, s in columns):
        lines.append(RAW_NOTE)
    among = {label for r in results.values() for label in r.get("percentiles_among", {})}
    if among:
        lines.append(f"pNN: the percentile among {'; '.join(sorted(among))} (100: better than every one; "
                     "a flagged reply at 0); where no stored reference matches, none is shown.")
    for metric, r in results.items():
        for line in r["signatures"] + [f"skipped: {reason}" for reason in r["skipped"]]:
            lines.append(f"{metric}: {line}")
    for metric, r in results.items():
        note = registry.spec(metric).example_note
        if note and r["signatures"] and (text := note(r["signatures"])):
            lines.append(f"{metric}: {text}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dialeval examples``."""
    p.add_argument("--input", type=Path, default=EXAMPLES)
    p.add_argument("--metrics", nargs="*", choices=sorted(RUNNERS), help="a subset of the metrics")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true",
                   help="show the models' loading bars and dialeval's progress on standard error (quiet by default)")


COMMAND = Command("examples", "score the example dialogues with every offline metric", add_arguments, cmd_examples)
