"""multiref (Gupta et al. 2019) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from dialeval.core.spec import Behaviour, Benchmark, DemoChoice, Job, MetricSpec, PaperCell
from dialeval.multiref import scales
from dialeval.multiref.runner import run_multiref

MTURK = "multiref-mturk"
# sub-score -> row of Gupta et al.'s Table 4 (paper_tables.json gupta2019_multiref/table4)
PAPER_ROWS = {"bleu1": "BLEU-1", "bleu2": "BLEU-2", "bleu3": "BLEU-3", "bleu4": "BLEU-4", "meteor": "METEOR",
              "rougeL": "ROUGE-L", "embedding_average": "Embedding Average", "vector_extrema": "Vector Extrema",
              "greedy_matching": "Greedy Matching"}


def _mturk_judgments() -> list:
    from dialeval.multiref.data import load_multiref_mturk, with_five_references

    return with_five_references(load_multiref_mturk())


def published(set_name: str, metric: str, sub: str) -> PaperCell | None:
    """Table 4's multi-reference Spearman of ``sub`` on the rated set."""
    if set_name == MTURK and metric == "multiref" and sub in PAPER_ROWS:
        return ("gupta2019_multiref", "table4", PAPER_ROWS[sub], "multi_turn_spearman")
    return None


SPEC = MetricSpec(
    name="multiref",
    summary="BLEU / METEOR / ROUGE-L / embedding metrics as the max over several references (Gupta et al. 2019)",
    runner=run_multiref,
    reads_fields=("response", "references"),  # the context is never read
    scales=lambda: scales.SCALES,
    judgment_sets={MTURK: _mturk_judgments},
    published=published,
    benchmarks={MTURK: Benchmark("dialeval.multiref.benchmark", "multiref_mturk", "format_multiref_mturk",
                                 runs={MTURK: {}, f"{MTURK}-dialeval": {"tooling": "dialeval"}})},
    grid_jobs=(Job("multiref", "multiref", {}, ("bleu2", "bleu4", "meteor", "rougeL", "embedding_average",
                                                  "vector_extrema", "greedy_matching")),),
    headline=("bleu2", "meteor", "rougeL", "greedy_matching"),
    demo=(DemoChoice("multiref (BLEU / METEOR / ROUGE-L / embeddings vs. references)",
                     refers_to=(("", "response vs. references"),), needs=("references",)),),
    trainer_default=True,
    behaviour=Behaviour(note=(
        "not run: reference-based, and the suite's contexts have one human reply, which as the reference would "
        "give the real reply a perfect score by construction; judging it needs other references than the reply")),
)
