"""The optimisation loop shared by the scripts in ``training/`` (fine-tuned LMs, the NLI model).

AdamW, learning rate ``lr * min(1, (s + 1) / warmup) * max(0, 1 - s / max_steps)`` at step ``s``
(linear warm-up, linear decay to zero at ``max_steps``), gradients clipped to norm 1.0. The loop
stops at ``max_steps`` or after ``minutes`` of wall time, records every loss in ``state["losses"]``
and the step in ``state["step"]``, and calls ``save()`` every ``save_every`` steps so an interrupted
run keeps its work; a run resumed from a saved ``state`` continues the schedule where it stopped
(the optimizer moments start afresh).

LoRA (Hu et al. 2021, via ``peft``): with ``--lora-r R > 0`` the base weights are frozen and every
linear layer ``W`` of the transformer blocks gets a trainable low-rank update,
``W x + (alpha / R) * B A x`` with ``A`` (R x in) and ``B`` (out x R, zero at start); the classifier
head of a sequence-classification model is trained in full. :func:`save_checkpoint` then writes a
standard peft adapter (``adapter_config.json`` + ``adapter_model.safetensors`` in float16), the
layout of a Hub adapter repository, instead of the whole model.
"""

from __future__ import annotations

import argparse
import copy
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


def add_lora_arguments(parser: argparse.ArgumentParser, *, r: int = 16, alpha: int = 32) -> None:
    """``--lora-r`` (0: full fine-tune), ``--lora-alpha``, ``--lora-dropout``."""
    parser.add_argument("--lora-r", type=int, default=r, help="LoRA rank; 0 fine-tunes every weight")
    parser.add_argument("--lora-alpha", type=int, default=alpha)
    parser.add_argument("--lora-dropout", type=float, default=0.05)


def wrap_lora(model: Any, args: argparse.Namespace, task_type: str) -> Any:
    """``model`` as a trainable ``PeftModel`` with LoRA on all linear layers (``target_modules=
    "all-linear"``: attention and MLP projections, not the output/classifier head); ``task_type``
    is peft's (``"CAUSAL_LM"``, ``"SEQ_CLS"``; the latter also trains the classifier in full)."""
    from peft import LoraConfig, get_peft_model

    if args.lora_r < 1:
        raise ValueError(f"--lora-r must be >= 1 for an adapter, got {args.lora_r}")
    config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                        target_modules="all-linear", task_type=task_type)
    model = get_peft_model(model, config)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    print(f"LoRA r={args.lora_r}: {trainable:,} trainable of {total:,} parameters", flush=True)
    return model


def is_peft(model: Any) -> bool:
    try:
        from peft import PeftModel
    except ImportError:  # pragma: no cover - peft is a dependency
        return False
    return isinstance(model, PeftModel)


def save_adapter(output: Path, model: Any, base_model: str, dtype: Any = torch.float16) -> None:
    """A standard peft adapter: ``adapter_config.json`` (``base_model_name_or_path`` set to the
    Hub id ``base_model``) and ``adapter_model.safetensors`` with tensors in ``dtype`` (float16)."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    weights = {k: v.detach().to("cpu", dtype).contiguous()
               for k, v in get_peft_model_state_dict(model).items()}
    save_file(weights, str(Path(output) / "adapter_model.safetensors"), metadata={"format": "pt"})
    config = copy.deepcopy(model.peft_config["default"])
    config.base_model_name_or_path = base_model
    config.inference_mode = True
    if isinstance(config.target_modules, (set, list)):  # a set: sorted, so the file's bytes are stable
        config.target_modules = sorted(config.target_modules)
    config.save_pretrained(str(output))


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


def save_checkpoint(output: Path, model: Any, tokenizer: Any | None, state: dict, base_model: str | None = None) -> None:
    """Weights (safetensors; a float16 peft adapter for a ``PeftModel``, over the Hub id
    ``base_model``), the tokenizer (``None``: the base's, not copied) and the run's report
    ``STATE_FILE`` into ``output``."""
    if is_peft(model):
        save_adapter(output, model, base_model or str(model.peft_config["default"].base_model_name_or_path))
    else:
        model.save_pretrained(output)
    if tokenizer is not None:
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
        optimizer, lambda s: min(1.0, (s + 1) / max(1, warmup)) * max(0.0, 1 - s / max(1, max_steps))
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
