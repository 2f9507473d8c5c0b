"""FED (and holistic coherence) on Gemma 3 in the grouped layout against the path it took before (issue 55).

FED's default model (the Gemma-3-270M dialogue adapter ``dialeval/gemma3-dialogue``, merged into its
base) has sliding-window layers (512 positions). Before, :meth:`dialeval.core.lm.LMScorer.grouped_logprobs`
refused its grouped layout for such a model and scored one context at a time (its key/value cache,
the follow-ups packed after it); now a context whose prefix plus longest follow-up fits the window
goes into rows of 512 tokens under one block mask (:mod:`dialeval.core.grouped_layout`) and a longer
one takes the one-at-a-time path. Two variants of one scorer over the same loaded model, float32:

* ``before``: the scorer's ``_packs_groups`` answers ``False`` (the old rule for a sliding-window
  model), so every group goes the way it went before;
* ``after``: as it runs now.

``--job fed`` (the default): :class:`dialeval.fed.scorer.FEDScorer` as ``run_fed`` scores items (turn
level, the default variant). ``--job holistic-coherence``: holistic coherence's raw log-likelihoods
(:meth:`dialeval.holistic.scorer.LikelihoodScorer.raw` with its default LM,
``dialeval/gemma3-dailydialog``), whose ``pair_logprobs`` takes the grouped layout too now (a query
and its reply, a group of one continuation; before, query + reply right-padded in length batches).

One process, one thread (``torch.set_num_threads(1)``); the items are the first ``--items``
DailyDialog test items of ``benchmarks/throughput.py``; the timed runs go round the variants chunk
by chunk (each chunk through both before the next, best of ``--repeats`` per chunk, summed), so a busy
CPU slows both alike. The scorers are called directly: the score cache (``dialeval.scoring.cache``,
which only the runners read) serves nothing. Fidelity per sub-score against ``before``: per-item
Spearman and largest absolute difference (``benchmarks/precision.py``'s ``fidelity``).

    OMP_NUM_THREADS=1 python benchmarks/grouped_layout.py --items 32 --out benchmarks/results/grouped-layout
    OMP_NUM_THREADS=1 python benchmarks/grouped_layout.py --job holistic-coherence --items 256 --chunk 64 \\
        --out benchmarks/results/grouped-layout-holistic
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Callable

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dialeval  # noqa: E402,F401  (quiets third-party bars before the models load)
from dialeval.core.grouped_layout import sliding_window  # noqa: E402
from dialeval.core.lm import load_causal_lm  # noqa: E402
from dialeval.core.results import split_result  # noqa: E402
from precision import interleaved, write_report  # noqa: E402
from throughput import items, machine  # noqa: E402

VARIANTS = ("before", "after")
Maker = Callable[[], tuple[Any, Callable[[list[dict]], dict[str, list[float]]]]]


def fed_job() -> tuple[Any, Maker]:
    """FED's default LM, and a maker of ``(LMScorer, items -> sub-scores)``, one per variant."""
    from dialeval.fed.runner import conversations_of, default_dialogue_model
    from dialeval.fed.scorer import FEDScorer

    lm, tokenizer = load_causal_lm(default_dialogue_model())

    def make() -> tuple[Any, Callable]:
        scorer = FEDScorer((lm, tokenizer))
        return scorer.scorer, lambda batch: split_result(scorer.score(
            conversations_of(batch), progress=False))[0]
    return lm, make


def coherence_job() -> tuple[Any, Maker]:
    """Holistic's default LM, and a maker of ``(LMScorer, items -> raw coherence)``, one per variant."""
    from dialeval.holistic.runner import default_holistic_model
    from dialeval.holistic.scorer import LikelihoodScorer

    lm, tokenizer = load_causal_lm(default_holistic_model())

    def make() -> tuple[Any, Callable]:
        scorer = LikelihoodScorer((lm, tokenizer))
        return scorer.scorer, lambda batch: {"coherence_raw": scorer.raw(
            "coherence", [it["response"] for it in batch], [it["context"] for it in batch], progress=False)}
    return lm, make


JOBS = {"fed": fed_job, "holistic-coherence": coherence_job}
WHAT = {"fed": "FED at turn level in its default variant (a group: a context and its follow-ups)",
        "holistic-coherence": "holistic coherence's raw log-likelihoods (a group: a query and its reply)"}
BEFORE = {"fed": "every context one at a time: key/value cache, follow-ups packed after it",
          "holistic-coherence": "query + reply right-padded in length batches"}


