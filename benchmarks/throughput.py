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

    OMP_NUM_THREADS=1 python benchmarks/throughput.py --n 32 --threads 1 --json > benchmarks/results/throughput.json
"""

from __future__ import annotations

import argparse
import json
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=32, help="items per metric")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--metrics", nargs="+", choices=sorted(JOBS), default=list(JOBS))
    parser.add_argument("--json", action="store_true", help="print the JSON result instead of the table")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    batch = items(args.n)
    counter = TokenCounter()
    rows = []
    for name in args.metrics:
        try:
            rows.append(measure(name, batch, counter))
        except (FileNotFoundError, ValueError, KeyError) as e:  # a metric not registered or without weights
            rows.append({"metric": name, "skipped": str(e)})
        print(f"{name}: done", file=sys.stderr)
    counter.close()
    machine = {"cpu": platform.processor() or platform.machine(), "threads": args.threads,
               "torch": torch.__version__, "n_items": len(batch)}
    if args.json:
        print(json.dumps({"machine": machine, "metrics": rows}, indent=1))
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
    print(json.dumps(machine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
