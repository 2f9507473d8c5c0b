"""The optimisation loop shared by the scripts in ``training/`` (fine-tuned LMs, the NLI model).

AdamW, learning rate ``lr * min(1, (s + 1) / warmup) * max(0, 1 - s / max_steps)`` at step ``s``
(linear warm-up, linear decay to zero at ``max_steps``), gradients clipped to norm 1.0. The loop
stops at ``max_steps`` or after ``minutes`` of wall time, records every loss in ``state["losses"]``
and the step in ``state["step"]``, and calls ``save()`` every ``save_every`` steps so an interrupted
run keeps its work; a run resumed from a saved ``state`` continues the schedule where it stopped
(the optimizer moments start afresh).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any, Callable

import torch

STATE_FILE = "dialeval_training.json"


def add_loop_arguments(parser: argparse.ArgumentParser, *, lr: float, warmup: int, max_steps: int,
                       what_tiny: str) -> None:
    """The options every training script shares: the schedule of :func:`run_steps`, stopping,
    checkpoints, threads, seed, device, ``--tiny`` (tests), ``--resume`` and ``--push-to-hub``."""
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument("--warmup", type=int, default=warmup)
    parser.add_argument("--max-steps", type=int, default=max_steps)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this wall time")
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tiny", action="store_true", help=f"a few steps on {what_tiny} (tests)")
    parser.add_argument("--resume", action="store_true", help="continue from --output")
    parser.add_argument("--push-to-hub", action="store_true")


def prepare_run(args: argparse.Namespace, output: Path) -> Path:
    """Apply ``--threads`` and ``--seed`` (torch and ``random``); create and return ``output``."""
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    output.mkdir(parents=True, exist_ok=True)
    return output


def load_state(output: Path, resume: bool, args: Any, start: Callable[[], dict]) -> dict:
    """The run's report: with ``resume`` the saved one (this run's arguments appended to its
    ``"resumed"`` list), else a new one: the arguments, step 0, no losses and ``start()``'s fields."""
    path = Path(output) / STATE_FILE
    arguments = {k: str(v) for k, v in vars(args).items()}
    if resume and path.exists():
        state = json.loads(path.read_text())
        state.setdefault("resumed", []).append(arguments)
        return state
    return {"args": arguments, "step": 0, "losses": [], **start()}


def save_checkpoint(output: Path, model: Any, tokenizer: Any, state: dict) -> None:
    """Weights (safetensors), tokenizer and the run's report ``STATE_FILE`` into ``output``."""
    model.save_pretrained(output)
    tokenizer.save_pretrained(output)
    (Path(output) / STATE_FILE).write_text(json.dumps(state, indent=1))


def run_steps(
    model: Any,
    step_loss: Callable[[int], torch.Tensor],
    state: dict,
    save: Callable[[], None],
    *,
    lr: float,
    warmup: int,
    max_steps: int,
    minutes: float | None = None,
    save_every: int = 100,
    weight_decay: float = 0.0,
) -> None:
    """Train ``model`` from ``state["step"]``; ``step_loss(step)`` returns the loss of one batch."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / max(1, warmup)) * max(0.0, 1 - s / max_steps)
    )
    for _ in range(state["step"]):
        schedule.step()
    start, done_here = time.time(), 0
    model.train()
    while state["step"] < max_steps:
        if minutes and time.time() - start > 60 * minutes:
            break
        loss = step_loss(state["step"])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        state["step"] += 1
        done_here += 1
        state["losses"].append(round(loss.item(), 4))
        elapsed = (time.time() - start) / 60
        state["steps_per_minute"] = round(done_here / max(elapsed, 1e-9), 1)
        if state["step"] % 10 == 0:
            recent = state["losses"][-10:]
            print(f"step {state['step']}/{max_steps} loss {sum(recent) / len(recent):.3f} "
                  f"{state['steps_per_minute']} steps/min {elapsed:.1f} min", flush=True)
        if state["step"] % save_every == 0:
            save()
    state["minutes"] = round(state.get("minutes", 0.0) + (time.time() - start) / 60, 2)
    model.eval()
