"""The grid half of issue 55's rule for ``precision="auto"``: how far each grid cell moves when a
metric runs in a reduced precision instead of float32.

A metric may declare a precision for ``auto`` (``AUTO_PRECISIONS`` in its runner) only where the
per-item Spearman against float32 is >= 0.999 (``benchmarks/precision.py``) *and* no cell of the
meta-evaluation grid (every set, every sub-score) moves by more than :data:`GRID_RULE`. This script
reads two grids of the same sets, one run in float32 and one with ``--precision P``, both from an
empty score cache on one machine:

    dialeval benchmark --all --output-dir F32                                  # float32, every job
    dialeval benchmark --all --metrics grade usl --precision bfloat16 --output-dir BF16
    python benchmarks/precision_grid.py F32/metaeval.json BF16/metaeval.json --out benchmarks/results/precision-grid

and writes per metric the cells compared, the largest move of a Spearman (and its cell) and whether
the rule holds, with the CPU's flags. ``--update`` merges into an existing ``OUT.json`` (one reduced
grid per command). ``tests/test_precision.py`` checks that every declared precision has a row here
that meets the rule, and one in ``precision.json`` that meets the per-item rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from throughput import machine  # noqa: E402

GRID_RULE = 0.005  # the largest move of a grid cell's Spearman that auto allows


def reduced_cells(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(set, job, sub-score) -> {metric, precision, spearman, n} of a grid file's scored cells; the
    precision as the cell ran (its options' ``precision``; float32 where none)."""
    cells = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        precision = (cell.get("options") or {}).get("precision") or "float32"
        for score, values in (cell.get("correlations") or {}).items():
            cells[(cell["set"], cell["job"], score)] = {"metric": cell["metric"], "precision": precision,
                                                        "spearman": values["spearman"], "n": values["n"]}
    return cells


def compare(reference: Path, reduced: Path) -> dict[str, dict[str, Any]]:
    """Per (metric, precision) of the reduced grid's cells: the cells compared with the float32 grid's,
    the largest absolute move of a Spearman, that cell, and whether :data:`GRID_RULE` holds. A cell
    on another number of items than float32's is a ``ValueError`` (the two grids must score the same
    items)."""
    base, other = reduced_cells(reference), reduced_cells(reduced)
    out: dict[str, dict[str, Any]] = {}
    for key, cell in sorted(other.items()):
        if cell["precision"] == "float32":
            continue
        if key not in base or base[key]["precision"] != "float32":
            raise ValueError(f"{reference} has no float32 cell {key} to compare {reduced}'s with")
        if base[key]["n"] != cell["n"]:
            raise ValueError(f"cell {key}: {base[key]['n']} items in float32, {cell['n']} in {cell['precision']}")
        move = abs(cell["spearman"] - base[key]["spearman"])
        row = out.setdefault(cell["metric"], {}).setdefault(
            cell["precision"], {"cells": 0, "largest_move": 0.0, "cell": None, "met": True})
        row["cells"] += 1
        if move >= row["largest_move"]:
            row.update(largest_move=round(move, 6), cell=f"{key[0]} x {key[1]}:{key[2]}",
                       float32=round(base[key]["spearman"], 4), reduced=round(cell["spearman"], 4))
        row["met"] = row["largest_move"] <= GRID_RULE
    return out


def markdown(report: dict[str, Any]) -> str:
    """The report as a markdown table, the commands and the CPU above it."""
    flags = ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in report["machine"]["flags"].items())
    lines = ["# Grid cells under a reduced precision against float32 (issue 55)", "",
             f"The rule for `auto`: no cell's Spearman moves by more than {GRID_RULE} (with the per-item rule of "
             "`precision.md`). Written by:", ""]
    lines += [f"    {command}" for command in report["commands"]]
    lines += ["", f"CPU: {report['machine']['model']}, torch {report['machine']['torch']}. Flags: {flags}.", "",
              "| metric | precision | cells | largest move | at (set x job:sub-score) | float32 | reduced | grid rule |",
              "|---|---|---|---|---|---|---|---|"]
    for metric, rows in sorted(report["metrics"].items()):
        for precision, row in sorted(rows.items()):
            lines.append(f"| {metric} | {precision} | {row['cells']} | {row['largest_move']:.4f} | {row['cell']} | "
                         f"{row['float32']:.4f} | {row['reduced']:.4f} | {'met' if row['met'] else 'no'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path, help="the float32 grid's metaeval.json")
    parser.add_argument("reduced", type=Path, help="the same sets' grid run with --precision")
    parser.add_argument("--out", help="write OUT.md and OUT.json (default: print the markdown)")
    parser.add_argument("--update", action="store_true", help="merge into an existing OUT.json")
    args = parser.parse_args()
    command = "python benchmarks/precision_grid.py " + " ".join(sys.argv[1:])
    report = {"rule": GRID_RULE, "machine": machine(), "commands": [command], "metrics": compare(args.reference, args.reduced)}
    if args.out and args.update and Path(args.out + ".json").is_file():
        old = json.loads(Path(args.out + ".json").read_text(encoding="utf-8"))
        report["commands"] = old["commands"] + [command]
        for metric, rows in old["metrics"].items():
            report["metrics"][metric] = {**rows, **report["metrics"].get(metric, {})}
    if not args.out:
        print(markdown(report))
        return
    Path(args.out + ".json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    Path(args.out + ".md").write_text(markdown(report), encoding="utf-8")


if __name__ == "__main__":
    main()
