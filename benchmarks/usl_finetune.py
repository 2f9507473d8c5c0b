"""Issue 57's lever 3 for USL-H's U, measured: fine-tuning all-MiniLM-L6-v2's top layers (the paper
fine-tunes BERT-base) against the frozen-feature head, on the same items.

The items are those of the first bundled model (``python training/usl.py`` before the validation items
were drawn first: 4,000 training responses, 7,978 texts; 600 validation responses, 1,195 texts; seed
0), whose frozen ``[max; mean]`` head reached 0.7088 validation accuracy on them. Here the encoder's top
``--top`` layers and a linear head over the same ``[max; mean]`` pooling learn together (AdamW, lr
``--lr``, length batches of at most 32 texts, :func:`dialeval.core.batching.length_batches`, in shuffled
order), the rest stays frozen; validation accuracy after each of ``--epochs`` epochs (a fixed amount
of training: the result does not depend on how busy the machine is; one thread, about 3 CPU-minutes
an epoch). A trial, not resumable.

    OMP_NUM_THREADS=1 python benchmarks/usl_finetune.py --top 2 --epochs 2
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np

FROZEN_HEAD = 0.7088  # the first bundled model's U on these items (its dialeval_training.json)


def main(argv: list[str] | None = None) -> int:
    import torch

    from dialeval.data.corpora import dailydialog
    from dialeval.core.batching import length_batches
    from dialeval.core.progress import Progress
    from dialeval.usl.features import FrozenEncoder, max_mean
    from dialeval.usl.training import responses_of, sample, u_examples

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=2, help="encoder layers that learn")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rng = random.Random(0)  # the first bundled model's draws, in its order
    train_pairs, valid_pairs = responses_of(dailydialog("train")), responses_of(dailydialog("validation"))
    u_train = sample(list(dict.fromkeys(r for _, r in train_pairs)), 4000, rng)
    u_valid = sample(list(dict.fromkeys(r for _, r in valid_pairs)), 600, rng)
    sample(train_pairs, 4000, rng), sample(valid_pairs, 600, rng)  # S's draws came next
    texts, labels, _ = u_examples(u_train, rng)
    valid_texts, valid_labels, _ = u_examples(u_valid, rng)
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
        correct = 0
        with torch.no_grad():
            for idx in batches_of(valid_texts, 64):
                predicted = head(pooled([valid_texts[i] for i in idx])).argmax(-1).numpy()
                correct += int((predicted == np.array([valid_labels[i] for i in idx])).sum())
        return correct / len(valid_texts)

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
              f"(frozen-feature head on the same items: {FROZEN_HEAD})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
