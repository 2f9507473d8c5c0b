"""Issue 57's lever 3 for USL-H's U, measured: fine-tuning all-MiniLM-L6-v2's top layers (the paper
fine-tunes BERT-base) against the frozen-feature head, on the same items.

The items (``--items``): ``first``, those of the first bundled model (``python training/usl.py`` before the
validation items were drawn first: 4,000 training responses, 7,978 texts; 600 validation responses, 1,195
texts; seed 0), whose frozen ``[max; mean]`` head reached 0.7088 validation accuracy on them; ``bundled``,
those of the bundled model (20,000 training responses, 39,881 texts; the same 1,195 validation texts as
its report), whose frozen head reached 0.7381. Here the encoder's top
``--top`` layers and a linear head over the same ``[max; mean]`` pooling learn together (AdamW, lr
``--lr``, length batches of at most 32 texts, :func:`dialeval.core.batching.length_batches`, in shuffled
order), the rest stays frozen; validation accuracy, overall and per perturbation kind, after each of
``--epochs`` epochs (a fixed amount of training: the result does not depend on how busy the machine is;
one thread, about 3 CPU-minutes an epoch on ``first``, 11 on ``bundled``). A trial, not resumable (the
bundled recipe, ``training/usl.py``, resumes by epoch).

    OMP_NUM_THREADS=1 python benchmarks/usl_finetune.py --top 2 --epochs 2
    OMP_NUM_THREADS=1 python benchmarks/usl_finetune.py --items bundled --top 2 --epochs 1

``--states`` (for all-mpnet-base-v2, ``--encoder mpnet-base``: BERT-base size, an hour an epoch through
all 12 layers on two threads) computes once the hidden states that enter the top ``--top`` layers (the
lower layers frozen, in eval mode: no dropout below the top), caches them in float16 under
``$DIALEVAL_CACHE/usl`` in chunks a later run resumes, and trains the top layers over them; validation
reads U as the scorer does (:meth:`dialeval.usl.features.FrozenEncoder.single` with the tuned top), in float32. ``--lora R`` trains rank-``R`` LoRA adapters on the top layers'
linear maps (their LayerNorms stay; :func:`dialeval.usl.tuned.lora_config`) instead of the layers
themselves, so that the tuned part is small enough to bundle (the hub keeps under its 100 MB);
``--save`` keeps each epoch's adapter and head (``--folder`` makes a USL folder of one).

    python benchmarks/usl_finetune.py --encoder mpnet-base --items bundled --top 1 --states --lora 16 --lr 5e-4
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np
import torch

# the frozen head's U on these items (each model's dialeval_training.json): MiniLM's first and bundled
# models, and the bundled all-mpnet-base-v2 model (hub/usl-dailydialog)
FROZEN_HEAD = {("minilm-l6", "first"): 0.7088, ("minilm-l6", "bundled"): 0.7381, ("mpnet-base", "bundled"): 0.8059}


def first_items() -> tuple[list[str], list[int], list[str], list[int], list[str]]:
    """The first bundled model's U items: its draws (seed 0), in its order."""
    from dialeval.data.corpora import dailydialog
    from dialeval.usl.training import responses_of, sample, u_examples

    rng = random.Random(0)
    train_pairs, valid_pairs = responses_of(dailydialog("train")), responses_of(dailydialog("validation"))
    u_train = sample(list(dict.fromkeys(r for _, r in train_pairs)), 4000, rng)
    u_valid = sample(list(dict.fromkeys(r for _, r in valid_pairs)), 600, rng)
    sample(train_pairs, 4000, rng), sample(valid_pairs, 600, rng)  # S's draws came next
    texts, labels, _ = u_examples(u_train, rng)
    valid_texts, valid_labels, valid_kinds = u_examples(u_valid, rng)
    return texts, labels, valid_texts, valid_labels, valid_kinds


def bundled_items() -> tuple[list[str], list[int], list[str], list[int], list[str]]:
    """The bundled model's U items: :func:`dialeval.usl.training.draw` with ``training/usl.py``'s defaults."""
    from dialeval.usl.training import TRAINING_SIZE, draw

    d = draw(argparse.Namespace(seed=0, tiny=False, valid=600, nll_responses=1000, u_responses=TRAINING_SIZE,
                                s_pairs=TRAINING_SIZE))
    return d.ut, d.uy, d.uvt, d.uvy, d.uv_kinds


ITEMS = {"first": first_items, "bundled": bundled_items}


def make_folder(epoch_dir: Path, out: Path) -> None:
    """``out``: the bundled USL folder's heads and config, U's head replaced by the one in ``epoch_dir``
    and read through its adapter (``u_encoder/`` with its base record, config ``u_top``; :mod:`dialeval.usl.tuned`)."""
    from peft import PeftModel
    from safetensors.torch import load_file

    from dialeval.usl.features import FrozenEncoder
    from dialeval.usl.heads import DEFAULT_MODEL, head, load_folder, resolve_folder, save_folder
    from dialeval.usl.tuned import ADAPTER_DIR, save_tuned_top, top_model

    report = json.loads((epoch_dir / "report.json").read_text())["args"]
    heads, config = load_folder(resolve_folder(DEFAULT_MODEL))
    if config["encoder"] != report["encoder"]:
        raise ValueError(f"{epoch_dir} tuned {report['encoder']}, the bundled folder reads {config['encoder']}")
    heads["u"] = head(int(config["dim"]), 0)
    heads["u"].load_state_dict(load_file(str(epoch_dir / "u_head.safetensors")))
    config.update(hidden_u=0, u_top=report["top"])
    save_folder(out, heads, config)
    encoder = FrozenEncoder(config["encoder"])
    learner = PeftModel.from_pretrained(top_model(encoder.model, report["top"]), str(epoch_dir / ADAPTER_DIR))
    save_tuned_top(out, learner, encoder, report["top"])
    print(f"{out}: U through {epoch_dir}'s adapter on the top {report['top']} layers")


