"""Which FULL variant should be the default with the offline stand-in? (issues 32 and 33)

A criterion that reads no human rating: the behavioural suite (:mod:`dialeval.metaeval.behaviour`)
on held-out DailyDialog *validation* contexts, every variant of :data:`dialeval.full.scorer.VARIANTS`
from one pass per item and text (:meth:`FULLScorer.score_all`) with the default model. For each
variant, the share of contexts where the real reply beats each kind FULL declares (echoes, salad,
generic replies, another dialogue's reply) and the standardized change of the meaning controls. The
chosen variant is the one whose worst declared kind has the highest share, among those that keep
the controls within 0.5 SD (all, when none does). Its Spearman on the FED sets is read from
``benchmarks/results/full-fed-<level>.json`` (``dialeval benchmark --metric full --dataset
fed-turn|fed-dialog``), beside FED's default on the same base, after the choice.

    python benchmarks/full_variants.py --n 100    # writes benchmarks/results/full-variants.md/.json
    python benchmarks/full_variants.py --n 100 --model dialeval/gemma3-dialogue --suffix=-gemma3-dialogue
        # another base: full-variants-gemma3-dialogue.*, reading full-fed-<level>-gemma3-dialogue.json
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from tqdm.auto import tqdm

from dialeval import registry
from dialeval.full.runner import full_scorer
from dialeval.full.scorer import VARIANTS
from dialeval.metaeval.behaviour.cases import dailydialog_cases
from dialeval.metaeval.behaviour.checks import best_by_worst_kind, check_control, check_kind
from dialeval.metaeval.behaviour.kinds import build
from dialeval.metaeval.behaviour.report import control_cell, kind_cell
from dialeval.metaeval.behaviour.suite import REAL

RESULTS = Path(__file__).resolve().parent / "results"
CHUNK = 25  # replies per scoring call (progress)


def variant_scores(n: int, split: str, model: str | None = None) -> dict[str, dict[str, list]]:
    """variant -> reply set (``real``, kinds, controls) -> per-case score (``None``: not built), with
    ``model`` (default: FULL's default model)."""
    cases = dailydialog_cases(n, 0, split)
    replies = {REAL: [c.reply for c in cases], **build(cases, 0, registry.spec("full").behaviour.declared)}
    scorer = full_scorer(model, 32, None, 50, "float32")
    out: dict[str, dict[str, list]] = {v: {} for v in VARIANTS}
    with tqdm(total=sum(sum(r is not None for r in texts) for texts in replies.values()), desc="full variants",
              unit="reply") as bar:
        for name, texts in replies.items():
            built = [i for i, text in enumerate(texts) if text is not None]
            for v in VARIANTS:
                out[v][name] = [None] * len(cases)
            for start in range(0, len(built), CHUNK):
                rows = built[start:start + CHUNK]
                scored = scorer.score_all([list(cases[i].context) for i in rows], [texts[i] for i in rows])
                for v, result in scored.items():
                    for i, value in zip(rows, result["full_scores"]):
                        out[v][name][i] = value
                bar.update(len(rows))
    return out


def checks(scores: dict[str, list]) -> dict[str, list]:
    behaviour = registry.spec("full").behaviour
    real = scores[REAL]
    return {"kinds": [check_kind(k, real, scores[k], True, True) for k in behaviour.must_catch["full"]],
            "controls": [check_control(c, real, scores[c], True) for c in behaviour.controls["full"]]}


def human(variant: str, suffix: str = "") -> dict[str, float | None]:
    """Spearman of ``variant`` on fed-turn and fed-dialog from the stored FULL benchmark files
    (``full-fed-<level><suffix>.json``)."""
    out = {}
    for level in ("turn", "dialog"):
        path = RESULTS / f"full-fed-{level}{suffix}.json"
        rows = json.loads(path.read_text())["variants"] if path.is_file() else {}
        out[f"fed-{level}"] = rows.get(variant, {}).get("overall", {}).get("spearman")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="DailyDialog validation contexts")
    parser.add_argument("--model", help="default: FULL's default model")
    parser.add_argument("--suffix", default="", help="of the output and of the FED-set files read, e.g. --suffix=-gemma3-dialogue")
    args = parser.parse_args()
    output = RESULTS / f"full-variants{args.suffix}"
    scores = variant_scores(args.n, "validation", args.model)
    found = {v: checks(s) for v, s in scores.items()}
    chosen = best_by_worst_kind(found)
    behaviour = registry.spec("full").behaviour
    kinds, controls = behaviour.must_catch["full"], behaviour.controls["full"]
    lines = [f"| variant | {' | '.join(kinds)} | {' | '.join(controls)} | fed-turn | fed-dialog |",
             "| --- " * (3 + len(kinds) + len(controls)) + "|"]
    for v, c in found.items():
        rho = human(v, args.suffix)
        lines.append(f"| {v}{' (chosen)' if v == chosen else ''} | " + " | ".join(map(kind_cell, c["kinds"])) + " | "
                     + " | ".join(map(control_cell, c["controls"])) + " | "
                     + " | ".join("-" if r is None else f"{r:.3f}" for r in rho.values()) + " |")
    text = ("# FULL's variants on the behavioural suite (DailyDialog validation)\n\n"
            f"`python benchmarks/full_variants.py --n {args.n}"
            + (f" --model {args.model} --suffix={args.suffix}" if args.model else "")
            + f"`: {args.n} DailyDialog validation contexts, model `{args.model or 'the default'}`, every variant "
            "from one pass; shares of contexts where the real reply scores strictly higher (pass "
            ">= 0.90), controls as standardized mean change (pass within +-0.5). Chosen without human ratings: the "
            f"variant whose worst declared kind is best, among those whose controls pass: **{chosen}**. The FED-set "
            f"Spearman columns are read afterwards from `benchmarks/results/full-fed-<level>{args.suffix}.json`.\n\n"
            + "\n".join(lines) + "\n")
    output.with_suffix(".md").write_text(text, encoding="utf-8")
    output.with_suffix(".json").write_text(json.dumps({
        "n": args.n, "split": "validation", "model": args.model, "chosen": chosen,
        "checks": {v: {k: [asdict(x) for x in xs] for k, xs in c.items()} for v, c in found.items()},
        "human": {v: human(v, args.suffix) for v in found}}, indent=1) + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
