"""CPU cost per FED item of a language model against FED's default, in the same process (issue 56).

Each model (a name, in float32, or ``NAME:int8``) scores the same items with
:class:`dialeval.fed.scorer.FEDScorer` at turn level (the default variant), after one item of
warm-up that is not timed; the row gives the wall seconds and the process CPU seconds per item and
the ratio to the first model's, so a loaded machine slows both sides alike. The models are measured
one after the other and each is freed before the next loads (a 1.5B model is 7.1 GB in float32).

int8 is the ``precision="int8"`` option (:func:`dialeval.core.precision.apply_precision`: per-row
dynamic int8 ``nn.Linear``, in place, so the 1.5B base is held once). ``fed-item-cost-qwen-int8.json``
was measured before the option quantised per row and in place, with one scale per tensor applied
here in place, so its signature does not name int8.

Items: the first ``--n`` DailyDialog test items of ``benchmarks/throughput.py`` (a dialogue cut at a
seeded random turn, up to 6 context turns). Beside the rows, an estimate of each model's time on the
FED sets, which are not scored: the measured seconds scaled by the sets' conversation tokens over
these items' (FED's text, the model's tokenizer; 375 turn-level items, 125 whole dialogues). The
follow-ups cost the same per item whatever its length, so for a set of longer conversations (the
dialogues) the estimate is an upper bound.

    OMP_NUM_THREADS=1 python benchmarks/fed_item_cost.py dialeval/gemma3-dialogue qwen2.5-coder-1.5b-instruct \\
        --n 8 --save benchmarks/results/fed-item-cost-qwen.json     # + qwen2.5-coder-1.5b-instruct:int8

The table is saved after each row, so a run stopped by the machine keeps what it measured (the
1.5B model's int8 step, beside the other engineers' processes, was twice killed by the
out-of-memory killer at 9.8 GB; it needs ~11 GB).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dialeval.core.lm import conversation_text, load_causal_lm  # noqa: E402
from dialeval.fed.data import load_fed  # noqa: E402
from dialeval.fed.runner import conversations_of  # noqa: E402
from dialeval.fed.scorer import FEDScorer  # noqa: E402
from throughput import items  # noqa: E402


def fed_tokens(tokenizer, conversations: list[list[str]]) -> int:
    """Tokens of ``conversations`` in FED's text (eos-joined turns)."""
    return sum(len(tokenizer(conversation_text(turns, tokenizer.eos_token), add_special_tokens=False)["input_ids"])
               for turns in conversations)


def measure(name: str, precision: str, conversations: list[list[str]], fed_sets: dict[str, list[list[str]]]) -> dict:
    """One model's seconds per item (wall and CPU) on ``conversations`` and its FED-set estimate."""
    model, tokenizer = load_causal_lm(name)
    scorer = FEDScorer((model, tokenizer), precision=precision)
    scorer.score(conversations[:1], progress=False)  # warm-up, not timed
    wall, cpu = time.perf_counter(), time.process_time()
    result = scorer.score(conversations, progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    tokens = fed_tokens(tokenizer, conversations)
    per_item = wall / len(conversations)
    estimate = {level: round(wall * fed_tokens(tokenizer, convs) / tokens / 60, 1) for level, convs in fed_sets.items()}
    row = {"model": name, "precision": precision, "weights": getattr(model, "dialeval_weights_id", name),
           "items": len(conversations), "seconds_per_item": round(per_item, 3),
           "cpu_seconds_per_item": round(cpu / len(conversations), 3), "tokens_per_item": tokens / len(conversations),
           "fed_sets_minutes_estimate": estimate, "turn_overall": [round(v, 4) for v in result["turn_overall_scores"]],
           "signature": result["signature"]}
    del scorer, model, tokenizer, result
    gc.collect()
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="names for load_causal_lm, NAME:int8 for int8 Linear layers; "
                                                  "the first is the reference of the ratios")
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args(argv)
    conversations = conversations_of(items(args.n))
    fed_sets = {level: [list(it["turns"]) for it in load_fed(level)] for level in ("turn", "dialog")}
    print(f"FED (turn level, default variant) on {len(conversations)} DailyDialog test items, "
          f"torch threads {torch.get_num_threads()}")
    print(f"{'model':<36} {'precision':<9} {'s/item':>7} {'cpu s/item':>10} {'ratio':>6} {'FED sets (min, est.)':>22}")
    rows = []
    for model in args.models:
        name, _, precision = model.partition(":")
        row = measure(name, precision or "float32", conversations, fed_sets)
        first = rows[0] if rows else row
        row["ratio"] = round(row["seconds_per_item"] / first["seconds_per_item"], 2)
        row["cpu_ratio"] = round(row["cpu_seconds_per_item"] / first["cpu_seconds_per_item"], 2)
        rows.append(row)
        estimate = "turn {turn}, dialog {dialog}".format(**row["fed_sets_minutes_estimate"])
        print(f"{name:<36} {row['precision']:<9} {row['seconds_per_item']:>7.2f} {row['cpu_seconds_per_item']:>10.2f} "
              f"{row['ratio']:>6.2f} {estimate:>22}", flush=True)
        if args.save:
            args.save.write_text(json.dumps({"items": f"the first {args.n} DailyDialog test items of benchmarks/throughput.py",
                                             "threads": torch.get_num_threads(), "rows": rows}, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
