"""Speed and exactness of :class:`dialeval.fed.scorer.FEDScorer` against the authors' plain FED loop.

The plain loop is the algorithm of the authors' ``fed.py``: for every follow-up of every quality,
tokenise ``conversation + " <eos> " + follow-up`` and run ``model(ids, labels=ids)`` on it alone
(no batching, no cache, repeated follow-ups scored again). ``FEDScorer`` (reference mode) gives the
same numbers from one prefix pass per conversation plus the distinct follow-ups packed against its
key/value cache. Beside the measured ratio the script prints the ideal one from token counts:
tokens the loop feeds through the model (sum over follow-ups of ``len(prefix) + len(f)``) over tokens
the fast path feeds (``len(prefix) + sum over distinct f of len(f)``); every fed token also goes
through the LM head, whose cost grows with the vocabulary (49,152 for SmolLM2). It also times
``score_all``: all three variants (paper, conditional, reference) from one pass.

Data: the first ``--n`` items of the FED data at ``--level``. Model: ``--model`` (default the local
SmolLM2-135M-Instruct, real 49k vocabulary) or ``--random small|medium``: a random-init GPT-2
(6 layers, 768 wide / 24 layers, 1024 wide) with the 400-token test tokenizer.

    OMP_NUM_THREADS=1 python benchmarks/fed_speed.py --n 10 --threads 1 --save benchmarks/results/fed-speed-smollm2.json
    python benchmarks/fed_speed.py --device cuda --random medium
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
sys.path.insert(0, str(ROOT / "tests"))

from dialeval.fed.data import load_fed  # noqa: E402
from dialeval.fed.scorer import QUALITIES_DIALOG, QUALITIES_TURN, FEDScorer, followups, score_name  # noqa: E402
from dialeval.core.lm import LOCAL_LM, conversation_text, load_causal_lm  # noqa: E402

CONFIGS = {"small": dict(n_layer=6, n_embd=768, n_head=12), "medium": dict(n_layer=24, n_embd=1024, n_head=16)}


def random_gpt2(config: str, device: str):
    from tiny_lm import tiny_tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    special = dict(bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    cfg = GPT2Config(vocab_size=len(tokenizer), n_positions=1024, **special, **CONFIGS[config])
    return GPT2LMHeadModel(cfg).to(device).eval(), tokenizer


@torch.no_grad()
def plain_fed(model, tokenizer, turns: list[str], levels: list[str], device: str) -> dict[str, float]:
    """The authors' loop: one full forward pass with ``labels=ids`` per follow-up."""
    eos = tokenizer.eos_token
    conversation = conversation_text(turns, eos)
    scores = {}
    for level in levels:
        for quality in QUALITIES_TURN if level == "turn" else QUALITIES_DIALOG:
            mean_loss = {}
            for polarity, texts in followups(level, quality).items():
                losses = []
                for followup in texts:
                    ids = tokenizer.encode(conversation + " " + eos + " " + followup, add_special_tokens=False)
                    x = torch.tensor([ids], device=device)
                    losses.append(model(x, labels=x).loss.item())
                mean_loss[polarity] = sum(losses) / max(len(losses), 1)
            scores[score_name(level, quality)] = mean_loss["negative"] - mean_loss["positive"]
    return scores


def qualities(level: str) -> list[tuple[str, str]]:
    levels = ["turn", "dialog"] if level == "both" else [level]
    return [(lv, q) for lv in levels for q in (QUALITIES_TURN if lv == "turn" else QUALITIES_DIALOG)]


def token_counts(tokenizer, turns: list[str], level: str) -> tuple[int, int]:
    """(tokens the plain loop feeds, tokens the reference-mode fast path feeds) for one conversation."""
    eos = tokenizer.eos_token

    def n(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    prefix = n(conversation_text(turns, eos) + " " + eos)
    every = [f for lv, q in qualities(level) for fs in followups(lv, q).values() for f in fs]
    return sum(prefix + n(" " + f) for f in every), prefix + sum(n(" " + f) for f in dict.fromkeys(every))


def timed(fn, device: str):
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10, help="number of FED conversations")
    parser.add_argument("--model", default=LOCAL_LM, help=f"model name/dir (default {LOCAL_LM})")
    parser.add_argument("--random", choices=sorted(CONFIGS), help="a random-init GPT-2 of this size instead")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--level", choices=["turn", "dialog", "both"], default="turn")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--save", metavar="FILE.json", help="also write the numbers as JSON")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.random:
        model, tokenizer = random_gpt2(args.random, args.device)
        name = f"random GPT-2 {args.random} ({CONFIGS[args.random]})"
    else:
        model, tokenizer = load_causal_lm(args.model, device=args.device)
        name = args.model
    data_level = "dialog" if args.level == "dialog" else "turn"
    conversations = [item["turns"] for item in load_fed(data_level)[: args.n]]
    levels = ["turn", "dialog"] if args.level == "both" else [args.level]
    fed = FEDScorer((model, tokenizer), device=args.device, batch_size=args.batch_size, mode="reference")
    loop_tokens, fast_tokens = map(sum, zip(*(token_counts(tokenizer, t, args.level) for t in conversations)))

    fed.score(conversations[:1], level=args.level)  # warm-up, both paths
    plain_fed(model, tokenizer, conversations[0], levels, args.device)
    # Conversation by conversation, the three timings interleaved, so that a change of machine load
    # during the run (a shared CPU) affects all three alike.
    plain_s = fast_s = all_s = diff = 0.0
    for turns in conversations:
        fast, seconds = timed(lambda t=turns: fed.score([t], level=args.level), args.device)
        fast_s += seconds
        all_s += timed(lambda t=turns: fed.score_all([t], level=args.level), args.device)[1]
        plain, seconds = timed(lambda t=turns: plain_fed(model, tokenizer, t, levels, args.device), args.device)
        plain_s += seconds
        diff = max([diff] + [abs(fast[f"{key}_scores"][0] - value) for key, value in plain.items()])
    result = {
        "model": name, "vocab": len(tokenizer), "device": args.device, "threads": torch.get_num_threads(),
        "n": len(conversations), "level": args.level, "batch_size": args.batch_size,
        "plain_s": plain_s, "fast_reference_s": fast_s, "fast_all_variants_s": all_s,
        "measured_ratio": plain_s / fast_s, "loop_tokens": loop_tokens, "fast_tokens": fast_tokens,
        "ideal_ratio": loop_tokens / fast_tokens, "max_abs_diff": diff,
    }
    print(f"model: {name} (vocabulary {len(tokenizer)}); device: {args.device}; torch threads: {result['threads']}")
    print(f"{len(conversations)} FED {data_level}-level conversations, qualities of level {args.level}")
    print(f"plain loop (authors' algorithm):            {plain_s:8.2f} s  ({loop_tokens} tokens fed)")
    print(f"FEDScorer reference (prefix cache, batch {args.batch_size}): {fast_s:8.2f} s  ({fast_tokens} tokens fed)")
    print(f"FEDScorer all three variants, one pass:     {all_s:8.2f} s")
    print(f"speed-up: measured {plain_s / fast_s:.1f}x, ideal from token counts {loop_tokens / fast_tokens:.1f}x; "
          f"max |score difference|: {diff:.2e}")
    if args.save:
        Path(args.save).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
