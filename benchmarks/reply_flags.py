"""What the context flags of the degenerate-response policy catch (issue 32): how many replies of
every human-judgment set :func:`dialeval.core.degenerate.reply_flags` flags (and where the humans
rated them), and, on DailyDialog test contexts, how many real replies against how many of the
behavioural suite's echoes and salads. Text only, no model: seconds.

    python benchmarks/reply_flags.py     # writes benchmarks/results/reply-flags.md and .json

A flagged reply gets its metric's worst value, so a flag on a real reply is a cost: the human
percentile of the flagged replies (the share of the set's replies the humans rated lower, ties
halved) says whether the people thought them poor too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scipy.stats import rankdata

from dialeval.core.degenerate import flag_counts, reply_flags
from dialeval.registry import judgment_sets as sets
from dialeval.metaeval.behaviour.cases import dailydialog_cases
from dialeval.metaeval.behaviour.kinds import build

RESULTS = Path(__file__).resolve().parent / "results"
SUITE_KINDS = ("echo_last", "echo_own", "salad")


def human_sets() -> list[dict]:
    """Per human-judgment set: items, flag counts, flagged replies with their human percentile."""
    rows = []
    for name, load in sets().items():
        items = load()
        flags = [reply_flags(item.context, item.response) for item in items]
        ranks = (rankdata([item.score for item in items]) - 0.5) / len(items)
        flagged = [{"response": items[i].response, "flags": f, "human_percentile": round(100 * float(ranks[i]), 1)}
                   for i, f in enumerate(flags) if f]
        rows.append({"set": name, "items": len(items), "counts": flag_counts(flags), "flagged": flagged})
    return rows


def suite(n: int) -> dict:
    """On ``n`` DailyDialog test contexts: flags of the real replies and of the suite's echoes and salads."""
    cases = dailydialog_cases(n=n)
    replies = build(cases, names=SUITE_KINDS)
    out = {"contexts": n, "real": flag_counts(reply_flags(c.context, c.reply) for c in cases),
           "real_flagged": [c.reply for c in cases if reply_flags(c.context, c.reply)]}
    for kind in SUITE_KINDS:
        built = [(c, r) for c, r in zip(cases, replies[kind]) if r is not None]
        out[kind] = {"built": len(built), "counts": flag_counts(reply_flags(c.context, r) for c, r in built)}
    return out


def markdown(rows: list[dict], on_suite: dict) -> str:
    flag_names = ("empty", "no_words", "repetitive", "echo", "salad")
    lines = ["# The context flags: what they catch", "",
             "`python benchmarks/reply_flags.py` (text only). A flagged reply gets its metric's worst value "
             "(`dialeval/core/degenerate.py`).", "",
             f"## DailyDialog test, {on_suite['contexts']} contexts (the behavioural suite's cases, seed 0)", "",
             "| replies | built | " + " | ".join(flag_names) + " |", "|---|---|" + "---|" * len(flag_names)]
    lines.append(f"| real | {on_suite['contexts']} | " + " | ".join(str(on_suite["real"].get(f, 0)) for f in flag_names) + " |")
    for kind in SUITE_KINDS:
        counts = on_suite[kind]["counts"]
        lines.append(f"| {kind} | {on_suite[kind]['built']} | " + " | ".join(str(counts.get(f, 0)) for f in flag_names) + " |")
    lines += ["", "Real replies flagged: " + "; ".join(f"`{r}`" for r in on_suite["real_flagged"]), "",
              "## Human-judgment sets", "",
              "| set | items | " + " | ".join(flag_names) + " | mean human percentile of the flagged |",
              "|---|---|" + "---|" * (len(flag_names) + 1)]
    for row in rows:
        percentiles = [f["human_percentile"] for f in row["flagged"]]
        mean = f"{sum(percentiles) / len(percentiles):.0f}" if percentiles else "-"
        lines.append(f"| {row['set']} | {row['items']} | " + " | ".join(str(row["counts"].get(f, 0)) for f in flag_names)
                     + f" | {mean} |")
    lines += ["", "Salads among them (reply, human percentile):", ""]
    lines += [f"- {row['set']}: `{f['response']}` ({f['human_percentile']:.0f})"
              for row in rows for f in row["flagged"] if f["flags"] == ["salad"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=900, help="DailyDialog test contexts (at most 918)")
    args = parser.parse_args()
    rows, on_suite = human_sets(), suite(args.contexts)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reply-flags.json").write_text(json.dumps({"human_sets": rows, "suite": on_suite}, indent=1) + "\n")
    (RESULTS / "reply-flags.md").write_text(markdown(rows, on_suite))
    print(markdown(rows, on_suite))


if __name__ == "__main__":
    main()