def main(argv: list[str] | None = None) -> int:
    from dialeval.core.batching import length_batches
    from dialeval.usl.features import ENCODERS, MINILM, FrozenEncoder, max_mean
    from dialeval.usl.heads import head as fresh_head
    from dialeval.usl.training import accuracy_by
    from dialeval.usl.u_tuning import cached_states, pooled_states, run_epochs, validation_correct

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=2, help="encoder layers that learn")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--items", choices=sorted({items for _, items in FROZEN_HEAD}), default="first",
                        help="first: the first bundled model's 4,000 responses; bundled: the bundled model's 20,000")
    parser.add_argument("--encoder", choices=sorted(ENCODERS), default=MINILM)
    parser.add_argument("--states", action="store_true",
                        help="train the top layers over cached hidden states (module docstring)")
    parser.add_argument("--lora", type=int, default=0, help="LoRA rank on the top layers (0: the layers learn)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--folder", nargs=2, metavar=("EPOCH_DIR", "OUT"),
                        help="no training: OUT becomes the bundled USL folder with U read through the adapter and "
                             "head saved in EPOCH_DIR (by --save), to score the sets with model=OUT")
    parser.add_argument("--save", help="with --lora: after each epoch, DIR/epoch-<n>/ holds the adapter "
                                       "(u_encoder/), the head (u_head.safetensors) and report.json")
    args = parser.parse_args(argv)
    if args.folder:
        make_folder(Path(args.folder[0]), Path(args.folder[1]))
        return 0
    if (args.encoder, args.items) not in FROZEN_HEAD:
        parser.error(f"no frozen head measured for --encoder {args.encoder} --items {args.items}")
    if args.lora and not args.states:
        parser.error("--lora needs --states")
    if args.save and not args.lora:
        parser.error("--save needs --lora")
    if args.save and Path(args.save).exists() and any(Path(args.save).iterdir()):
        parser.error(f"--save {args.save} is not empty: a trial writes its epochs into a folder of its own")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    texts, labels, valid_texts, valid_labels, valid_kinds = ITEMS[args.items]()
    encoder = FrozenEncoder(args.encoder)
    model, tokenizer = encoder.model, encoder.tokenizer
    texts = [encoder.cut_response(t) for t in texts]
    valid_texts = [encoder.cut_response(t) for t in valid_texts]
    for p in model.parameters():
        p.requires_grad = False
    if args.states:
        from dialeval.usl.tuned import top_model

        states, lengths = cached_states(encoder, texts, args.top)
        learner = top_model(model, args.top)
    else:
        learner = model
    if args.lora:
        from peft import get_peft_model

        from dialeval.usl.tuned import lora_config

        learner = get_peft_model(learner, lora_config(args.lora))
    else:
        for layer in learner.encoder.layer[-args.top:]:
            for p in layer.parameters():
                p.requires_grad = True
    head = fresh_head(encoder.dim, 0)

    def pooled_texts(rows: list[str]):
        batch = tokenizer(rows, padding=True, return_tensors="pt")
        return max_mean(model(**batch).last_hidden_state, batch["attention_mask"])

    def pooled(idx):
        return pooled_states(learner, states, lengths, idx) if args.states else pooled_texts([texts[i] for i in idx])

    def batches_of(rows: list[str], size: int) -> list[list[int]]:
        return length_batches([len(ids) for ids in tokenizer(rows)["input_ids"]], size)

    def accuracy() -> float:
        correct = np.zeros(len(valid_texts), dtype=bool)
        with torch.no_grad():
            if args.states:  # as the scorer reads U: the frozen encoder's states, then the learner's top
                correct[:] = validation_correct(encoder, learner, args.top, head, valid_texts, valid_labels)
            else:
                for idx in batches_of(valid_texts, 64):
                    predicted = head(pooled_texts([valid_texts[i] for i in idx])).argmax(-1).numpy()
                    correct[idx] = predicted == np.array([valid_labels[i] for i in idx])
        print("  by kind: " + ", ".join(f"{k} {v['accuracy']:.3f}" for k, v in accuracy_by(valid_kinds, correct).items()))
        print(f"  (frozen-feature head on the same items: {FROZEN_HEAD[args.encoder, args.items]})")
        return float(correct.mean())

    learning = f"LoRA rank {args.lora} on the top {args.top} layers" if args.lora else f"top {args.top} layers learn"
    print(f"{len(texts)} training texts, {len(valid_texts)} validation texts; {args.encoder}, {learning}"
          f"{' over cached states' if args.states else ''}", flush=True)
    save = Path(args.save) if args.save else None
    curve = run_epochs(learner, head, pooled, labels, batches_of(texts, 32), accuracy, epochs=args.epochs,
                       lr=args.lr, folder=save)
    for epoch, (found, _) in enumerate(curve if save else []):
        report = {"args": vars(args), "validation_accuracy": found}
        (save / f"epoch-{epoch + 1}" / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
