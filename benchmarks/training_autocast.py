"""Training steps in float32 against ``torch.autocast("cpu", dtype=torch.bfloat16)``, in one process.

The LM adapter recipe of ``training/finetune_lm.py`` (``--preset dialogue``, LoRA r=16 on every linear
layer, AdamW at lr 3e-4, gradients clipped to norm 1) on a slice: two copies of the base with the same
adapter initialisation train on the same windows, their steps interleaved (so another job on the CPU
slows both alike); the forward and the loss under autocast for the second copy, the backward and the
optimizer step as autocast leaves them. Reported: seconds per step of each (median), their ratio, and
each copy's validation loss after the steps (float32 forward on DailyDialog test windows, the same for
both), with the CPU's flags that decide whether bfloat16 runs natively (``avx512_bf16``, ``amx_bf16``).

    OMP_NUM_THREADS=1 python benchmarks/training_autocast.py --steps 10 \
        --save benchmarks/results/training-autocast.json
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dialeval.core.lm import LOCAL_LM, load_causal_lm  # noqa: E402
from dialeval.core.lm_training import eval_texts, pack, training_texts  # noqa: E402

FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "avx512_vnni", "avx_vnni")


def cpu_flags() -> list[str]:
    """The flags of :data:`FLAGS` this CPU has (``/proc/cpuinfo``)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    have = set(text.split("flags", 1)[1].split("\n", 1)[0].split()) if "flags" in text else set()
    return [flag for flag in FLAGS if flag in have]


def adapter_model(base, seed: int):
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
    return get_peft_model(copy.deepcopy(base), config)


@torch.no_grad()
def validation_loss(model, windows: torch.Tensor, batch_size: int) -> float:
    model.eval()
    losses = [model(input_ids=windows[i:i + batch_size], labels=windows[i:i + batch_size]).loss.item()
              for i in range(0, len(windows), batch_size)]
    model.train()
    return sum(losses) / len(losses)


def measure(steps: int, batch_size: int, seq_len: int, texts: int) -> dict:
    base, tokenizer = load_causal_lm(LOCAL_LM)
    random.seed(0)
    corpus = training_texts("dialogue", tokenizer.eos_token)
    random.shuffle(corpus)
    windows = pack(corpus[:texts], tokenizer, seq_len)
    held_out = pack(eval_texts("dialogue", tokenizer.eos_token, 20), tokenizer, seq_len)[: 4 * batch_size]
    variants = {"float32": contextlib.nullcontext, "bfloat16 autocast": lambda: torch.autocast("cpu", dtype=torch.bfloat16)}
    models = {name: adapter_model(base, 0) for name in variants}
    optimizers = {name: torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=3e-4) for name, m in models.items()}
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    losses: dict[str, list[float]] = {name: [] for name in variants}
    for step in range(steps):
        batch = windows[(step * batch_size) % len(windows):][:batch_size]
        for name, context in variants.items():
            model, optimizer = models[name], optimizers[name]
            start = time.perf_counter()
            with context():
                loss = model(input_ids=batch, labels=batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            seconds[name].append(time.perf_counter() - start)
            losses[name].append(round(loss.item(), 4))
        print(f"step {step + 1}/{steps}: " + ", ".join(f"{n} {s[-1]:.2f} s" for n, s in seconds.items()),
              file=sys.stderr, flush=True)
    result = {"model": LOCAL_LM, "steps": steps, "batch_size": batch_size, "seq_len": seq_len,
              "threads": torch.get_num_threads(), "torch": torch.__version__, "cpu_flags": cpu_flags(),
              "variants": {}}
    for name in variants:
        result["variants"][name] = {
            "median_seconds_per_step": round(statistics.median(seconds[name][1:] or seconds[name]), 3),
            "train_losses": losses[name], "validation_loss": round(validation_loss(models[name], held_out, batch_size), 4)}
    f32, bf16 = (result["variants"][n]["median_seconds_per_step"] for n in variants)
    result["autocast_speedup"] = round(f32 / bf16, 3)
    return result


def report(result: dict) -> str:
    lines = ["# Training steps: float32 against bfloat16 autocast on this CPU\n",
             f"{result['model']} + LoRA r=16 (the `training/finetune_lm.py --preset dialogue` recipe), "
             f"{result['steps']} steps of {result['batch_size']} x {result['seq_len']} tokens each, interleaved in "
             f"one process, {result['threads']} thread(s), torch {result['torch']}; CPU flags: "
             f"{', '.join(result['cpu_flags']) or 'none of ' + ', '.join(FLAGS)}.\n",
             "| | s/step (median, first step left out) | validation loss after |", "|---|---|---|"]
    for name, v in result["variants"].items():
        lines.append(f"| {name} | {v['median_seconds_per_step']:.2f} | {v['validation_loss']:.4f} |")
    lines.append(f"\nautocast speed-up: {result['autocast_speedup']:.2f}x (below 1: slower).")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--texts", type=int, default=400, help="training texts packed into windows")
    p.add_argument("--save", type=Path, help="write this JSON file and the Markdown table beside it (.md)")
    args = p.parse_args(argv)
    result = measure(args.steps, args.batch_size, args.seq_len, args.texts)
    text = report(result)
    print(text)
    if args.save:
        args.save.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        args.save.with_suffix(".md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
