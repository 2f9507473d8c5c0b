"""USL-H (Phy et al. 2020) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from dialeval.core.spec import (
    MEANING_CONTROLS, OVERALL_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark, CardSpec, DemoChoice, EvaluateSample, Job,
    MetricSpec,
)
from dialeval.usl import scales
from dialeval.usl.formula import DEFAULT_HIERARCHY
from dialeval.usl.heads import BUILD
from dialeval.usl.runner import AUTO_PRECISIONS, run_usl

FOLDER = "usl-dailydialog"
# Yeh, Eskenazi & Mehri 2021 ("A Comprehensive Assessment of Dialog Evaluation Metrics", Table 3 ff.):
# USL-H with the authors' BERT-base weights trained on DailyDialog, Spearman with the overall / coherence
# rating, on the shared sets (not in paper_tables.json; the values as issue 57 quotes them). Yeh's
# "Holistic-DailyDialog" is Pang et al.'s context-coherence set (holistic-coherence here).
YEH_SOURCE = ("Yeh, Eskenazi & Mehri 2021, A Comprehensive Assessment of Dialog Evaluation Metrics (EANCS), "
              "Spearman of USL-H (BERT-base, DailyDialog)")
YEH = {"grade-convai2": 0.457, "grade-dailydialog": 0.093, "grade-empathetic": 0.235, "holistic-coherence": 0.537,
       "fed-turn": 0.189, "fed-dialog": 0.152}

SPEC = MetricSpec(
    name="usl",
    summary="understandability, sensibleness and specificity combined hierarchically (USL-H, Phy et al. 2020)",
    runner=run_usl,
    auto_precisions=AUTO_PRECISIONS,
    scales=lambda: scales.SCALES,
    bundled=(FOLDER,),
    reads_fields=("context", "response"),
    default_settings={"hierarchy": DEFAULT_HIERARCHY},  # keys the score cache: a changed default re-scores
    build_hints={FOLDER: BUILD, f"dialeval/{FOLDER}": BUILD},
    # Yeh et al.'s numbers beside ours on each shared set they report (dialeval.usl.benchmark)
    benchmarks={f"usl-{name}": Benchmark("dialeval.usl.benchmark", "yeh", "format_yeh", (name,), runs={f"usl-{name}": {}})
                for name in YEH},
    grid_jobs=(Job("usl", "usl", {}, ("usl",)),),
    reported={(name, "usl"): (value, YEH_SOURCE) for name, value in YEH.items()},
    headline=("usl",),
    samples={FOLDER: (EvaluateSample(
        "usl", None, {"contexts": [[q] for q, _ in SAMPLE_PAIRS], "responses": [r for _, r in SAMPLE_PAIRS]},
        "model", "usl_scores"),)},
    cards={FOLDER: CardSpec(datasets=("li2017dailydialog/daily_dialog",), tags=("dialogue-evaluation", "usl"),
                            library_name="dialeval", license="cc-by-nc-sa-4.0", content="dialeval.usl.card:card_content")},
    demo=(DemoChoice("usl (USL-H: understandable, sensible, specific)",
                     refers_to=(("", "response given the context"), ("usl_u", "response alone"),
                                ("usl_s", "response given the context"), ("usl_l", "response alone")),
                     needs=("context",)),),
    behaviour=Behaviour(
        {"usl": OVERALL_KINDS}, {"usl": MEANING_CONTROLS},
        note=("USL-H rates overall quality (understandable, then sensible given the context, then specific): "
              "echoes, salads, another dialogue's reply and generic replies must score below the real reply")),
)
