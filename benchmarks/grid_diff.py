"""What moved between two runs of the meta-evaluation grid: the Spearman of every (set, job,
sub-score) cell present in both ``metaeval.json`` files, printed where it changed by more than
``--min`` (default 0.0005), with the number of items each was computed on.

    python benchmarks/grid_diff.py OLD/metaeval.json NEW/metaeval.json [--scores turn_overall,grade]

Used for the before/after tables of a policy change (``benchmarks/results/salad-flag.md``); the
old file comes from git (``git show <commit>:benchmarks/results/metaeval/metaeval.json``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def spearman_cells(path: Path) -> dict[tuple[str, str, str], tuple[float, int]]:
    """(set, job, sub-score) -> (Spearman, n) of every scored cell of a grid file."""
    cells = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for score, values in (cell.get("correlations") or {}).items():
            cells[(cell["set"], cell["job"], score)] = (values["spearman"], values["n"])
    return cells


def changed(old: dict, new: dict, minimum: float, scores: set[str] | None = None) -> list[str]:
    """Markdown rows of the cells whose Spearman moved by more than ``minimum``."""
    rows = []
    for key in sorted(old.keys() & new.keys()):
        (a, n_a), (b, n_b) = old[key], new[key]
        if abs(b - a) > minimum and (scores is None or key[2] in scores):
            rows.append(f"| {key[0]} | {key[1]}:{key[2]} | {a:.3f} ({n_a}) | {b:.3f} ({n_b}) | {b - a:+.3f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--min", type=float, default=0.0005, help="smallest change printed")
    parser.add_argument("--scores", default=None, help="comma-separated sub-scores to show (default: all)")
    args = parser.parse_args()
    rows = changed(spearman_cells(args.old), spearman_cells(args.new), args.min,
                   set(args.scores.split(",")) if args.scores else None)
    print("| set | job:score | before (n) | after (n) | change |\n| --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
