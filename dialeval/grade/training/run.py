"""One GRADE training run as ``training/grade.py`` parses its options (see its docstring for the
method, the design choices and the costs): :func:`run` prepares the cached inputs
(:mod:`~dialeval.grade.training.prepare`), then trains the two heads (or, by option, only measures
checkpoints, runs the design sweep or the Table 3 ablations) and writes the report and the card."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Callable

from dialeval.core.resources import cache_dir
from dialeval.core.training import STATE_FILE, load_state, prepare_run
from dialeval.grade.training.accuracy import checkpoint_heldout, cosine_accuracy
from dialeval.grade.training.examples import default_encoder
from dialeval.grade.training.prepare import build_splits, prepare
from dialeval.grade.training.trainee import train_head
from dialeval.grade.training.variants import run_ablations, run_sweep


def work_folder(args: argparse.Namespace, encoder_name: str) -> Path:
    """``--work``, by default ``$DIALEVAL_CACHE/grade-train/<encoder>-t<context turns>[-tiny]``."""
    return args.work or cache_dir() / "grade-train" / (
        f"{Path(encoder_name).name}-t{args.context_turns}" + ("-tiny" if args.tiny else ""))


def run(args: argparse.Namespace, write_card: Callable[[Path], Any]) -> Path:
    """The run ``args`` asks for (:func:`dialeval.grade.training.prepare.check_arguments` has passed);
    ``write_card(output)`` writes the card once both heads are trained. Returns the output folder."""
    started = time.time()
    encoder_name = args.encoder or default_encoder(args.tiny)
    output = prepare_run(args, args.output)
    work = work_folder(args, encoder_name)
    work.mkdir(parents=True, exist_ok=True)
    setup = prepare(args, encoder_name, output)
    config = setup.config
    state = load_state(output, args.resume, args, lambda: dict(setup.facts))
    splits = build_splits(args, setup, work, state)
    if args.prepare_graphs:
        print("examples and graphs cached", flush=True)
        return output
    state["contexts"] = {"train": splits["train"].n, "validation": splits["validation"].n}
    if splits["validation"].frozen:
        state["untrained_cosine_heldout"] = cosine_accuracy(splits["validation"])
        print(f"untrained cosine: held-out accuracy {state['untrained_cosine_heldout']}", flush=True)
    if args.epochs:
        args.max_steps = max(1, round(args.epochs * splits["train"].n / args.batch_size))
        state["epochs"] = args.epochs
    state["max_steps"] = args.max_steps

    before = state.get("total_minutes", 0.0)  # wall time of the runs this one resumes

    def save_all() -> None:
        state["total_minutes"] = round(before + (time.time() - started) / 60, 2)
        (output / STATE_FILE).write_text(json.dumps(state, indent=1))

    if args.heldout:
        examples = json.loads((work / f"validation-{args.validation}-s{args.data_seed}-examples.json").read_text())
        for folder in args.heldout:
            for graph_head in (True, False):
                print(f"held-out {folder} graph={graph_head}: {checkpoint_heldout(folder, examples, graph_head)}", flush=True)
        return output
    if args.sweep:
        run_sweep(args, config, splits, args.sweep_root or output / "sweep")
        return output
    if args.ablations:
        run_ablations(args, config, splits, output)
        return output
    heads = [True, False]
    if args.graph_only:
        heads = [True]
    if args.no_graph_only:
        heads = [False]
    for graph_branch in heads:
        train_head(args, config, graph_branch, splits["train"], splits["validation"], state, output, save_all)
    save_all()
    write_card(output)
    print(f"done in {(time.time() - started) / 60:.1f} min -> {output}", flush=True)
    return output
