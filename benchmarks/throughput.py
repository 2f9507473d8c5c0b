"""Throughput of every metric's bundled default against its model's own forward speed (issue 34).

For each metric the script scores the same items through its runner (the path of ``dialeval score``,
the grid and ``dialeval compare``; models loaded and warmed up first, not timed) and counts, with a
forward pre-hook on every word-embedding table (an ``nn.Embedding`` of 10,000 rows or more: the
vocabulary, not the position or segment tables), how many tokens the metric fed through its
models, padding included. Beside that it measures the plain forward speed of each of those models
on random token ids at the best of a few batch shapes (``forward_speed.BATCH_SHAPES``), in the same process and
minute, and prints the ratio

    ratio = (non-padding tokens the metric fed per second) / (the same model's best plain forward tokens per second)

which reads the CPU's noise out of the comparison (a loaded machine slows both). The tokens counted
in the ratio are the non-padding ones (``ideal`` in the JSON: ids other than the table's padding id),
so a metric that feeds padding, runs small matrices or spends its time outside the model has a low
ratio; ``tokens_fed`` counts the padding too. The issue's goal is >= 0.8 for every language-model
metric.

Items: the first ``--n`` DailyDialog *test* dialogues cut at a random turn (seeded), the last turn
the response and the turns before it the context (up to 6), with the dialogue's next turn as the
reference. Metrics without a model forward (multiref, SSREM's GloVe part) report items/s only.

``--precisions float32 int8 bfloat16`` adds the precision column (issue 55): each job is also run with
each of those ``precision=`` options (:mod:`dialeval.core.precision`), the precisions taken in turn
within each repeat (a busy CPU slows them alike), and reports per precision items/s, non-padding tokens
fed per second and both as a ratio to float32's in the same process; the CPU's flags that decide what
runs natively are printed with them (:func:`machine`).

    OMP_NUM_THREADS=1 python benchmarks/throughput.py --n 32 --threads 1 --json > benchmarks/results/throughput.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dialeval  # noqa: E402,F401  (quiets third-party bars before the models load)
from dialeval.core.precision import NATIVE_CPU_FLAGS, PRECISIONS, cpu_flags  # noqa: E402
from dialeval.data.corpora import dailydialog  # noqa: E402
from dialeval.scoring.runners import get_runner  # noqa: E402
from forward_speed import plain_speed  # noqa: E402

# Which runner and options measure each metric's bundled default (the jobs a user runs).
JOBS: dict[str, tuple[str, dict[str, Any]]] = {
    "fed": ("fed", {}),
    "full": ("full", {}),
    "holistic-coherence": ("holistic", {"aspects": ["coherence"]}),
    "holistic-fluency": ("holistic", {"aspects": ["fluency"]}),
    # both in one call: fluency reads the reply-alone pass that weighted PMI coherence already ran
    "holistic-coherence+fluency": ("holistic", {"aspects": ["coherence", "fluency"]}),
    "holistic-consistency": ("holistic", {"aspects": ["consistency"]}),
    "grade": ("grade", {}),
    "ssrem": ("ssrem", {}),
    "multiref": ("multiref", {}),
    "usl": ("usl", {}),
}
MIN_VOCAB = 10_000


def items(n: int, seed: int = 0) -> list[dict]:
    """``n`` DailyDialog test items: up to 6 context turns, the response, the next turn as reference."""
    rng = random.Random(seed)
    out = []
    for turns in dailydialog("test"):
        if len(turns) < 3:
            continue
        end = rng.randrange(1, len(turns) - 1)
        out.append({"context": turns[max(0, end - 6):end], "response": turns[end], "references": [turns[end + 1]]})
        if len(out) == n:
            break
    return out


def machine() -> dict[str, Any]:
    """The CPU (model, the flags that decide what runs natively in bfloat16 and int8), torch's view of
    it, the threads and the load average (1, 5, 15 minutes)."""
    flags = cpu_flags()
    relevant = sorted({f for fs in NATIVE_CPU_FLAGS.values() for f in fs} | {"avx2", "avx512f", "amx_tile"})
    model = "?"
    if Path("/proc/cpuinfo").is_file():
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
                      if line.startswith("model name")), "?")
    return {"cpu": platform.processor() or platform.machine(), "model": model,
            "flags": {f: f in flags for f in relevant}, "torch": torch.__version__,
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
            "load": [round(x, 2) for x in os.getloadavg()]}


class TokenCounter:
    """Counts the token ids that go through every word-embedding table, per table (one per model)."""

    def __init__(self) -> None:
        self.fed: dict[int, int] = {}
        self.non_pad: dict[int, int] = {}
        self.tables: dict[int, torch.nn.Embedding] = {}
        self.handle = torch.nn.modules.module.register_module_forward_pre_hook(self._hook)

    def _hook(self, module: torch.nn.Module, args: tuple) -> None:
        if not isinstance(module, torch.nn.Embedding) or module.num_embeddings < MIN_VOCAB or not args:
            return
        ids = args[0]
        key = id(module)
        self.tables[key] = module
        self.fed[key] = self.fed.get(key, 0) + int(ids.numel())
        pad = module.padding_idx
        self.non_pad[key] = self.non_pad.get(key, 0) + int(ids.numel() if pad is None else (ids != pad).sum())

    def reset(self) -> None:
        self.fed.clear()
        self.non_pad.clear()

    def close(self) -> None:
        self.handle.remove()


def owner_of(table: torch.nn.Embedding) -> torch.nn.Module | None:
    """The outermost loaded model holding ``table``: found among the garbage collector's objects."""
    import gc

    from transformers import PreTrainedModel

    with warnings.catch_warnings():  # isinstance on every live object touches deprecated torch aliases
        warnings.simplefilter("ignore")
        owners = [o for o in gc.get_objects() if isinstance(o, PreTrainedModel)
                  and any(m is table for m in o.modules())]
    return max(owners, key=lambda m: sum(1 for _ in m.modules()), default=None)


