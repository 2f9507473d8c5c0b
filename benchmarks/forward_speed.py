"""A model's plain forward speed, the yardstick of ``throughput.py`` and ``cuda_throughput.py``:
the best tokens/s of ``model(input_ids)`` on random ids over a few batch shapes (torch alone, so it
also runs on a GPU machine without dialeval's other dependencies)."""

from __future__ import annotations

import time
from typing import Any

import torch

BATCH_SHAPES = ((1, 512), (2, 256), (4, 128), (8, 64), (16, 32))


def sync(device: torch.device) -> None:
    """Wait for the GPU's queued work (a no-op on a CPU), so that a timer reads finished work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def plain_speed(model: torch.nn.Module, vocab: int, repeats: int = 3,
                shapes: tuple[tuple[int, int], ...] = BATCH_SHAPES) -> dict[str, Any]:
    """Best tokens/s of ``model(input_ids)`` on random ids over ``shapes`` (rows x length)."""
    device = next(model.parameters()).device
    best: dict[str, Any] = {"tokens_per_s": 0.0}
    limit = getattr(model.config, "max_position_embeddings", 512) or 512
    for rows, length in shapes:
        length = min(length, limit - 2)
        ids = torch.randint(5, vocab - 1, (rows, length), generator=torch.Generator().manual_seed(0)).to(device)
        model(input_ids=ids)  # warm up this shape
        sync(device)
        began = time.perf_counter()
        for _ in range(repeats):
            model(input_ids=ids)
        sync(device)
        rate = rows * length * repeats / (time.perf_counter() - began)
        if rate > best["tokens_per_s"]:
            best = {"tokens_per_s": rate, "shape": f"{rows}x{length}"}
    return best
