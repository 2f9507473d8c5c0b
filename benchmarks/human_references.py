"""What human replies score: the stored human references of the bundled defaults (issue 32 item 4),
summarised in benchmarks/results/human-references.md and .json.

    dialeval behaviour --reference --all     # (re)build hub/<folder>/dialeval_percentiles.json
    python benchmarks/human_references.py    # this summary of them

For every metric with a stored reference (:func:`dialeval.scoring.human_reference.load_reference`:
refused when stale) and each judged sub-score: the number of human replies and the scores at their
10th, 25th, 50th, 75th and 90th percentiles (numpy's linear interpolation), i.e. the score a
reply needs to be read at that percentile, with the reference's signature.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dialeval import registry
from dialeval.scoring.human_reference import load_reference, reference_path, reference_signature

RESULTS = Path(__file__).resolve().parent / "results"
LEVELS = (10, 25, 50, 75, 90)


def summary() -> list[dict]:
    """One row per metric and judged sub-score."""
    rows = []
    for metric in registry.METRICS:
        if not registry.spec(metric).behaviour.scores:
            continue
        reference = load_reference(metric)
        for score, values in reference.scores.items():
            rows.append({"metric": metric, "score": score, "n": len(values),
                         "quantiles": {str(q): float(np.percentile(values, q)) for q in LEVELS},
                         "higher_is_better": registry.describe(metric, score).higher_is_better,
                         "file": str(reference_path(metric).relative_to(reference_path(metric).parents[2])),
                         "signature": reference_signature(reference), "scored_as": reference.signature})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["# What human replies score", "",
             "The stored human references of the bundled defaults: the real replies of the behavioural suite's "
             "DailyDialog test contexts (seed 0), scored with each metric's default. A score's percentile "
             "(`percentiles=True`, `dialeval score --percentiles`, `dialeval compare --percentiles`, the demo) is its "
             "mid-rank among these. Columns: the score at the human replies' 10th ... 90th percentile. "
             "Written by `python benchmarks/human_references.py`.", "",
             "| metric | sub-score | n | 10th | 25th | 50th | 75th | 90th | stored in |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        cells = " | ".join(f"{row['quantiles'][str(q)]:.3g}" for q in LEVELS)
        lines.append(f"| {row['metric']} | {row['score']} | {row['n']} | {cells} | `{row['file']}` |")
    lines += ["", "Signatures:", ""] + [f"- {row['metric']} {row['score']}: `{row['signature']}`; scored as "
                                         f"`{row['scored_as']}`" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    rows = summary()
    (RESULTS / "human-references.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "human-references.md").write_text(markdown(rows), encoding="utf-8")
    print(markdown(rows))


if __name__ == "__main__":
    main()