def markdown(result: dict[str, Any]) -> str:
    """The report: machine, command, the two variants' speed and fidelity against ``before``."""
    m = result["machine"]
    flags = ", ".join(f"{f}: {'yes' if v else 'no'}" for f, v in m["flags"].items())
    job, before, after = result["job"], result["variants"]["before"], result["variants"]["after"]
    lines = [
        f"# {job} on Gemma 3 in the grouped layout (issue 55)", "",
        "Written by:", "", f"    {result['command']}", "",
        f"CPU: {m['model']} ({m['cpu']}), torch {m['torch']} (capability {m['torch_cpu_capability']}), 1 thread. "
        f"Flags: {flags}. Load average (1 min) {result['load_before'][0]} before the timed runs, "
        f"{result['load_after'][0]} after (2 cores, shared).", "",
        f"Model: `{result['model']}` ({job}'s default; sliding window {result['window']}), float32. Items: the first "
        f"{result['items']} DailyDialog test items of `benchmarks/throughput.py`, {WHAT[job]}, the scorer called "
        f"directly (no score cache). Speed: chunks of {result['chunk']} items, each through both variants in turn "
        f"(one process), the best of {result['repeats']} per chunk, summed. `before`: the path taken on Gemma 3 "
        f"before ({BEFORE[job]}); `after`: the grouped layout (prefixes with their continuations as token tries in "
        "rows of 512 under a block mask) for every group whose prefix plus longest continuation fits the window: "
        f"{after['packed']} of {after['packed'] + after['alone']} groups here, the other {after['alone']} one at a time.",
        "",
        "| variant | items/s | vs before | CPU time vs before | min per-item Spearman (sub-score) | largest abs. diff |",
        "|---|---|---|---|---|---|",
    ]
    for v in VARIANTS:
        row = result["variants"][v]
        worst = min(row["fidelity"].items(), key=lambda kv: kv[1]["spearman"])[0]
        lines.append(f"| {v} | {row['items_per_s']:.3f} | {row['speed_vs_before']:.2f}x | {row['cpu_speed_vs_before']:.2f}x "
                     f"| {row['min_spearman']:.4f} ({worst}) | {row['max_abs_diff']:.3g} |")
    lines += ["", f"Seconds: before {before['seconds']:.1f}, after {after['seconds']:.1f}. "
              "Per sub-score numbers: the `.json` beside this file."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", choices=sorted(JOBS), default="fed")
    parser.add_argument("--items", type=int, default=32, help="DailyDialog test items (FED: 64 take about 13 minutes here)")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per chunk and variant (the best counts)")
    parser.add_argument("--chunk", type=int, default=8, help="items timed per variant in turn")
    parser.add_argument("--out", help="write OUT.md and OUT.json (default: print the markdown)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    info = machine()
    print(info, file=sys.stderr)
    lm, make = JOBS[args.job]()
    made = {v: make() for v in VARIANTS}
    made["before"][0]._packs_groups = lambda: False  # the rule for a sliding-window model until now
    routed = {"packed": 0, "alone": 0}  # the after's groups, by path (counted on its last repeat)
    after = made["after"][0]
    grouped_forward, one_group = after._grouped_forward, after.prefix_and_continuation_logprobs

    def count_packed(rows: list, *rest: Any) -> Any:
        routed["packed"] += sum(map(len, rows))
        return grouped_forward(rows, *rest)

    def count_alone(*given: Any) -> Any:
        routed["alone"] += 1
        return one_group(*given)

    after._grouped_forward, after.prefix_and_continuation_logprobs = count_packed, count_alone
    batch = items(args.items)
    load = [round(x, 2) for x in os.getloadavg()]
    rows = interleaved({v: made[v][1] for v in VARIANTS}, batch, args.chunk, args.repeats, "before", "before",
                       on_repeat=lambda: routed.update(packed=0, alone=0))
    rows["after"].update(routed)
    command = "OMP_NUM_THREADS=1 python benchmarks/grouped_layout.py " + " ".join(argv if argv is not None else sys.argv[1:])
    result = {"command": command, "job": args.job, "machine": info, "model": lm.dialeval_weights_id,
              "window": sliding_window(lm.config), "items": len(batch), "repeats": args.repeats, "chunk": args.chunk,
              "load_before": load, "load_after": [round(x, 2) for x in os.getloadavg()], "variants": rows}
    write_report(result, markdown(result), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
