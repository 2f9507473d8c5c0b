"""GRADE's LoRA cross-encoder (the default since 2026-11-27) against the frozen-encoder model before it,
on the three GRADE human-judgment sets, from the saved benchmark results (no rescoring):

* pooled Spearman with the human ratings of each model, their difference and the one-sided Williams
  test that the new one is higher (:func:`dialeval.stats.correlation.williams_spearman`);
* Table 1's average of four (two dialogue models x Pearson/Spearman), the difference and its paired
  bootstrap interval (:func:`dialeval.grade.benchmark.versus_cosine`, the same resampling the
  benchmark uses against the untrained cosine).

    python benchmarks/grade_versus.py --save benchmarks/results/grade-cross-vs-frozen.md

Reads ``benchmarks/results/grade-<set>.json`` (the default) and ``benchmarks/results/grade-dailydialog/
grade-<set>.json`` (the frozen model; ``dialeval benchmark --metric grade --dataset grade-<set>
--option model=dialeval/grade-dailydialog --save ...`` rewrites them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scipy import stats

from dialeval.grade.benchmark import OURS, versus_cosine
from dialeval.grade.data import load_grade
from dialeval.stats.correlation import williams_spearman

RESULTS = Path(__file__).resolve().parent / "results"
SETS = ("convai2", "dailydialog", "empathetic")


def compare(name: str) -> dict:
    new = json.loads((RESULTS / f"grade-{name}.json").read_text())
    old = json.loads((RESULTS / "grade-dailydialog" / f"grade-{name}.json").read_text())
    items = load_grade(name)
    human = [it.score for it in items]
    a, b = new["scores"][OURS], old["scores"][OURS]
    pooled = [float(stats.spearmanr(x, human)[0]) for x in (a, b)]
    avg4 = versus_cosine(a, b, items)
    return {"set": f"grade-{name}", "n": len(items), "new": new["signature"], "old": old["signature"],
            "pooled_spearman": pooled, "williams_p": williams_spearman(a, b, human),
            "table1_avg4": [new["metrics"][OURS]["mean"]["table1_avg4"], old["metrics"][OURS]["mean"]["table1_avg4"]],
            "table1_avg4_difference": avg4}


def markdown(rows: list[dict]) -> str:
    lines = ["# GRADE: the LoRA cross-encoder (default) against the frozen-encoder model", "",
             "| set | n | pooled Spearman, cross / frozen | difference | Williams p (cross higher) | "
             "Table 1 avg of 4, cross / frozen | difference (95 % paired bootstrap) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        (p_new, p_old), (t_new, t_old), d = r["pooled_spearman"], r["table1_avg4"], r["table1_avg4_difference"]
        williams = "n/a" if r["williams_p"] is None else f"{r['williams_p']:.3f}"
        lines.append(f"| {r['set']} | {r['n']} | {p_new:.3f} / {p_old:.3f} | {p_new - p_old:+.3f} | {williams} | "
                     f"{t_new:.3f} / {t_old:.3f} | {d['delta']:+.3f} ({d['interval'][0]:+.3f} .. {d['interval'][1]:+.3f}) |")
    lines += ["", "Signatures:", *sorted({f"- `{r[k]}`" for r in rows for k in ("new", "old")}), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--save", type=Path, help="also write the Markdown (and .json beside it)")
    args = parser.parse_args()
    rows = [compare(name) for name in SETS]
    text = markdown(rows)
    print(text)
    if args.save:
        args.save.write_text(text)
        args.save.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
