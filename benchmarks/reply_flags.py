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

from dialeval.core.degenerate import ECHO_N, copied_share, echoes, flag_counts, ngrams, reply_flags, words_of
from dialeval.data.corpora import dailydialog
from dialeval.registry import judgment_sets as sets
from dialeval.metaeval.behaviour.cases import dailydialog_cases
from dialeval.metaeval.behaviour.kinds import build

RESULTS = Path(__file__).resolve().parent / "results"
SUITE_KINDS = ("echo_last", "echo_own", "salad")
ECHO_KINDS = ("echo_last", "echo_own")
LENGTHS = ("3", "4", "5", "6", "7", "8-11", "12+")  # the by-length columns, in words
SPLITS = ("test", "validation", "train")


def echo_copy(context, reply: str) -> dict | None:
    """The reply as the former echo rule (``min_share=0``) catches it: its words, the largest share
    of a turn's words it copies (:func:`copied_share`, over the turns holding all its 3-grams) and
    whether the current rule flags it; ``None`` when the former rule does not flag it."""
    if not echoes(context, reply, min_share=0):
        return None
    words = words_of(reply)
    grams = set(ngrams(words, ECHO_N))
    share = max(copied_share(words_of(turn), grams) for turn in context
                if grams <= set(ngrams(words_of(turn), ECHO_N)))
    return {"reply": reply, "words": len(words), "share": round(float(share), 3),
            "flagged_now": bool(echoes(context, reply))}


def length_bucket(words: int) -> str:
    """The by-length column (:data:`LENGTHS`) of a reply of ``words`` (at least 3) words."""
    return str(words) if words < 8 else ("8-11" if words < 12 else "12+")


def human_sets() -> list[dict]:
    """Per human-judgment set: items, flag counts, flagged replies with their human percentile."""
    rows = []
    for name, load in sets().items():
        items = load()
        flags = [reply_flags(item.context, item.response) for item in items]
        ranks = (rankdata([item.score for item in items]) - 0.5) / len(items)
        flagged = [{"response": items[i].response, "flags": f, "human_percentile": round(100 * float(ranks[i]), 1)}
                   for i, f in enumerate(flags) if f]
        copies = [dict(copy, human_percentile=round(100 * float(ranks[i]), 1)) for i, item in enumerate(items)
                  if (copy := echo_copy(item.context, item.response))]
        rows.append({"set": name, "items": len(items), "counts": flag_counts(flags), "flagged": flagged,
                     "echo_copies": copies})
    return rows


def dailydialog_replies() -> list[dict]:
    """Per DailyDialog split: its replies (every turn after the first) and those the former echo rule catches."""
    rows = []
    for split in SPLITS:
        dialogues = dailydialog(split)
        copies = [copy for turns in dialogues for t in range(1, len(turns)) if (copy := echo_copy(turns[:t], turns[t]))]
        rows.append({"set": f"dailydialog-{split}", "items": sum(len(turns) - 1 for turns in dialogues),
                     "echo_copies": copies})
    return rows


def suite(n: int) -> dict:
    """On ``n`` DailyDialog test contexts: flags of the real replies and of the suite's echoes and salads."""
    cases = dailydialog_cases(n=n)
    replies = build(cases, names=SUITE_KINDS)
    out = {"contexts": n, "real": flag_counts(reply_flags(c.context, c.reply) for c in cases),
           "real_flagged": [c.reply for c in cases if reply_flags(c.context, c.reply)],
           "real_echo_copies": [dict(copy, case=i) for i, c in enumerate(cases) if (copy := echo_copy(c.context, c.reply))]}
    for kind in SUITE_KINDS:
        built = [(i, c, r) for i, (c, r) in enumerate(zip(cases, replies[kind])) if r is not None]
        out[kind] = {"built": len(built), "counts": flag_counts(reply_flags(c.context, r) for _, c, r in built)}
        if kind in ECHO_KINDS:  # echoes the former rule flagged and the current one does not (issue 54, item 6c)
            out[kind]["echo_before"] = sum(bool(echoes(c.context, r, min_share=0)) for _, c, r in built)
            out[kind]["unflagged_now"] = [i for i, c, r in built
                                          if echoes(c.context, r, min_share=0) and not echoes(c.context, r)]
    return out


