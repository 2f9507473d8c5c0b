"""Train USL-H's parts (Phy et al. 2020) on DailyDialog and write the hub-ready folder.

U (valid utterance prediction) and S (next utterance prediction) are classifier heads over a frozen
encoder's cached features (all-mpnet-base-v2 by default, BERT-base size as the paper's; ``--encoder minilm-l6``
the smaller all-MiniLM-L6-v2); U reads, besides, its own top layer tuned with a LoRA adapter (``--u-lora``,
over the cached hidden states entering it, saved epoch by epoch). S reads ``[c; r; c*r; |c-r|]`` of the
context's and the response's features (``--s-input pair``: the pair read together).
L's normalisation is the quartiles of the LM's NLL of DailyDialog validation responses. Choices (each
head's hidden size, its stopping epoch, U's tuning epoch) read validation accuracy on DailyDialog's validation split,
never a human rating. Features, states and NLLs are cached in chunks and U's tuning by epoch (``$DIALEVAL_CACHE/usl``): an
interrupted run, or one stopped by ``--minutes``, goes on where it stopped with the same command. The recipe is
:mod:`dialeval.usl.training`; this script parses the options and calls it.

Examples::

    python training/usl.py --threads 2 --minutes 55      # -> hub/usl-dailydialog (+ card); run again until saved
    python training/usl.py --card                        # rewrite the bundled folder's README.md
    python training/usl.py --tiny --output OUT           # tests: 40 training dialogues
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dialeval.core.training import prepare_run
from dialeval.models.shipped import CHECKOUT_ROOT
from dialeval.publish import write_model_card
from dialeval.usl.features import ENCODERS, MPNET, S_INPUTS
from dialeval.usl.likelihood import DEFAULT_LM
from dialeval.usl.training import TRAINING_SIZE, TimeUp, train

BUNDLED = CHECKOUT_ROOT / "hub" / "usl-dailydialog"


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoder", choices=sorted(ENCODERS), default=MPNET, help="the frozen encoder under U and S")
    parser.add_argument("--s-input", choices=S_INPUTS, default="dual",
                        help="S's features: context and response encoded apart ([c; r; c*r; |c-r|]) or the pair read together")
    parser.add_argument("--lm", default=DEFAULT_LM, help="L's causal LM (a name, folder or dialeval/<name>)")
    # TRAINING_SIZE each: on all-mpnet-base-v2, 20,000 beat 4,000 in validation accuracy (U 0.763 -> 0.806,
    # S 0.825 -> 0.843; benchmarks/results/usl-choices.md), as on all-MiniLM-L6-v2
    parser.add_argument("--u-responses", type=int, default=TRAINING_SIZE, help="training responses for U (each gives 2 texts)")
    parser.add_argument("--s-pairs", type=int, default=TRAINING_SIZE, help="training (context, response) pairs for S (x2)")
    parser.add_argument("--valid", type=int, default=600, help="validation responses and pairs for U and S")
    parser.add_argument("--nll-responses", type=int, default=1000, help="validation responses for L's quartiles")
    parser.add_argument("--output", type=Path, default=BUNDLED)
    parser.add_argument("--card", action="store_true", help="only rewrite the bundled folder's model card")
    # the heads' Adam and the run's budget (the shared loop's other options do not apply: features are cached
    # in chunks, so the same command resumes, and the heads train in seconds)
    parser.add_argument("--lr", type=float, default=1e-3)
    # U's own top layers (dialeval/usl/u_tuning.py): LoRA rank 16 on all-mpnet-base-v2's top layer read U
    # 0.806 -> 0.874 against the frozen head, plateauing from epoch 6 of 8 (benchmarks/results/usl-finetune.md)
    parser.add_argument("--u-lora", type=int, default=16, help="LoRA rank on U's own top layers (0: U's head "
                                                               "reads the frozen features, as S)")
    parser.add_argument("--u-top", type=int, default=1, help="the encoder's top layers U tunes")
    parser.add_argument("--u-lr", type=float, default=5e-4)
    parser.add_argument("--u-epochs", type=int, default=8, help="epochs of U's tuning; the first of best "
                                                                "validation accuracy is kept")
    parser.add_argument("--minutes", type=float, default=None, help="stop between cached chunks after this wall time")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="the encoder's and the LM's device (default CPU)")
    parser.add_argument("--tiny", action="store_true", help="40 training dialogues (tests)")
    args = parser.parse_args(argv)
    if args.card:
        print(write_model_card(BUNDLED))
        return BUNDLED
    if args.tiny:
        args.u_responses, args.s_pairs, args.valid, args.nll_responses, args.u_epochs = 60, 60, 30, 30, 2
    if args.u_lora and args.device not in (None, "cpu"):
        parser.error("U's tuning (--u-lora) runs on the CPU only: drop --device, or pass --u-lora 0")
    output = prepare_run(args, args.output)
    try:
        report = train(args, output)
    except TimeUp as paused:
        print(paused, flush=True)
        return output
    print(f"saved {output}: U {report['u']['accuracy']:.4f}, S {report['s']['accuracy']:.4f} validation accuracy; "
          f"L quartiles {report['l']['quartiles']}; {report['wall_minutes']} min", flush=True)
    if output.resolve() == BUNDLED.resolve():
        write_model_card(output)
    return output


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
