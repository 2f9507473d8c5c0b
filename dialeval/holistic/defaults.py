"""The language model holistic coherence and fluency use when none is named (torch-free, so that the
spec, the runner and the scorer read one name).

The paper fine-tunes GPT-2 on DailyDialog (not released); the bundled stand-in does the same for
Gemma-3-270M (``hub/gemma3-dailydialog``, a LoRA adapter built by ``python training/finetune_lm.py
--preset dailydialog --base gemma3-270m``) and carries its stored cutoffs. It was chosen over the
same recipe on SmolLM2-135M-Instruct (``hub/smollm2-dailydialog``, kept as an option) by bits per
character of DailyDialog validation responses given their queries, 1.010 against 1.046
(``benchmarks/results/lm-bits-per-char-pairs.json``), no human rating read.
"""

LOCAL_LM_NAME = "gemma3-dailydialog"
DEFAULT_LM = f"dialeval/{LOCAL_LM_NAME}"