def echo_section(rows: list[dict], on_suite: dict, corpus: list[dict]) -> list[str]:
    """The echo rule before and after: counts per set, by reply length, and the replies listed."""
    buckets = LENGTHS
    real = {"set": f"dailydialog-test suite cases ({on_suite['contexts']})", "items": on_suite["contexts"],
            "echo_copies": on_suite["real_echo_copies"]}
    every = rows + [real] + corpus

    def cell(copies: list[dict], bucket: str | None = None) -> str:
        chosen = [c for c in copies if bucket is None or length_bucket(c["words"]) == bucket]
        return f"{len(chosen)} -> {sum(c['flagged_now'] for c in chosen)}" if chosen else "0"

    lines = ["## The echo rule before and after (issue 54)", "",
             "Before: every word 3-gram of the reply occurs in one earlier turn. Now also: the reply covers at "
             "least four in five of that turn's words, or has at least 8 words (`dialeval/core/degenerate.py`). "
             "Cells: replies flagged `echo` before -> now, by the reply's length in words (`\w+` runs: "
             "`doesn't` is 2). DailyDialog rows below the suite's: every turn after the first of each split, "
             "with the turns before it as its context.", "",
             "| set | replies | echo | " + " | ".join(f"{b} words" for b in buckets) + " |",
             "|---|---|---|" + "---|" * len(buckets)]
    lines += [f"| {row['set']} | {row['items']} | {cell(row['echo_copies'])} | "
              + " | ".join(cell(row["echo_copies"], b) for b in buckets) + " |" for row in every]
    for kind in ECHO_KINDS:
        found = on_suite[kind]
        lines.append(f"| suite's {kind} ({on_suite['contexts']} contexts) | {found['built']} | "
                     f"{found['echo_before']} -> {found['counts'].get('echo', 0)} | "
                     + " | ".join("" for _ in buckets) + " |")
    unflagged = {kind: on_suite[kind]["unflagged_now"] for kind in ECHO_KINDS}
    lines += ["", "The suite's echoes the former rule flagged and the current one does not: "
              + ", ".join(f"{kind} {len(cases)}" for kind, cases in unflagged.items())
              + " (each copies a whole turn: it covers all of the turn's words).", ""]
    parts = [c for row in corpus for c in row["echo_copies"] if c["share"] < 1]
    if parts:
        common = [c for c in parts if c["words"] < 8]
        lines += [f"DailyDialog, all splits: {sum(len(r['echo_copies']) for r in corpus)} replies of "
                  f"{sum(r['items'] for r in corpus)} flagged before, "
                  f"{sum(c['share'] == 1 for r in corpus for c in r['echo_copies'])} of them whole copies of a turn "
                  f"and {len(parts)} a part of one; the parts copy at most a share of "
                  f"{max(c['share'] for c in parts):.2f} of the turn's words and those under 8 words have at most "
                  f"{max(c['words'] for c in common)} words; longer: "
                  + ("; ".join(f"{c['words']} words, share {c['share']:.2f}" for c in parts if c["words"] >= 8) or "none")
                  + ".", ""]
    lines += ["Replies flagged `echo` before (words, share of the turn's words it copies, flagged now; "
              "human percentile where rated):", ""]
    for row in every:
        if row["set"] == "dailydialog-train":
            continue  # 180 replies: counted above, listed in the JSON
        for c in sorted(row["echo_copies"], key=lambda c: (c["words"], c["share"])):
            rated = f", human percentile {c['human_percentile']:.0f}" if "human_percentile" in c else ""
            lines.append(f"- {row['set']}: `{c['reply']}` ({c['words']} words, share {c['share']:.2f}, "
                         f"{'still echo' if c['flagged_now'] else 'not an echo now'}{rated})")
    return lines + [""]


def markdown(rows: list[dict], on_suite: dict, corpus: list[dict]) -> str:
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
    return "\n".join(lines + [""] + echo_section(rows, on_suite, corpus))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=900, help="DailyDialog test contexts (at most 918)")
    args = parser.parse_args()
    rows, on_suite, corpus = human_sets(), suite(args.contexts), dailydialog_replies()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reply-flags.json").write_text(json.dumps({"human_sets": rows, "suite": on_suite,
                                                          "dailydialog": corpus}, indent=1) + "\n")
    (RESULTS / "reply-flags.md").write_text(markdown(rows, on_suite, corpus))
    print(markdown(rows, on_suite, corpus))


if __name__ == "__main__":
    main()
