"""Train SSREM's ``f(c, r) = v(c)^T M v(r)`` (Bak & Oh 2020, Section 3.3) on a speaker-tagged corpus.

Each training step takes ``--batch-size`` (context, true response) pairs of the training split and,
for each, a candidate set: the true response plus ``--per-type`` negatives of each speaker-sensitive
type (same conversation SC, same partner SP, same speaker SS, random RN; see
:class:`dialeval.ssrem.negatives.NegativeSampler`, which falls back SC -> SP -> SS -> RN when a pool is
empty); the loss is ``-log softmax`` of the true candidate over the candidates' ``f``. With
``--negatives random`` every negative is random (RSREM, the paper's ablation; same candidate-set size).

Corpus: ``--corpus chitchat`` (PyPI ``chitchat-dataset``: 4,017 two-party conversations with a
reply, 1,195 persistent sender ids; the authors' Twitter corpus is not public) or any JSONL of
``{"turns": [{"speaker", "text"}, ...]}``. Split 80/10/10 by conversation
(:func:`dialeval.ssrem.corpus.split_of`, a content hash, so it does not depend on the corpus order).
``v(.)`` is frozen (GloVe average, MiniLM-L6 or all-mpnet-base-v2, ``--encoder``), so every utterance and
context is encoded once (cached under ``$DIALEVAL_CACHE/ssrem``) and only ``M`` is trained: CPU minutes. A word
average is centred on the mean average of the training utterances (stored as ``center`` in
``config.json``; ``--no-center`` keeps the raw average). Negative pools hold only utterances with
at least ``--min-tokens`` word tokens (default 3). SSREM and RSREM differ only in ``--negatives``:
train both with the same ``--max-steps`` and no ``--minutes`` limit for identical budgets.

Three departures, off by default (the GloVe model is the paper's recipe) and on for the default
mpnet model (issue 32; ``benchmarks/results/ssrem-mpnet-variants.md`` has the measurements that chose them):
``--context-pooling turns`` makes ``v(c)`` the mean of the context turns' unit vectors, taken from
the utterance table instead of encoding every context again; ``--target-min-tokens 3`` applies the
negatives' length rule to the true responses too (else a short generic reply is never a negative and
``f`` learns to prefer it); ``--identity-penalty`` starts ``M`` at the identity (``f`` = the
encoder's cosine) and adds ``lambda * ||M - I||^2`` to the loss, so that training corrects the
untrained baseline rather than replacing it.

After training: the min-max constants of ``f`` and ``g`` (1st / 99th percentiles over the
validation split's candidates; ``g`` of each negative against the true response, per mover mode)
go into ``config.json``; Section 6's held-out comparison (:func:`dialeval.ssrem.heldout.heldout_negatives`
on the test split) into the report ``dialeval_training.json``. ``--output`` is a hub-ready folder
(safetensors + config + report; ``--card`` writes the model card of the bundled folder from the
reports and the saved benchmark results: :mod:`dialeval.ssrem.card` through
:func:`dialeval.publish.write_model_card`).

The run itself is :func:`dialeval.ssrem.training.train`; this script parses the options and calls it.

Examples::

    python training/ssrem.py --negatives random --threads 1              # -> hub/ssrem-chitchat/ablation-rsrem
    python training/ssrem.py --threads 1                                 # -> hub/ssrem-chitchat (+ card)
    python training/ssrem.py --card                                      # rewrite every bundled folder's README.md
    python training/ssrem.py --tiny --corpus convs.jsonl --output OUT    # tests

The default model, ``hub/ssrem-chitchat-mpnet`` (all-mpnet-base-v2 turn vectors), and its ablation:
:data:`dialeval.ssrem.spec.BUILDS` has the two command lines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dialeval.core.training import add_loop_arguments, prepare_run
from dialeval.publish import write_model_card
from dialeval.ssrem.checkpoint import ABLATION
from dialeval.ssrem.encoders import CONTEXT_POOLINGS, SENTENCE_ENCODERS
from dialeval.ssrem.negatives import MIN_TOKENS, NEGATIVE_MODES
from dialeval.ssrem.training import BUNDLED, BUNDLED_FOLDERS, EncodingPaused, default_output, report_line, train


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="chitchat", help="'chitchat' or a JSONL of speaker-tagged conversations")
    parser.add_argument("--negatives", choices=NEGATIVE_MODES, default="speaker",
                        help="speaker: SC/SP/SS/RN (SSREM); random: RN only (RSREM)")
    parser.add_argument("--encoder", default=None,
                        help=f"v(.): None = GloVe 6B 50d average, a word-vector file, or one of "
                             f"{sorted(SENTENCE_ENCODERS)} (frozen, encoded once in resumable chunks)")
    parser.add_argument("--per-type", type=int, default=2, help="negatives of each type per pair")
    parser.add_argument("--context-turns", type=int, default=3)
    parser.add_argument("--context-pooling", choices=CONTEXT_POOLINGS, default="joined",
                        help="v(c): joined = the turns encoded as one text (the paper's word average); turns = the "
                             "mean of the turns' unit vectors (sentence encoders; reuses the utterance encodings)")
    parser.add_argument("--min-tokens", type=int, default=MIN_TOKENS,
                        help="negative pools hold only utterances with at least this many word tokens")
    parser.add_argument("--target-min-tokens", type=int, default=0,
                        help="train only on pairs whose true response has at least this many word tokens (default "
                             "0: all; --min-tokens's value keeps length alone from telling true from negative)")
    parser.add_argument("--no-center", dest="center", action="store_false",
                        help="keep the raw word average (default: centred on the training utterances' mean)")
    parser.add_argument("--identity-penalty", type=float, default=0.0,
                        help="0: M starts at zero, unregularised (the paper); > 0: M starts at the identity (f = the "
                             "encoder's cosine) and the loss adds this times ||M - I||^2 (a learned scale sets the "
                             "logits' temperature)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--minmax-pairs", type=int, default=300)
    parser.add_argument("--heldout-pairs", type=int, default=None, help="default: every test pair")
    parser.add_argument("--max-conversations", type=int, default=None, help="use only the corpus' first N")
    parser.add_argument("--output", type=Path, help=f"default: {BUNDLED} (random: .../{ABLATION})")
    parser.add_argument("--card", action="store_true", help="only rewrite the bundled folders' model cards")
    add_loop_arguments(parser, lr=3e-3, warmup=100, max_steps=3000, what_tiny="the first 60 conversations")
    args = parser.parse_args(argv)
    if args.card:
        for folder in BUNDLED_FOLDERS:
            print(write_model_card(folder))
        return BUNDLED
    for name in ("per_type", "context_turns", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.tiny:
        args.max_steps, args.save_every, args.warmup, args.batch_size = min(args.max_steps, 30), 10, 1, 8
    output = prepare_run(args, args.output or default_output(args.negatives))
    try:
        state = train(args, output)
    except EncodingPaused as paused:  # --minutes ran out while encoding the corpus: the chunks done are kept
        print(paused, flush=True)
        return output
    print(f"saved {output} after {state['step']} steps ({state.get('minutes')} min); {report_line(state)}", flush=True)
    if output.resolve() in [folder.resolve() for folder in BUNDLED_FOLDERS]:
        write_model_card(output)
    if args.push_to_hub:
        from huggingface_hub import HfApi

        HfApi().upload_folder(folder_path=str(output), repo_id=f"dialeval/{output.name}")
    return output


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
