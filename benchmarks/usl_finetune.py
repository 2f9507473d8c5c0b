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
one thread, about 3 CPU-minutes an epoch on ``first``, 11 on ``bundled``). A trial, not resumable.

    OMP_NUM_THREADS=1 python benchmarks/usl_finetune.py --top 2 --epochs 2
    OMP_NUM_THREADS=1 python benchmarks/usl_finetune.py --items bundled --top 2 --epochs 1
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np

FROZEN_HEAD = {"first": 0.7088, "bundled": 0.7381}  # the frozen head's U on these items (dialeval_training.json)


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


def main(argv: list[str] | None = None) -> int:
    import torch

    from dialeval.core.batching import length_batches
    from dialeval.core.progress import Progress
    from dialeval.usl.features import FrozenEncoder, max_mean
    from dialeval.usl.training import accuracy_by

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=2, help="encoder layers that learn")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--items", choices=sorted(FROZEN_HEAD), default="first",
                        help="first: the first bundled model's 4,000 responses; bundled: the bundled model's 20,000")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    texts, labels, valid_texts, valid_labels, valid_kinds = ITEMS[args.items]()
    encoder = FrozenEncoder()
    model, tokenizer = encoder.model, encoder.tokenizer
    texts = [encoder.cut_response(t) for t in texts]
    valid_texts = [encoder.cut_response(t) for t in valid_texts]
    for p in model.parameters():
        p.requires_grad = False
    for layer in model.encoder.layer[-args.top:]:
        for p in layer.parameters():
            p.requires_grad = True
    head = torch.nn.Sequential(torch.nn.Dropout(0.2), torch.nn.Linear(encoder.dim, 2))
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad] + list(head.parameters()),
                                  lr=args.lr, weight_decay=0.01)

    def pooled(batch_texts):
        batch = tokenizer(batch_texts, padding=True, return_tensors="pt")
        return max_mean(model(**batch).last_hidden_state, batch["attention_mask"])

    def batches_of(rows: list[str], size: int) -> list[list[int]]:
        return length_batches([len(ids) for ids in tokenizer(rows)["input_ids"]], size)

    def accuracy() -> float:
        model.eval(), head.eval()
        correct = np.zeros(len(valid_texts), dtype=bool)
        with torch.no_grad():
            for idx in batches_of(valid_texts, 64):
                predicted = head(pooled([valid_texts[i] for i in idx])).argmax(-1).numpy()
                correct[idx] = predicted == np.array([valid_labels[i] for i in idx])
        print("  by kind: " + ", ".join(f"{k} {v['accuracy']:.3f}" for k, v in accuracy_by(valid_kinds, correct).items()))
        return float(correct.mean())

    batches = batches_of(texts, 32)
    print(f"{len(texts)} training texts, {len(valid_texts)} validation texts; top {args.top} layers learn", flush=True)
    for epoch in range(args.epochs):
        random.Random(epoch).shuffle(batches)
        model.train(), head.train()
        with Progress(len(batches), f"usl fine-tuning, epoch {epoch + 1}/{args.epochs}", unit="batch") as bar:
            for batch in batches:
                loss = torch.nn.functional.cross_entropy(head(pooled([texts[i] for i in batch])),
                                                         torch.tensor([labels[i] for i in batch]))
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                bar.update(1)
        print(f"epoch {epoch + 1}: validation accuracy {accuracy():.4f} "
              f"(frozen-feature head on the same items: {FROZEN_HEAD[args.items]})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
