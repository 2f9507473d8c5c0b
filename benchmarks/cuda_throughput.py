"""The LM core's grouped scoring on a GPU (issue 34, item 5): tokens/s of FED's and FULL's real work
against the same model's plain forward, for several batch budgets, and parity with the CPU.

FED and FULL score through :meth:`dialeval.core.lm.LMScorer.grouped_logprobs`: each context with its
follow-ups is one group, whole groups are laid out in rows of up to 512 tokens (a block mask keeps
them apart) and rows go through the model in batches of up to ``batch_tokens`` tokens. On the 2-core
CPU one row per forward is fastest (``benchmarks/throughput.py``); a GPU wants far larger batches,
and this script measures how large.

Two steps, because the GPU machine has neither SmolLM2's weights nor DailyDialog:

1. ``--dump FILE`` (here, with the bundled SmolLM2 dialogue model): the token ids of the groups FED's
   and FULL's bundled defaults build for the first ``--n`` DailyDialog test items
   (``benchmarks/throughput.py``'s items), and the model's config; nothing is scored.
2. ``--groups FILE`` (on the GPU): a model of that config with random weights (the speed of a forward
   does not depend on the values of the weights), in float32 as the library loads it, then for FED's
   and FULL's groups and every budget of ``--budgets``: the seconds of one pass over all groups (best
   of ``--repeats`` after a warm-up), tokens/s (every token of every group: prefixes and follow-ups),
   items/s, and the ratio to the plain forward's best tokens/s over a few shapes; and the largest
   relative difference between the GPU's and the CPU's follow-up log-probabilities on the first
   ``--parity`` groups (float32 on both, TF32 off; ``--dtype bfloat16`` casts the GPU's model).

    python benchmarks/cuda_throughput.py --dump .device/groups.json --n 512
    python benchmarks/cuda_throughput.py --groups .device/groups.json --json > throughput-cuda.json
    python benchmarks/cuda_throughput.py --groups .device/groups.json --end-to-end .device/tokenizer

``--end-to-end`` times FED's and FULL's scorers themselves on the dumped items (the random model of
the dump's config with SmolLM2's real tokenizer, copied from ``hub/smollm2-dialogue``), and their
per-item scores on the GPU against the CPU's.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from forward_speed import plain_speed, sync  # noqa: E402

PLAIN_SHAPES = ((1, 512), (8, 512), (32, 512), (64, 512), (128, 512))
BUDGETS = (512, 2048, 8192, 32768, 131072)


def dump(path: Path, n: int) -> None:
    """Write the groups of FED's and FULL's bundled defaults on ``n`` DailyDialog test items."""
    import dialeval.core.lm as lm
    from dialeval.scoring.runners import get_runner
    from throughput import items

    batch = items(n)
    captured: dict[str, list] = {}
    current: list[str] = []
    config: dict[str, Any] = {}

    def record(self: Any, groups: Any, prefix_logprob: bool = False, *args: Any, **kwargs: Any) -> list:
        groups = [(list(p), [list(c) for c in conts]) for p, conts in groups]
        captured.setdefault(current[0], []).extend(groups)
        config.update(self.model.config.to_dict())
        return [((0.0, len(p) - 1) if prefix_logprob else None, [(0.0, len(c)) for c in conts]) for p, conts in groups]

    lm.LMScorer.grouped_logprobs = record  # build the groups, score nothing
    for metric in ("fed", "full"):
        current[:] = [metric]
        get_runner(metric)(batch)
    path.parent.mkdir(parents=True, exist_ok=True)
    texts = [{"context": it["context"], "response": it["response"]} for it in batch]
    path.write_text(json.dumps({"items": n, "config": config, "groups": captured, "texts": texts}))
    print(f"{path}: " + ", ".join(f"{k} {len(v)} groups" for k, v in captured.items()), file=sys.stderr)


def random_model(config: dict[str, Any], device: str, dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model(**{k: v for k, v in config.items() if k not in ("transformers_version",)})
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg).float().eval().to(device=device, dtype=dtype)


class _Tokenizer:
    """What :class:`LMScorer` reads from a tokenizer: the pad and eos ids."""

    def __init__(self, pad: int) -> None:
        self.pad_token_id = self.eos_token_id = pad


def timed(scorer: Any, groups: list, budget: int, repeats: int) -> float:
    scorer.grouped_logprobs(groups, batch_tokens=budget)  # warm up (kernels, allocator)
    best = float("inf")
    for _ in range(repeats):
        sync(scorer.device)
        began = time.perf_counter()
        scorer.grouped_logprobs(groups, batch_tokens=budget)
        sync(scorer.device)
        best = min(best, time.perf_counter() - began)
    return best


def measure(data: dict[str, Any], device: str, budgets: list[int], repeats: int, parity: int,
            dtype: str = "float32") -> dict[str, Any]:
    from dialeval.core.lm import LMScorer

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = random_model(data["config"], device, getattr(torch, dtype))
    vocab = model.config.vocab_size
    scorer = LMScorer(model, _Tokenizer(data["config"].get("pad_token_id") or 0), device=device)
    out: dict[str, Any] = {"device": torch.cuda.get_device_name() if device.startswith("cuda") else platform.machine(),
                           "torch": torch.__version__, "items": data["items"], "dtype": dtype,
                           "plain": plain_speed(model, vocab, repeats, PLAIN_SHAPES), "metrics": {}}
    plain = out["plain"]["tokens_per_s"]
    cpu_scorer = None  # the same random model on the CPU, for the parity check (built once)
    for metric, groups in data["groups"].items():
        tokens = sum(len(p) + sum(len(c) for c in conts) for p, conts in groups)
        rows = []
        for budget in budgets:
            seconds = timed(scorer, groups, budget, repeats)
            rows.append({"batch_tokens": budget, "seconds": seconds, "tokens_per_s": tokens / seconds,
                         "items_per_s": data["items"] / seconds, "ratio": tokens / seconds / plain})
            print(f"{metric} batch_tokens={budget}: {tokens / seconds:,.0f} tokens/s", file=sys.stderr, flush=True)
        best = max(rows, key=lambda r: r["tokens_per_s"])
        entry = {"groups": len(groups), "tokens": tokens, "budgets": rows, "best": best}
        if parity:
            sample = groups[:parity]
            gpu = scorer.grouped_logprobs(sample, batch_tokens=best["batch_tokens"])
            if cpu_scorer is None:
                cpu_scorer = LMScorer(random_model(data["config"], "cpu"), scorer.tokenizer, device="cpu")
            cpu = cpu_scorer.grouped_logprobs(sample)
            diffs = [abs(a[0] - b[0]) / max(abs(b[0]), 1e-6)
                     for (_, ga), (_, ca) in zip(gpu, cpu) for a, b in zip(ga, ca)]
            entry["parity_max_rel"] = max(diffs)
        out["metrics"][metric] = entry
    return out


def end_to_end(data: dict[str, Any], tokenizer: str, device: str, parity: int) -> dict[str, Any]:
    """Items/s of FED's and FULL's scorers themselves (tokenising, the follow-up trie, the calls of
    :func:`dialeval.core.lm.group_calls`, the quality formulas) on the dumped DailyDialog items, with
    the random model of the dump's config and the real tokenizer in ``tokenizer``; and the largest
    relative difference of their per-item scores from the CPU's on the first ``parity`` items."""
    from transformers import AutoTokenizer

    from dialeval.fed.scorer import FEDScorer
    from dialeval.full.scorer import FULLScorer

    tok = AutoTokenizer.from_pretrained(tokenizer)
    contexts = [t["context"] for t in data["texts"]]
    responses = [t["response"] for t in data["texts"]]
    runs = {"fed": (FEDScorer, lambda s, n: s.score([c + [r] for c, r in zip(contexts[:n], responses[:n])]),
                    "turn_overall_scores"),
            "full": (FULLScorer, lambda s, n: s.score(contexts[:n], responses[:n]), "full_scores")}
    out: dict[str, Any] = {}
    for name, (make, score, key) in runs.items():
        scorer = make((random_model(data["config"], device), tok), device=device)
        score(scorer, 8)  # warm up
        sync(scorer.scorer.device)
        began = time.perf_counter()
        result = score(scorer, len(contexts))
        sync(scorer.scorer.device)
        seconds = time.perf_counter() - began
        entry = {"items": len(contexts), "seconds": seconds, "items_per_s": len(contexts) / seconds}
        if parity:
            cpu = score(make((random_model(data["config"], "cpu"), tok), device="cpu"), parity)[key]
            entry["parity_max_rel"] = max(abs(a - b) / max(abs(b), 1e-9) for a, b in zip(result[key][:parity], cpu))
        out[name] = entry
        print(f"{name} end to end: {entry['items_per_s']:.1f} items/s", file=sys.stderr, flush=True)
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"device: {result['device']}, torch {result['torch']}, {result['dtype']}; plain forward "
             f"{result['plain']['tokens_per_s']:,.0f} tokens/s (best shape {result['plain']['shape']})", "",
             "| metric | batch_tokens | tokens/s | items/s | ratio to plain |", "|---|---|---|---|---|"]
    for metric, entry in result["metrics"].items():
        for r in entry["budgets"]:
            lines.append(f"| {metric} | {r['batch_tokens']} | {r['tokens_per_s']:,.0f} | {r['items_per_s']:.1f} | "
                         f"{r['ratio']:.2f} |")
    lines.append("")
    for metric, entry in result["metrics"].items():
        if "parity_max_rel" in entry:
            lines.append(f"{metric}: GPU vs CPU log-probabilities, largest relative difference "
                         f"{entry['parity_max_rel']:.1e}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", type=Path, help="write the groups of FED and FULL (needs the bundled model)")
    parser.add_argument("--n", type=int, default=512, help="DailyDialog test items for --dump")
    parser.add_argument("--groups", type=Path, help="measure on these groups (from --dump)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parity", type=int, default=32, help="groups compared with the CPU (0: none)")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                        help="the model's dtype on the device (the CPU reference is float32)")
    parser.add_argument("--end-to-end", metavar="TOKENIZER_DIR",
                        help="instead: FED's and FULL's scorers on the dumped items (a folder with SmolLM2's tokenizer)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.dump:
        dump(args.dump, args.n)
        return 0
    if not args.groups:
        parser.error("give --dump FILE or --groups FILE")
    data = json.loads(args.groups.read_text())
    if args.end_to_end:
        print(json.dumps(end_to_end(data, args.end_to_end, args.device, min(args.parity, 16)), indent=1))
        return 0
    result = measure(data, args.device, args.budgets, args.repeats, args.parity, args.dtype)
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