def measure(name: str, batch: list[dict], counter: TokenCounter, repeats: int = 2) -> dict[str, Any]:
    """Items/s and tokens fed of one job, then the plain forward speed of each model it used."""
    metric, options = JOBS[name]
    runner: Callable = get_runner(metric)
    runner(batch[:2], **options)  # load and warm up, not timed
    seconds = float("inf")
    for _ in range(repeats):  # best of a few runs, as the plain forward's speed is (a busy CPU slows some)
        counter.reset()
        began = time.perf_counter()
        runner(batch, **options)
        seconds = min(seconds, time.perf_counter() - began)
    result: dict[str, Any] = {"metric": name, "items": len(batch), "seconds": seconds,
                              "items_per_s": len(batch) / seconds, "models": []}
    fed, ideal = dict(counter.fed), dict(counter.non_pad)
    counter.reset()
    for key, tokens in fed.items():
        table = counter.tables[key]
        model = owner_of(table)
        entry: dict[str, Any] = {"model": type(model).__name__ if model is not None else "?",
                                 "tokens_fed": tokens, "ideal": ideal[key], "fed_tokens_per_s": tokens / seconds}
        if model is not None:
            entry["plain"] = plain_speed(model, table.num_embeddings)
            entry["ratio"] = ideal[key] / seconds / entry["plain"]["tokens_per_s"]
        result["models"].append(entry)
    counter.reset()
    if result["models"]:
        result["ratio"] = min(m.get("ratio", float("nan")) for m in result["models"])
    return result


def measure_precisions(name: str, batch: list[dict], counter: TokenCounter, precisions: list[str],
                       repeats: int = 2) -> dict[str, dict[str, float]]:
    """Per precision (float32 first): best seconds, items/s and non-padding tokens fed per second of
    one job, and both as a ratio to float32's; the precisions taken in turn within each repeat."""
    metric, options = JOBS[name]
    runner: Callable = get_runner(metric)
    seconds = {p: float("inf") for p in precisions}
    tokens = dict.fromkeys(precisions, 0)
    for _ in range(repeats):
        for precision in precisions:
            runner(batch[:2], **options, precision=precision)  # load and warm up, not timed
            counter.reset()
            began = time.perf_counter()
            runner(batch, **options, precision=precision)
            seconds[precision] = min(seconds[precision], time.perf_counter() - began)
            tokens[precision] = sum(counter.non_pad.values())
    counter.reset()
    base = seconds["float32"]
    return {p: {"seconds": seconds[p], "items_per_s": len(batch) / seconds[p],
                "tokens_per_s": tokens[p] / seconds[p], "speed_vs_float32": base / seconds[p]} for p in precisions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=32, help="items per metric")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--metrics", nargs="+", choices=sorted(JOBS), default=list(JOBS))
    parser.add_argument("--json", action="store_true", help="print the JSON result instead of the table")
    parser.add_argument("--precisions", nargs="+", choices=list(PRECISIONS), default=["float32"],
                        help="also time each job in these precisions against float32 (the precision column)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    batch = items(args.n)
    counter = TokenCounter()
    precisions = ["float32", *[p for p in args.precisions if p != "float32"]]
    cpu = machine()
    print(json.dumps(cpu), file=sys.stderr)
    rows = []
    for name in args.metrics:
        try:
            rows.append(measure(name, batch, counter))
            if len(precisions) > 1 and rows[-1]["models"]:  # no model, no precision
                rows[-1]["precisions"] = measure_precisions(name, batch, counter, precisions)
        except (FileNotFoundError, ValueError, KeyError) as e:  # a metric not registered or without weights
            rows.append({"metric": name, "skipped": str(e)})
        print(f"{name}: done", file=sys.stderr)
    counter.close()
    cpu.update({"n_items": len(batch), "load_after": [round(x, 2) for x in os.getloadavg()]})
    if args.json:
        print(json.dumps({"machine": cpu, "metrics": rows}, indent=1))
        return 0
    print(f"{'metric':22} {'items/s':>8} {'fed tok/s':>10} {'plain tok/s':>12} {'shape':>7} {'ratio':>6}")
    for row in rows:
        if "skipped" in row:
            print(f"{row['metric']:22} skipped: {row['skipped'][:80]}")
            continue
        if not row["models"]:
            print(f"{row['metric']:22} {row['items_per_s']:8.2f} {'(no model forward)':>10}")
        for m in row["models"]:
            plain = m.get("plain", {})
            print(f"{row['metric']:22} {row['items_per_s']:8.2f} {m['fed_tokens_per_s']:10.0f} "
                  f"{plain.get('tokens_per_s', float('nan')):12.0f} {plain.get('shape', '?'):>7} {m.get('ratio', float('nan')):6.2f}")
    for row in rows:
        for precision, p in row.get("precisions", {}).items():
            print(f"{row['metric']:22} {precision:9} {p['items_per_s']:8.2f} items/s {p['tokens_per_s']:8.0f} tokens/s "
                  f"{p['speed_vs_float32']:5.2f}x float32")
    print(json.dumps(cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
