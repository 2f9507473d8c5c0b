"""Issue 57's next lever for USL-H, measured: S (next utterance prediction) with its own LoRA-tuned top
layer, as U has one (:mod:`dialeval.usl.u_tuning`), against S's frozen-feature head on the same items.

S reads the dual features ``[c; r; c*r; |c-r|]`` of a context and a response, each pooled ``[max; mean]``
from all-mpnet-base-v2's last states (:mod:`dialeval.usl.features`). Here one LoRA adapter (rank
``--lora``) on the encoder's top ``--top`` layers, shared by contexts and responses (a siamese top), and
a linear head over the dual features learn together over the cached hidden states entering the top
(:func:`dialeval.usl.u_tuning.cached_states`; AdamW, lr ``--lr``, batches of 16 pairs with their true and
random responses, shuffled each epoch: :func:`dialeval.usl.u_tuning.run_epochs`). The items are the first
``--pairs`` of the bundled model's S training pairs (:func:`dialeval.usl.training.draw` with
``training/usl.py``'s defaults: each pair with its true response and a random one) and its 600
validation pairs (1,200 rows). Beside it, on the same items, S's frozen head as ``training/usl.py`` fits
it (:func:`dialeval.usl.training.choose_head`: 30 epochs, the best validation epoch kept; the bundled
head, on 20,000 pairs: 0.8433). Validation after each epoch reads the tuned top over the frozen
encoder's float32 forward of the validation texts, as a scorer does. No human rating is read.

    python benchmarks/usl_s_tuning.py --pairs 8000 --epochs 4 --threads 2 --save runs/usl-s-tuning
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

FROZEN_BUNDLED = 0.8433  # hub/usl-dailydialog/dialeval_training.json: S's frozen head on 20,000 pairs


def bundled_pairs(n: int):
    """The bundled model's S rows: the first ``n`` training pairs (``2n`` rows) and every validation row."""
    from dialeval.usl.training import TRAINING_SIZE, draw

    d = draw(argparse.Namespace(seed=0, tiny=False, valid=600, nll_responses=1000, u_responses=TRAINING_SIZE,
                                s_pairs=TRAINING_SIZE))
    return d.sc[:2 * n], d.sr[:2 * n], d.sy[:2 * n], d.svc, d.svr, d.svy


def main(argv: list[str] | None = None) -> int:
    from peft import get_peft_model

    from dialeval.core.batching import length_batches
    from dialeval.usl.features import MPNET, FrozenEncoder, dual
    from dialeval.usl.heads import head as fresh_head
    from dialeval.usl.training import choose_head, distinct_rows
    from dialeval.usl.tuned import lora_config, top_model
    from dialeval.usl.u_tuning import cached_states, pooled_states, run_epochs

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8000, help="training pairs (each gives 2 rows)")
    parser.add_argument("--top", type=int, default=1)
    parser.add_argument("--lora", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--save", type=Path, help="each epoch's adapter, head and state under SAVE/epoch-<n>/")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    sc, sr, sy, svc, svr, svy = bundled_pairs(args.pairs)
    encoder = FrozenEncoder(MPNET)
    for p in encoder.model.parameters():
        p.requires_grad = False
    contexts, context_at = distinct_rows([encoder.cut_context(c) for c in sc])
    responses, response_at = distinct_rows([encoder.cut_response(r) for r in sr])
    print(f"{len(sy)} training rows ({len(contexts)} distinct contexts, {len(responses)} responses), "
          f"{len(svy)} validation rows; LoRA rank {args.lora} on the top {args.top} layer(s), shared", flush=True)
    c_states, c_lengths = cached_states(encoder, contexts, args.top)
    r_states, r_lengths = cached_states(encoder, responses, args.top)

    upper = top_model(encoder.model, args.top).eval()

    def valid_features(learner) -> np.ndarray:
        """S's dual features of the validation rows as a scorer reads them: the frozen encoder's float32
        forward, then ``learner`` on its top (:meth:`dialeval.usl.features.FrozenEncoder.contexts`, ``single``)."""
        with torch.no_grad():
            return dual(encoder.contexts(svc, progress=False, tuned=(learner, args.top))[1],
                        encoder.single(svr, progress=False, tuned=(learner, args.top))[1])

    # the frozen head on the same items: the frozen top over the same cached states
    with torch.no_grad():
        rows = np.arange(len(contexts))
        c_frozen = torch.cat([pooled_states(upper, c_states, c_lengths, rows[i:i + 256])
                              for i in range(0, len(rows), 256)])
        rows = np.arange(len(responses))
        r_frozen = torch.cat([pooled_states(upper, r_states, r_lengths, rows[i:i + 256])
                              for i in range(0, len(rows), 256)])
    x = dual(c_frozen[context_at].numpy(), r_frozen[response_at].numpy())
    _, frozen = choose_head("S frozen", x, np.asarray(sy), valid_features(upper), np.asarray(svy), 1e-3, 0)
    print(f"S's frozen head on these {args.pairs} pairs: validation accuracy {frozen['accuracy']:.4f} "
          f"(the bundled head on 20,000 pairs: {FROZEN_BUNDLED})", flush=True)

    learner = get_peft_model(top_model(encoder.model, args.top), lora_config(args.lora))
    head = fresh_head(4 * encoder.dim, 0)
    pair_batches = length_batches(c_lengths[context_at[::2]].tolist(), 16)
    batches = [[2 * i + k for i in batch for k in (0, 1)] for batch in pair_batches]

    def pooled(idx: np.ndarray) -> torch.Tensor:
        cs, c_inv = np.unique(context_at[idx], return_inverse=True)
        rs, r_inv = np.unique(response_at[idx], return_inverse=True)
        c = pooled_states(learner, c_states, c_lengths, cs)[c_inv]
        r = pooled_states(learner, r_states, r_lengths, rs)[r_inv]
        return torch.cat([c, r, c * r, (c - r).abs()], 1)

    def validate() -> float:
        with torch.no_grad():
            predicted = head(torch.from_numpy(valid_features(learner))).argmax(-1).numpy()
        return float((predicted == np.asarray(svy)).mean())

    curve = run_epochs(learner, head, pooled, sy, batches, validate, epochs=args.epochs, lr=args.lr,
                       folder=args.save, what="usl S tuning")
    report = {"args": {k: str(v) for k, v in vars(args).items()}, "frozen_head": frozen,
              "frozen_bundled": FROZEN_BUNDLED, "tuned_curve": [round(a, 4) for a, _ in curve],
              "epoch_minutes": [m for _, m in curve]}
    print(json.dumps(report), flush=True)
    if args.save:
        (args.save / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
