"""Would pointwise mutual information make holistic coherence catch echoes? (issue 32)

Holistic coherence (Pang et al. 2020, Eq. 1) is the likelihood of the reply given the context,
which rewards replies that are likely anyway and echoes of the context. PMI subtracts what the
reply's likelihood owes to itself:

    PMI(r; q) = log P(r | q) - log P(r) = coherence_raw - fluency_raw     (both summed over r's tokens)

measured here, not offered as an option of the metric: the bundled LM scores the suite's real
replies and their context-relevance kinds and meaning controls (:mod:`dialeval.metaeval.behaviour`) with
``reduction="sum"`` (a fixed cutoff, since only the raw values are read), through the score cache,

    python benchmarks/behaviour_pmi.py --n 100     # writes benchmarks/results/behaviour-pmi.md/.json
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict
from pathlib import Path

from dialeval.metaeval.behaviour.cases import dailydialog_cases
from dialeval.metaeval.behaviour.checks import check_control, check_kind
from dialeval.metaeval.behaviour.kinds import build
from dialeval.metaeval.behaviour.report import control_cell, kind_cell
from dialeval.metaeval.behaviour.suite import REAL, score_replies
from dialeval.core.spec import MEANING_CONTROLS, RELEVANCE_KINDS

RESULTS = Path(__file__).resolve().parent / "results"
OPTIONS = {"aspects": ["coherence", "fluency"], "reduction": "sum", "cutoff": -1000.0}


def pmi(coherence: list, fluency: list) -> list:
    """``coherence - fluency`` per case (NaN where either is; ``None`` where the reply was not built)."""
    return [None if c is None or f is None else (math.nan if math.isnan(c) or math.isnan(f) else c - f)
            for c, f in zip(coherence, fluency)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--output", type=Path, default=RESULTS / "behaviour-pmi")
    args = parser.parse_args()
    cases = dailydialog_cases(args.n, 0)
    replies = {REAL: [c.reply for c in cases], **build(cases, 0, RELEVANCE_KINDS + MEANING_CONTROLS)}
    scored, signatures = score_replies("holistic", cases, replies, OPTIONS)
    rows, found = [], {}
    for name, values in {"coherence_raw (sum)": lambda s: s["coherence_raw"],
                         "PMI": lambda s: pmi(s["coherence_raw"], s["fluency_raw"])}.items():
        real = [math.nan if v is None else v for v in values(scored[REAL])]
        kinds = [check_kind(k, real, values(scored[k]), declared=True) for k in RELEVANCE_KINDS]
        controls = [check_control(c, real, values(scored[c]), declared=True) for c in MEANING_CONTROLS]
        found[name] = {"kinds": [asdict(k) for k in kinds], "controls": [asdict(c) for c in controls]}
        rows.append(f"| {name} | {args.n} | " + " | ".join(map(kind_cell, kinds)) + " | "
                    + " | ".join(map(control_cell, controls)) + " |")
    table = "\n".join([f"| holistic coherence | N | {' | '.join(RELEVANCE_KINDS)} | {' | '.join(MEANING_CONTROLS)} |",
                       "| --- " * (2 + len(RELEVANCE_KINDS) + len(MEANING_CONTROLS)) + "|", *rows])
    text = ("# Holistic coherence as PMI: the behavioural suite\n\n"
            f"PMI(r; q) = log P(r | q) - log P(r) = coherence_raw - fluency_raw, both summed over the reply's tokens "
            f"(`python benchmarks/behaviour_pmi.py --n {args.n}`; the share of contexts where the real reply scores "
            "strictly higher, pass at >= 0.90; controls: standardized mean change, pass within +-0.5; "
            "dialeval.metaeval.behaviour).\n\n"
            f"{table}\n\nSignature: `{' / '.join(signatures)}`\n")
    args.output.with_suffix(".md").write_text(text, encoding="utf-8")
    args.output.with_suffix(".json").write_text(json.dumps({"n": args.n, "options": OPTIONS, "signatures": signatures,
                                                            "checks": found}, indent=2) + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
