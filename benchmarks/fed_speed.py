"""Speed and exactness of :class:`dialeval.fed.FEDScorer` against the authors' plain FED loop.

The plain loop is the algorithm of the authors' ``fed.py``: for every follow-up of every quality,
tokenise ``conversation + " <eos> " + follow-up`` and run ``model(ids, labels=ids)`` on it alone
(no batching, no cache, repeated follow-ups scored again). ``FEDScorer`` (reference mode) gives the
same numbers from one prefix pass per conversation plus batched follow-ups.

Data: the first ``--n`` turn-level items of the FED data (``context`` lines "User: ..."/"System: ..."
plus ``response``, speaker prefixes removed). Model: a random-init GPT-2 (``--config small``: 6 layers,
768 wide, 12 heads, DialoGPT-small-sized; ``medium``: 24 layers, 1024 wide, 16 heads) with the tiny
test tokenizer, or ``--model smollm2-135m-instruct`` / a local model directory.

    python benchmarks/fed_speed.py --n 50
    python benchmarks/fed_speed.py --device cuda --config medium
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dialeval.data import load_fed  # noqa: E402
from dialeval.fed import QUALITIES_DIALOG, QUALITIES_TURN, FEDScorer, followups, score_name  # noqa: E402
from dialeval.lm import conversation_text, load_causal_lm  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50, help="number of turn-level conversations")
    parser.add_argument("--model", default=None, help="model name/dir (default: random-init GPT-2, --config)")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--level", choices=["turn", "dialog", "both"], default="turn")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    if args.model:
        model, tokenizer = load_causal_lm(args.model, device=args.device)
        name = args.model
    else:
        model, tokenizer = random_gpt2(args.config, args.device)
        name = f"random GPT-2 {args.config} ({CONFIGS[args.config]}, vocab {len(tokenizer)})"
    conversations = [item["turns"] for item in load_fed("turn")[: args.n]]
    levels = ["turn", "dialog"] if args.level == "both" else [args.level]
    fed = FEDScorer((model, tokenizer), device=args.device, batch_size=args.batch_size, mode="reference")
    eos = tokenizer.eos_token
    lengths = [len(tokenizer.encode(conversation_text(t, eos), add_special_tokens=False)) for t in conversations]

    fed.score(conversations[:1], level=args.level)  # warm-up, both paths
    plain_fed(model, tokenizer, conversations[0], levels, args.device)

    def timed(fn):
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = fn()
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return out, time.perf_counter() - start

    fast, fast_s = timed(lambda: fed.score(conversations, level=args.level))
    plain, plain_s = timed(lambda: [plain_fed(model, tokenizer, t, levels, args.device) for t in conversations])
    diff = max(abs(fast[f"{key}_scores"][i] - value) for i, row in enumerate(plain) for key, value in row.items())

    print(f"model: {name}; device: {args.device}; torch threads: {torch.get_num_threads()}")
    print(f"{len(conversations)} conversations, level {args.level}, ~{sum(lengths) / len(lengths):.0f} tokens each "
          f"(max {max(lengths)})")
    print(f"plain loop (authors' algorithm): {plain_s:8.2f} s")
    print(f"FEDScorer (prefix cache, batch {args.batch_size}): {fast_s:8.2f} s")
    print(f"speed-up: {plain_s / fast_s:.1f}x; max |score difference|: {diff:.2e}")


if __name__ == "__main__":
    main()
