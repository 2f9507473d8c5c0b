"""GRADE (Huang et al. 2020) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from dialeval.core.spec import (
    MEANING_CONTROLS, RELEVANCE_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark, CardSpec, DemoChoice, EvaluateSample,
    Job, MetricSpec, PaperCell,
)
from dialeval.grade import scales
from dialeval.grade.runner import AUTO_PRECISIONS, run_grade

# human-judgment set -> (folder under $DIALEVAL_DATA/grade/, the set's name in Table 1)
SETS = {"grade-convai2": ("convai2", "ConvAI2"), "grade-dailydialog": ("dailydialog", "DailyDialog"),
        "grade-empathetic": ("empatheticdialogues", "EmpatheticDialogues")}
# sub-score -> metric row of Table 1 (BLEU-4, ROUGE-L and METEOR come from multiref)
PAPER_ROWS = {"bleu4": "BLEU", "rougeL": "ROUGE", "meteor": "METEOR", "grade": "GRADE"}
# bundled folder -> how it is rebuilt; the default first: its cache (examples, negatives, keyword graphs)
# built on the CPU, the LoRA cross-encoder trained on a GPU; then the frozen-encoder model (an option)
BUILDS = {
    "grade-dailydialog-cross": (
        "python training/grade.py --lora-r 8 --pair-encoding cross --prepare-graphs --output hub/grade-dailydialog-cross"
        " && python training/grade.py --lora-r 8 --pair-encoding cross --epochs 1 --device cuda"
        " --output hub/grade-dailydialog-cross"),
    "grade-dailydialog": "python training/grade.py --output hub/grade-dailydialog",
}


def _judgments(folder: str):
    def load() -> list:
        from dialeval.grade.data import load_grade

        return load_grade(folder)
    return load


def published(set_name: str, metric: str, sub: str) -> PaperCell | None:
    """Table 1's ``average_of_4_correlations`` (Pearson and Spearman of two dialogue models), not a
    pooled correlation, for GRADE and the word-overlap baselines."""
    if set_name not in SETS or sub not in PAPER_ROWS or metric not in ("grade", "multiref"):
        return None
    return ("huang2020_grade", "table1", f"{SETS[set_name][1]} / {PAPER_ROWS[sub]}", "average_of_4_correlations")


SPEC = MetricSpec(
    name="grade",
    summary="graph-enhanced coherence of a response to its context (Huang et al. 2020)",
    runner=run_grade,
    auto_precisions=AUTO_PRECISIONS,
    scales=lambda: scales.SCALES,
    bundled=tuple(BUILDS),
    reads_fields=("context", "response"),
    build_hints={**BUILDS, **{f"dialeval/{folder}": build for folder, build in BUILDS.items()}},
    judgment_sets={name: _judgments(folder) for name, (folder, _) in SETS.items()},
    published=published,
    benchmarks={
        **{name: Benchmark("dialeval.grade.benchmark", "grade", "format_grade", (name.split("-", 1)[1],),
                           runs={name: {}}) for name in SETS},
        "grade-ablations": Benchmark("dialeval.grade.benchmark", "grade_ablations", "format_grade_ablations",
                                     runs={"grade-ablations": {}}),
    },
    grid_jobs=(Job("grade", "grade", {}, ("grade",)),),
    samples={folder: (EvaluateSample(
        "grade", None, {"contexts": [[q] for q, _ in SAMPLE_PAIRS], "responses": [r for _, r in SAMPLE_PAIRS]},
        "model", "grade_scores"),) for folder in BUILDS},
    cards={folder: CardSpec(
        datasets=("li2017dailydialog/daily_dialog",), tags=("grade", "dialogue-evaluation"), library_name="pytorch",
        license="cc-by-nc-sa-4.0", content="dialeval.grade.card:card_content")
        for folder in BUILDS},
    demo=(DemoChoice("grade (coherence via a keyword knowledge graph)",
                     refers_to=(("", "response given the context"),), needs=("context",)),),
    behaviour=Behaviour(
        {"grade": RELEVANCE_KINDS}, {"grade": MEANING_CONTROLS},
        note="GRADE rates the response's coherence with its context: a reply that fits no context must score lower"),
)
