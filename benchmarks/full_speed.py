"""Speed of FULL (:class:`dialeval.full.scorer.FULLScorer`) per item: its fast path against the plain
per-follow-up loop, and against FED on the same base model, in one run.

* FULL fast: one prefix pass per conversation, the follow-ups packed on its key/value cache
  (decoder-only) or decoded as one batch against one encoder pass (encoder-decoder).
* FULL plain: the released algorithm's shape, one full forward pass of conversation + follow-up per
  follow-up (``share_prefix=False``); the scores must equal the fast path's (relative 1e-6).
* FED: :class:`dialeval.fed.scorer.FEDScorer` at turn level in its default variant, on the same
  loaded model (its 8 turn-level qualities, ~30 distinct follow-ups after one prefix pass).

Data: the first ``--n`` rated responses of FED's turn-level set (``fed-turn``, read through the
registry), each scored after its context. The three timings are interleaved item by item, so a
change of load on a shared CPU affects all of them alike.

    OMP_NUM_THREADS=1 python benchmarks/full_speed.py --n 20 --threads 1 --save benchmarks/results/full-speed.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dialeval import registry  # noqa: E402
from dialeval.core.lm import load_causal_lm  # noqa: E402
from dialeval.fed.scorer import FEDScorer  # noqa: E402
from dialeval.full.runner import default_full_model  # noqa: E402
from dialeval.full.scorer import FULLScorer  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="number of fed-turn items")
    parser.add_argument("--model", default=None, help="model name/dir (default: FULL's default model as it resolves now)")
    parser.add_argument("--variant", default="paper")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--save", metavar="FILE.json", help="also write the numbers as JSON (and the table beside it as .txt)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    name = args.model or default_full_model()
    model, tokenizer = load_causal_lm(name, encoder_decoder=True)
    pair = (model, tokenizer)
    items = registry.judgment_sets()["fed-turn"]()[: args.n]
    fast = FULLScorer(pair, batch_size=args.batch_size, variant=args.variant)
    plain = FULLScorer(pair, batch_size=args.batch_size, variant=args.variant, share_prefix=False)
    fed = None if fast.seq2seq else FEDScorer(pair, batch_size=args.batch_size)

    first = items[0]
    fast.score([first.context], [first.response])  # warm-up
    fast_s = plain_s = fed_s = 0.0
    worst = 0.0
    for item in items:
        a, seconds = timed(lambda it=item: fast.score([it.context], [it.response]))
        fast_s += seconds
        b, seconds = timed(lambda it=item: plain.score([it.context], [it.response]))
        plain_s += seconds
        x, y = a["full_scores"][0], b["full_scores"][0]
        worst = max(worst, abs(x - y) / max(1.0, abs(y)))
        if fed is not None:
            fed_s += timed(lambda it=item: fed.score([list(it.context) + [it.response]], level="turn"))[1]
    n = len(items)
    result = {
        "model": fast.model_name, "device": "cpu", "threads": torch.get_num_threads(), "n": n,
        "variant": args.variant, "batch_size": args.batch_size,
        "full_fast_s_per_item": fast_s / n, "full_plain_s_per_item": plain_s / n,
        "fed_s_per_item": fed_s / n if fed is not None else None,
        "plain_over_fast": plain_s / fast_s, "fed_over_full": fed_s / fast_s if fed is not None else None,
        "max_relative_diff_fast_vs_plain": worst,
    }
    lines = [
        f"model: {fast.model_name}; torch threads: {result['threads']}; {n} fed-turn items; FULL variant {args.variant}",
        f"FULL fast path (prefix once, follow-ups packed): {result['full_fast_s_per_item']:.3f} s per item",
        f"FULL plain loop (one forward per follow-up):      {result['full_plain_s_per_item']:.3f} s per item "
        f"({result['plain_over_fast']:.2f}x the fast path)",
    ]
    if fed is not None:
        lines.append(f"FED (turn level, default variant, same model):  {result['fed_s_per_item']:.3f} s per item "
                     f"({result['fed_over_full']:.2f}x FULL's fast path)")
    lines.append(f"largest relative score difference fast vs plain: {worst:.1e}")
    print("\n".join(lines))
    if args.save:
        Path(args.save).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        Path(args.save).with_suffix(".txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
