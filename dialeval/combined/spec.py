"""The combined metric declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dialeval.combined import scales
from dialeval.combined.runner import run_combined, runs_read
from dialeval.core.spec import (
    MEANING_CONTROLS, OVERALL_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark, CardSpec, EvaluateSample, Job, MetricSpec,
)

BUILD = "dialeval benchmark --all && python training/combined.py"


def held_out_set(options: Mapping[str, Any], set_name: str, items: Sequence[dict]) -> dict[str, Any]:
    """On a human-judgment set the bundled model holds out, score with the model trained without its
    source's sets (for a design that reads no rating, the one model): the grid never reports an
    in-sample combined score."""
    from dialeval.combined.model import CombinedModel
    from dialeval.combined.runner import DEFAULT_MODEL, resolve_folder
    from dialeval.models import ModelNotFoundError

    try:
        trained_on = CombinedModel.load(resolve_folder(DEFAULT_MODEL)).held_out
    except ModelNotFoundError:
        return dict(options)  # the runner then reports the missing weights
    return {**options, "held_out": set_name} if set_name in trained_on else dict(options)


SPEC = MetricSpec(
    name="combined",
    summary="the mean percentile among human replies of the components that pass the behavioural suite "
            "(coherence, GRADE, SSREM's f), chosen leave-one-source-out against GRADE alone",
    runner=run_combined,
    # what its default design's components read under their jobs' options (dialeval.combined.designs.JOBS)
    reads_fields=("context", "response"),
    scales=lambda: scales.SCALES,
    bundled=("combined-judgments",),
    # the components' folders key the cached scores too (the combined score is a function of theirs)
    reads=("holistic", "grade", "ssrem"),
    reads_runs=runs_read,
    build_hints={"dialeval/combined-judgments": BUILD, "combined-judgments": BUILD},
    # the correlation run: every set the bundled model holds out, its components read from the score cache
    # of `dialeval benchmark --all` (scored first where missing)
    benchmarks={"combined-loso": Benchmark("dialeval.combined.benchmark", "leave_one_set_out", "format_table",
                                           runs={"combined-loso": {}}),
                # the designs of issue 57 against GRADE alone, each set held out with its source's sets
                "combined-loso-source": Benchmark("dialeval.combined.transfer", "leave_one_source_out", "format_table",
                                                  runs={"combined-loso-source": {}})},
    grid_jobs=(Job("combined", "combined", {}, ("combined",), options_for=held_out_set),),
    cards={"combined-judgments": CardSpec(tags=("dialogue-evaluation", "combined-metric"), library_name="dialeval",
                                          content="dialeval.combined.card:card_content")},
    headline=("combined",),
    samples={"combined-judgments": (EvaluateSample(  # references would change nothing: no component reads them
        "combined", None, {"contexts": [[q] for q, _ in SAMPLE_PAIRS], "responses": [r for _, r in SAMPLE_PAIRS]},
        "model", "combined_scores"),)},
    behaviour=Behaviour(
        {"combined": OVERALL_KINDS}, {"combined": MEANING_CONTROLS},
        note=("an overall-quality score of the components that pass the suite themselves; none reads "
              "references")),
)
