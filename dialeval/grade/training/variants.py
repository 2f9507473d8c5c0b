"""GRADE's Table 3 ablations and the design sweep: heads trained from the same cached examples with
one choice changed, measured on DailyDialog validation only."""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

from dialeval.core.resources import cache_dir
from dialeval.core.training import STATE_FILE
from dialeval.grade.graph import GRAPH_FILE
from dialeval.grade.model import GradeConfig
from dialeval.grade.training.split import Split
from dialeval.grade.training.trainee import train_head


# variant -> (negatives, graph branch, hops K (0: no k-hop neighbour inputs), hop-scaled attention,
# other GradeConfig overrides)
ABLATIONS = {"full": ("paper", True, 2, True, {}), "no-graph": ("paper", False, 2, True, {}),
             "no-khop": ("paper", True, 0, True, {}), "no-hop-attention": ("paper", True, 2, False, {}),
             "1-hop": ("paper", True, 1, True, {}), "lexical-only": ("lexical", True, 2, True, {}),
             "embedding-only": ("embedding", True, 2, True, {}), "random-negatives": ("random", True, 2, True, {}),
             # dialeval's own: the GAT layer and FC0 before issue #18 (no V_l h_i, no ELU), the similarity skip
             "no-eq9-eq10": ("paper", True, 2, True, {"gat_self_term": False, "graph_out_elu": False}),
             "similarity-skip": ("paper", True, 2, True, {"similarity_skip": True})}


def run_ablations(args: argparse.Namespace, config: GradeConfig, splits: dict[str, Split], shared: Path) -> None:
    """Table 3: one graph-only / no-graph-only head per variant and seed, from the same cache."""
    from dataclasses import replace

    root = args.ablation_root or cache_dir() / "grade-ablations"
    for seed in range(args.ablations):
        for variant in args.ablation_variants:
            negatives, graph, hops, hop_attention, overrides = ABLATIONS[variant]
            folder = root / variant / f"seed{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            cfg = replace(config, neighbours=config.neighbours[:hops], hop_attention=hop_attention,
                          graph_file=str((shared / GRAPH_FILE).resolve()), **overrides)
            cfg.save(folder)
            shutil.copyfile(shared / "idf.json", folder / "idf.json")
            run_args = argparse.Namespace(**{**vars(args), "seed": seed, "negatives": negatives})
            state = {"args": {k: str(v) for k, v in vars(run_args).items()}, "variant": variant, "heads": {}}
            train, val = (splits["train"].with_hops(hops), splits["validation"].with_hops(hops))

            def save_state(state=state, folder=folder) -> None:
                (folder / STATE_FILE).write_text(json.dumps(state, indent=1))

            t = time.time()
            train_head(run_args, cfg, graph, train, val, state, folder, save_state)
            print(f"ablation {variant} seed {seed}: {time.time() - t:.0f} s", flush=True)


def parse_spec(spec: str) -> dict[str, Any]:
    """``"graph=1,skip=0,lr=1e-3,epochs=2"`` -> overrides of one design-sweep run (keys: graph, skip,
    lr, epochs, hops, hopatt, negatives, limit, udrop)."""
    known = {"graph": int, "skip": int, "lr": float, "epochs": float, "hops": int, "hopatt": int, "negatives": str,
             "limit": int, "udrop": float}
    out: dict[str, Any] = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        if key not in known or not value:
            raise ValueError(f"sweep spec {spec!r}: {part!r} is not key=value with a key of {sorted(known)}")
        out[key] = known[key](value)
    return out


def run_sweep(args: argparse.Namespace, config: GradeConfig, splits: dict[str, Split], root: Path) -> dict[str, Any]:
    """Design choices on DailyDialog *validation* ranking accuracy only: one head per ``--sweep``
    spec (:func:`parse_spec`) from the same cached examples, written to ``root/<spec>/``, the
    held-out accuracies collected in ``root/sweep.json`` (resumable: finished specs are skipped)."""
    from dataclasses import replace

    path = root / "sweep.json"
    done = json.loads(path.read_text()) if path.is_file() else {}
    for spec in args.sweep:
        if spec in done:
            continue
        o = parse_spec(spec)
        hops = o.get("hops", len(config.neighbours))
        cfg = replace(config, similarity_skip=bool(o.get("skip", config.similarity_skip)) and config.pair_encoding == "dual",
                      neighbours=config.neighbours[:hops], hop_attention=bool(o.get("hopatt", config.hop_attention)),
                      utterance_dropout=o.get("udrop", config.utterance_dropout))
        train = splits["train"].with_hops(hops)
        if "limit" in o:
            train = train.head(o["limit"])
        epochs = o.get("epochs", args.epochs or 1.0)
        run_args = argparse.Namespace(**{**vars(args), "lr": o.get("lr", args.lr), "resume": False,
                                         "negatives": o.get("negatives", args.negatives),
                                         "max_steps": max(1, round(epochs * train.n / args.batch_size))})
        folder = root / spec.replace("=", "").replace(",", "-")
        folder.mkdir(parents=True, exist_ok=True)
        cfg.save(folder)
        state: dict[str, Any] = {"heads": {}}
        t = time.time()
        train_head(run_args, cfg, bool(o.get("graph", 1)), train, splits["validation"].with_hops(hops), state, folder,
                   lambda: None)
        sub = next(iter(state["heads"].values()))
        done[spec] = {"heldout_accuracy": sub["heldout_accuracy"], "heldout_curve": sub["heldout_curve"],
                      "steps": sub["step"], "epochs": epochs, "train_contexts": train.n,
                      "minutes": round((time.time() - t) / 60, 2)}
        path.write_text(json.dumps(done, indent=1))
        print(f"sweep {spec}: {sub['heldout_accuracy']} ({done[spec]['minutes']} min)", flush=True)
    (root / "sweep.txt").write_text(format_sweep(done) + "\n")
    return done


def format_sweep(done: dict[str, Any]) -> str:
    """The design sweep as a table: held-out accuracy per kind of negative, their mean, the graph
    branch alone and the shuffled-graph Spearman (graph heads), per spec."""
    from dialeval.core.tables import fmt, format_table

    columns = ("lexical", "embedding", "random", "mean", "graph_alone", "shuffled_graph_spearman")
    rows = [[spec, f"{v['epochs']:g}", *(fmt(v["heldout_accuracy"].get(c)) for c in columns)] for spec, v in done.items()]
    return ("GRADE design sweep on DailyDialog validation (pairwise ranking accuracy of the true response against "
            "each kind of negative; graph_alone: utterance branch zeroed; shuffled_graph_spearman: own vs. another "
            "pair's keyword graph, all validation pairs)\n"
            + format_table(["spec", "epochs", *columns], rows))
