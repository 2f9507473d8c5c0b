"""SSREM (Bak & Oh 2020) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from typing import Any, Mapping

from dialeval.core.spec import (
    MEANING_CONTROLS, RELEVANCE_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark, CardSpec, DemoChoice, EvaluateSample,
    Job, MetricSpec,
)
from dialeval.ssrem import scales
from dialeval.ssrem.runner import AUTO_PRECISIONS, run_ssrem

# The rated sets of the Table 4 layout (single-reference multiref-mturk, GRADE's three sets)
TABLE4_SETS = ("multiref-mturk", "grade-convai2", "grade-dailydialog", "grade-empatheticdialogues")
# bundled folder -> how it is rebuilt, the default first: all-mpnet-base-v2 turn vectors (the utterance
# encodings cached once, about 80 CPU minutes), then the GloVe model (an option); each folder holds its
# RSREM ablation
MPNET_RUN = ("python training/ssrem.py --encoder mpnet-base --context-pooling turns --target-min-tokens 3 "
             "--identity-penalty 1e-4 --heldout-pairs 500 --threads 1")
BUILDS = {
    "ssrem-chitchat-mpnet": f"{MPNET_RUN} --negatives random --output hub/ssrem-chitchat-mpnet/ablation-rsrem"
                            f" && {MPNET_RUN} --output hub/ssrem-chitchat-mpnet",
    "ssrem-chitchat": "python training/ssrem.py --negatives random --threads 1 && python training/ssrem.py --threads 1",
}
# The demo scores one item: the set's own min-max (scaling="set", the paper) would give it 0.5
# whatever it says; the percentiles stored with the model keep the score independent of the set.
DEMO_SCALING = "model"


def fields_read(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The item fields SSREM reads: the context and response, and the references unless
    ``reference_free`` (the context fit ``ssrem_f`` alone)."""
    return ("context", "response") if options.get("reference_free") else ("context", "response", "references")


SPEC = MetricSpec(
    name="ssrem",
    summary="speaker-sensitive context/reference similarity (Bak & Oh 2020)",
    runner=run_ssrem,
    auto_precisions=AUTO_PRECISIONS,
    scales=lambda: scales.SCALES,
    bundled=tuple(BUILDS),
    reads_fields=fields_read,
    build_hints={**BUILDS, **{f"dialeval/{folder}": build for folder, build in BUILDS.items()}},
    benchmarks={
        **{f"ssrem-{name}": Benchmark("dialeval.ssrem.benchmark", "table4", "format_table4", (name,),
                                      runs={f"ssrem-{name}": {}}) for name in TABLE4_SETS},
        "ssrem-all": Benchmark("dialeval.ssrem.benchmark", "table4_all", "format_table4"),
        "ssrem-heldout": Benchmark("dialeval.ssrem.benchmark", "heldout", "format_heldout", runs={"ssrem-heldout": {}}),
    },
    # ssrem-f: the context fit alone, on every set with contexts (references or not); the combined
    # metric reads it where no references are given
    grid_jobs=(Job("ssrem", "ssrem", {}, ("ssrem",)), Job("ssrem-f", "ssrem", {"reference_free": True}, ("ssrem_f",))),
    samples={folder: (EvaluateSample(
        "ssrem", None, {"contexts": [[q] for q, _ in SAMPLE_PAIRS], "responses": [r for _, r in SAMPLE_PAIRS],
                        "references": [r for _, r in reversed(SAMPLE_PAIRS)]}, "model", "ssrem_scores"),)
        for folder in BUILDS},
    cards={folder: CardSpec(datasets=("chitchat-dataset",), tags=("dialogue-evaluation", "ssrem"),
                            library_name="dialeval", content="dialeval.ssrem.card:card_content")
           for folder in BUILDS},
    demo=(DemoChoice("ssrem (learned context fit + similarity to references)", {"scaling": DEMO_SCALING},
                     refers_to=(("ssrem_f", "response given the context"), ("ssrem_g", "response vs. references"),
                                ("", "response given the context and references")),
                     needs=("context", "references")),
          DemoChoice("ssrem_f (SSREM's learned context fit alone, no references)", {"reference_free": True},
                     refers_to=(("", "response given the context"),), needs=("context",))),
    behaviour=Behaviour(
        {"ssrem_f": RELEVANCE_KINDS}, {"ssrem_f": MEANING_CONTROLS}, references=True,
        # ssrem_f never reads the references: reference_free=True gives each item the same ssrem_f (and
        # flags), so the one stored reference serves both (tests/test_ssrem.py)
        neutral_options=("reference_free",),
        note=("the reference-free half ssrem_f (the learned fit to the context) is judged: the suite's only "
              "reference is the real reply itself, which the headline ssrem would reward by construction")),
)
