"""FULL (De Bruyn et al. 2022) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from dialeval.core.spec import (
    MEANING_CONTROLS, OVERALL_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark, CardSpec, DemoChoice, EvaluateSample,
    Job, MetricSpec, dialog_level_on, fallback_note,
)
from dialeval.full import scales
from dialeval.full.runner import AUTO_PRECISIONS, STAND_INS, default_full_model, run_full

LEVELS = ("turn", "dialog")
PAPER_MODEL = "facebook/blenderbot-400M-distill"
# Not in paper_tables.json: De Bruyn et al. 2022 (COLING), Spearman of FULL (BlenderBot-400M-distill,
# the 4 released follow-ups) with the FED data's overall rating; the authors' notebook reproduces
# the turn-level value (0.5057).
PAPER_SOURCE = ("De Bruyn, Lotfi, Buhmann & Daelemans 2022, COLING (arXiv 2209.05185), Spearman of FULL with "
                "BlenderBot-400M-distill on the FED overall ratings (375 turns / 125 dialogs)")
PUBLISHED = {"fed-turn": 0.506, "fed-dialog": 0.695}
BUILD = "python training/finetune_lm.py --preset dialogue --output hub/smollm2-dialogue --threads 1 --minutes 35"
# results file suffix -> the model of FULL's correlation runs (benchmarks/correlations.py)
CORRELATION_MODELS = {"": STAND_INS[0], "-gemma3-dialogue": "dialeval/gemma3-dialogue", "-gemma3-270m": "gemma3-270m"}


SPEC = MetricSpec(
    name="full",
    summary="dialogue quality from the likelihood of negative follow-ups (De Bruyn et al. 2022)",
    runner=run_full,
    auto_precisions=AUTO_PRECISIONS,
    scales=scales.scales,
    bundled=("smollm2-dialogue",),
    reads_fields=("context", "response"),
    default_models=lambda: {"model": default_full_model()},
    build_hints={PAPER_MODEL: BUILD},
    hub_alternatives={PAPER_MODEL: STAND_INS[0]},
    # the correlation runs, every variant from one pass: the bundled adapter (the results files without
    # a suffix), FED's dialogue adapter and its un-tuned Gemma-3-270M base
    benchmarks={f"fed-{level}": Benchmark("dialeval.full.benchmark", "full", "format_full", (level,), runs={
        f"full-fed-{level}{suffix}": {"model": model, "variant": "all"}
        for suffix, model in CORRELATION_MODELS.items()}) for level in LEVELS},
    # whole conversations on FED's dialog-level set, a response after its context elsewhere
    grid_jobs=(Job("full", "full", {}, ("full",), options_for=dialog_level_on("fed-dialog")),),
    headline=("full",),
    example_note=fallback_note(PAPER_MODEL, STAND_INS[0]),
    cards={"smollm2-dialogue": CardSpec(
        title="SmolLM2-135M-Instruct, LoRA-tuned on whole DailyDialog + chit-chat conversations",
        summary=(
            "The dialogue model of dialeval's FULL when BlenderBot-400M-distill cannot be had (and FED's "
            "until `dialeval/gemma3-dialogue` replaced it): SmolLM2-135M-Instruct with a "
            "LoRA adapter trained on whole conversations written as FED reads them, "
            "`eos turn1 eos turn2 ...`, from DailyDialog train and the chit-chat corpus."
        ),
        used_by=("`evaluate.load(\"dialeval/full\")` (offline default); FED with "
                 "`model=\"dialeval/smollm2-dialogue\"`"),
        datasets=("li2017dailydialog/daily_dialog",),
        tags=("dialogue", "evaluation", "lora", "full", "fed"),
        pipeline_tag="text-generation",
        usage=('full = evaluate.load("dialeval/full")\n'
               'full.compute(contexts=[["Hi!"]], responses=["Hello, how is your day?"], '
               'model="dialeval/smollm2-dialogue")'),
        benchmarks=(
            ("fed-dialog", "overall", "fed-dialog-smollm2-dialogue-lora-conditional",
             "fed-dialog-smollm2-dialogue-conditional"),
        ),
        full={"steps": 102, "minutes": 32, "perplexity_base": 44.43, "perplexity_tuned": 16.69, "size_mb": 538,
              "spearman": {"fed-dialog": 0.5079}},
    )},
    samples={"smollm2-dialogue": (EvaluateSample(
        "full", None, {"contexts": [[q] for q, _ in SAMPLE_PAIRS], "responses": [r for _, r in SAMPLE_PAIRS]},
        "model", "full_scores"),)},
    demo=(DemoChoice("full (likelihood of negative follow-ups)", {}, refers_to=(("", "response"),)),),
    behaviour=Behaviour(
        {"full": OVERALL_KINDS}, {"full": MEANING_CONTROLS},
        note="FULL rates the dialogue's quality after the reply: echoes, salads, generic replies and "
             "another dialogue's reply must score lower"),
)
