"""USL-H's training choices by DailyDialog validation accuracy alone (issue 57: no human rating is read).

The recipe of ``training/usl.py`` on ``--encoder``'s frozen features against its own parts, on the same
validation items (drawn before the training examples, :func:`dialeval.usl.training.draw`): U and S heads
on the first 4,000 training responses / pairs (the first bundled model's size), beside heads on all of
``--u-responses`` / ``--s-pairs``; with ``--pair`` also S on the (context, response) pair read together,
the paper's input, on the same training and validation rows as the dual's first 4,000 pairs (its features
are encoded here, ~5 CPU minutes with MiniLM). Each head is chosen as in training (hidden size, stopping
epoch: :func:`dialeval.usl.training.choose_head`). The features come from training's cache (a training
run with the same ``--encoder`` and sizes fills it).

``--beside ENCODER`` asks whether a second frozen encoder adds to the first: the full-size U and S heads on
``--encoder``'s features alone and on both encoders' features side by side (U: ``[x1; x2]``, S: ``[dual(x1);
dual(x2)]``), each encoder's features from its own training run's cache.

    OMP_NUM_THREADS=1 python benchmarks/usl_choices.py --encoder minilm-l6 --pair --save benchmarks/results/usl-choices.md
    python benchmarks/usl_choices.py --encoder mpnet-base --beside minilm-l6 --threads 2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

SMALL = 4000  # the first bundled model's training responses and pairs


def main(argv: list[str] | None = None) -> int:
    import torch

    from dialeval.usl.features import FrozenEncoder
    from dialeval.usl.training import cached, choose_head, draw, encode

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--u-responses", type=int, default=20000)
    parser.add_argument("--s-pairs", type=int, default=20000)
    parser.add_argument("--pair", action="store_true", help="also S on the pair read together, at 4,000 pairs")
    parser.add_argument("--encoder", default="minilm-l6", help="the frozen encoder (dialeval.usl.features.ENCODERS)")
    parser.add_argument("--beside", default=None, help="a second encoder: the full-size heads on both side by side")
    parser.add_argument("--save", type=Path, default=None, help="the Markdown table")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    if args.beside and (args.save or args.pair):
        parser.error("--beside prints its four rows only; it takes neither --save nor --pair")
    torch.set_num_threads(args.threads)
    run = argparse.Namespace(encoder=args.encoder, s_input="dual", u_responses=args.u_responses, s_pairs=args.s_pairs,
                             valid=600, nll_responses=1000, seed=0, tiny=False, device=None, lr=1e-3)
    d = draw(run)
    x, _ = encode(run, d, None)
    uy, uvy, sy, svy = (np.asarray(v) for v in (d.uy, d.uvy, d.sy, d.svy))
    rows = []

    def fit(part: str, what: str, xt, yt, xv, yv) -> None:
        _, report = choose_head(f"{part} {what}", xt, yt, xv, yv, run.lr, run.seed)
        rows.append(f"| {part} | {what} | {len(yt):,} | {len(yv):,} | {report['accuracy']:.4f} | {report['hidden']} |")

    if args.beside:
        x2, _ = encode(argparse.Namespace(**{**vars(run), "encoder": args.beside}), d, None)
        both = {k: np.concatenate([x[k], x2[k]], axis=1) for k in x}
        for name, features in ((args.encoder, x), (f"{args.encoder} + {args.beside}", both)):
            fit("U", f"{name}, {args.u_responses:,} responses", features["u"], uy, features["uv"], uvy)
            fit("S", f"{name} dual, {args.s_pairs:,} pairs", features["s"], sy, features["sv"], svy)
        print("\n".join(rows))
        return 0

    small_u = 2 * SMALL  # about SMALL responses (each gives its positive and, from 3 tokens on, its negative)
    fit("U", f"frozen [max; mean], first {small_u:,} texts", x["u"][:small_u], uy[:small_u], x["uv"], uvy)
    fit("U", f"frozen [max; mean], {args.u_responses:,} responses", x["u"], uy, x["uv"], uvy)
    if args.pair:  # the same rows as the dual's first SMALL pairs, and the same validation rows
        encoder = FrozenEncoder(run.encoder)
        paired = lambda rows: encoder.pairs([c for c, _ in rows], [r for _, r in rows], progress=False)  # noqa: E731
        xs = cached(f"{run.encoder}-s-train", list(zip(d.sc[:2 * SMALL], d.sr[:2 * SMALL])), paired, None)
        xsv = cached(f"{run.encoder}-s-valid", list(zip(d.svc, d.svr)), paired, None)
        fit("S", f"pair read together, {SMALL:,} pairs", xs, sy[:2 * SMALL], xsv, svy)
    fit("S", f"dual [c; r; c*r; abs(c - r)], {SMALL:,} pairs", x["s"][:2 * SMALL], sy[:2 * SMALL], x["sv"], svy)
    fit("S", f"dual [c; r; c*r; abs(c - r)], {args.s_pairs:,} pairs", x["s"], sy, x["sv"], svy)
    table = "\n".join(["| part | features, training data | training rows | validation rows | validation accuracy | hidden |",
                       "|---|---|---|---|---|---|", *rows])
    print(table)
    if args.save:
        threads = "one CPU thread" if args.threads == 1 else f"{args.threads} CPU threads"
        args.save.write_text(f"# USL-H's choices by DailyDialog validation accuracy\n\n`{' '.join(['python'] + sys.argv)}`"
                             f" ({args.encoder} frozen, {threads})\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
