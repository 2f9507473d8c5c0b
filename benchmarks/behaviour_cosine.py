"""The untrained baseline on the behavioural suite: an encoder's cosine of the context and the reply.

SSREM and GRADE learn on top of frozen sentence encoders. Before training, the cosine of the mean-pooled,
L2-normalised embeddings of the last three context turns (joined with spaces) and of the reply is already
a context-relevance score; this script puts it through the suite's kinds (:mod:`dialeval.metaeval.behaviour`)
so that a learned metric can be read beside the baseline it is built on, and an encoder judged before a
corpus is encoded with it. As in the metrics, a reply the context flags (:func:`dialeval.core.degenerate.reply_flags`:
echo, salad, empty, ...) gets the worst score. Shares of contexts where the real reply scores strictly
higher, 95 % Wilson intervals (:func:`dialeval.metaeval.behaviour.checks.check_kind`):

    python benchmarks/behaviour_cosine.py --split validation --output benchmarks/results/behaviour-cosine-validation
    python benchmarks/behaviour_cosine.py --split test --output benchmarks/results/behaviour-cosine-test
"""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict
from pathlib import Path

from dialeval.core.degenerate import reply_flags
from dialeval.metaeval.behaviour.cases import dailydialog_cases
from dialeval.metaeval.behaviour.checks import check_kind
from dialeval.metaeval.behaviour.kinds import build

from behaviour_subscores import report  # noqa: E402  (benchmarks/ is the script's folder)

KINDS = ("echo_last", "echo_own", "salad", "generic", "other_reply")
CONTEXT_TURNS = 3


def encoders() -> dict:
    """The frozen sentence encoders dialeval ships offline: MiniLM-L6 (SSREM's option) and all-mpnet-base-v2
    (GRADE's encoder)."""
    from dialeval.ssrem.encoders import MINILM, MPNET, SentenceEncoder

    return {"all-MiniLM-L6-v2": lambda: SentenceEncoder(MINILM),
            "all-mpnet-base-v2": lambda: SentenceEncoder(MPNET, batch_size=32)}


def cosine_shares(split: str, n: int, seed: int = 0) -> dict:
    cases = dailydialog_cases(n, seed, split)
    replies = build(cases, seed, KINDS)
    rows = {}
    for name, make in encoders().items():
        encoder = make()
        contexts = encoder.encode([" ".join(case.context[-CONTEXT_TURNS:]) for case in cases])

        def cosine(texts: list) -> list:
            vectors = encoder.encode([text or "" for text in texts])
            return [math.nan if text is None or reply_flags(list(case.context), text) else float(c @ v)
                    for case, text, c, v in zip(cases, texts, contexts, vectors)]

        real = cosine([case.reply for case in cases])
        rows[name] = [asdict(check_kind(kind, real, [None if reply is None else value for reply, value
                                                     in zip(replies[kind], cosine(replies[kind]))]))
                      for kind in KINDS]
    return {"split": split, "n": n, "seed": seed, "context_turns": CONTEXT_TURNS, "rows": rows}


def markdown(result: dict) -> str:
    lines = [f"# The untrained encoder cosine on the behavioural suite (DailyDialog {result['split']})", "",
             f"`benchmarks/behaviour_cosine.py`: {result['n']} contexts, seed {result['seed']}; cosine of the last "
             f"{result['context_turns']} turns and the reply, a flagged reply the worst. Share of contexts where the "
             "real reply scores strictly higher [95 % Wilson interval].", "",
             "| encoder | " + " | ".join(KINDS) + " |", "| --- | " + " | ".join("---" for _ in KINDS) + " |"]
    for name, checks in result["rows"].items():
        lines.append(f"| {name} | " + " | ".join(f"{c['share']:.2f} [{c['ci_low']:.2f}, {c['ci_high']:.2f}]"
                                                for c in checks) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="validation", choices=("validation", "test"))
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--output", type=Path, help="writes OUTPUT.md and OUTPUT.json (else prints the table)")
    args = parser.parse_args(argv)
    report(cosine_shares(args.split, args.n), markdown, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
