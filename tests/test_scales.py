"""Scales (MetricSpec.scales, dialeval.registry.describe): every sub-score a runner (with an option
that adds one) or evaluate module produces has a true description.

The names come from real runs on two items of every registered metric's runner but those of
``NOT_RUN`` (a new metric runs with its defaults): multiref, GRADE and SSREM with their bundled
models, FED, FULL and holistic coherence/fluency with the tiny random GPT-2 of ``tiny_lm`` (same
code, same names as the bundled LMs, in a second instead of half a minute), consistency with the
bundled NLI. The same runs check the degenerate-response policy of every metric on an empty reply.
"""

import dataclasses
import math

import pytest

from dialeval import registry
from dialeval.core.degenerate import worst
from dialeval.core.results import flags_of
from dialeval.core.scales import Scale
from dialeval.registry import describe
from dialeval.scoring.runners import RUNNERS, get_runner

ITEMS = [  # one context, two responses: holistic diversity needs a group of two
    {"context": ["Hi! How are you doing today?", "Fine, thanks. And you?"],
     "response": "I'm doing well, thanks for asking.", "references": ["Good, thanks.", "Not bad at all."]},
    {"context": ["Hi! How are you doing today?", "Fine, thanks. And you?"],
     "response": "I just got back from a long walk in the park.", "references": ["Good, thanks."]},
]


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory) -> str:
    from tiny_lm import tiny_gpt2

    path = tmp_path_factory.mktemp("tiny_gpt2_scales")
    tiny_gpt2(path)
    return str(path)


def module_only_scores() -> dict[str, dict[str, list[float]]]:
    """Sub-scores of the evaluate modules that no runner returns: multiref's diversity configuration
    and holistic diversity's per-order entropies (per-item keys without ``_scores``)."""
    from dialeval.holistic.scorer import diversity
    from dialeval.multiref.scorer import MultiRefScorer

    groups = [[it["response"] for it in ITEMS]]
    multiref = MultiRefScorer(meteor="nltk").diversity(groups, [ITEMS[0]["references"]])
    per_item = {"multiref": multiref, "holistic": diversity(groups)}
    return {metric: {k[: -len("_scores")]: v for k, v in result.items() if k.endswith("_scores")}
            for metric, result in per_item.items()}


# Runner options that keep a metric's run small (the tiny LM for the LM metrics); a metric not named
# here runs with its defaults, so a new metric is checked without an edit here.
OPTIONS = {
    "multiref": {"meteor": "nltk"},  # the METEOR jar gives the same name, with a JVM to start
    "fed": {"level": "both"},
    "holistic": {"cutoff": -10.0, "pmi_weight": 0},  # a fixed cutoff is Pang et al.'s coherence's (below: PMI's)
}
TINY_LM = ("fed", "holistic", "full")
# Sub-scores that only other options produce, and those options (added to the run with OPTIONS): holistic's
# default coherence, weighted PMI (coherence_pmi), takes the scored set's quartiles from a tiny LM, which has
# no stored calibration
OPTION_ONLY = {"holistic": {"aspects": ["coherence"], "cutoff": "set", "pmi_weight": None}}
# Metrics not run here, and why.
NOT_RUN = {"combined": "scores every other metric with its bundled weights (tests/test_combined.py)"}
RUN = [metric for metric in registry.METRICS if metric not in NOT_RUN]


def run_options(metric: str, tiny_lm_dir: str) -> dict:
    """The runner options of ``metric`` here: :data:`OPTIONS`, and the tiny LM for :data:`TINY_LM`."""
    return {**OPTIONS.get(metric, {}), **({"model": tiny_lm_dir} if metric in TINY_LM else {})}


@pytest.fixture(scope="module")
def produced(tiny_lm_dir) -> dict[str, dict[str, list[float]]]:
    """Per registered metric (but :data:`NOT_RUN`): every sub-score name a runner (or only an evaluate
    module) produces, with its values."""
    out = {metric: get_runner(metric)(ITEMS, **run_options(metric, tiny_lm_dir))[0] for metric in RUN}
    for metric, extra in module_only_scores().items():
        out[metric].update(extra)
    for metric, options in OPTION_ONLY.items():
        extra = get_runner(metric)(ITEMS, **{**run_options(metric, tiny_lm_dir), **options})[0]
        out[metric].update({name: values for name, values in extra.items() if name not in out[metric]})
    return out


def test_every_metric_flags_an_empty_reply_and_gives_it_the_worst_value(tiny_lm_dir):
    """The degenerate-response policy (:mod:`dialeval.core.degenerate`) in every registered metric's
    runner, a new one included: an empty reply is flagged and every directed sub-score is its worst."""
    items = [ITEMS[0], {**ITEMS[0], "response": ""}]
    for metric in RUN:
        scores = get_runner(metric)(items, **run_options(metric, tiny_lm_dir))
        assert flags_of(scores, items) == [[], ["empty"]], metric
        for score, values in scores[0].items():
            scale = describe(metric, score)
            if scale.higher_is_better is not None:
                assert values[1] == worst(scale), (metric, score, values)


def test_every_metric_of_the_runners_is_described():
    assert [spec.name for spec in registry.specs() if spec.scales()] == list(RUNNERS)


def test_every_produced_score_is_described_and_nothing_else(produced):
    for metric, per_item in produced.items():
        assert set(registry.spec(metric).scales()) == set(per_item), metric


def test_every_produced_value_lies_in_its_described_range(produced):
    for metric, per_item in produced.items():
        for score, values in per_item.items():
            scale = describe(metric, score)
            for value in (v for v in values if not math.isnan(v)):
                assert scale.low is None or value >= scale.low, (metric, score, value)
                assert scale.high is None or value <= scale.high, (metric, score, value)


def test_embedding_cosines_can_be_negative():
    """GloVe puts "lol" and "thanks" at an obtuse angle: the embedding scores go below 0 (so -1 to 1)."""
    per_item, _ = get_runner("multiref")([{"context": [], "response": "lol", "references": ["thanks"]}],
                                         metrics=["embedding_average", "vector_extrema", "greedy_matching"])
    for score, values in per_item.items():
        assert values[0] < -0.2, score
        assert describe("multiref", score).range_text() == "-1 to 1"


def test_fed_qualities_without_positive_followups_are_0_or_more():
    """Such a quality is minus the negative follow-ups' log-likelihood; the others are unbounded
    differences, clipped at their declared floor (the value a flagged response counts as)."""
    from dialeval.fed.scorer import QUALITIES_DIALOG, QUALITIES_TURN, followups, score_name

    for level, qualities in (("turn", QUALITIES_TURN), ("dialog", QUALITIES_DIALOG)):
        for quality in qualities:
            scale = describe("fed", score_name(level, quality))
            expected = ("-1000 or more (clipped at the floor -1000)" if followups(level, quality)["positive"]
                        else "0 or more")
            assert (scale.range_text(), scale.raw, scale.higher_is_better) == (expected, True, True), quality
    assert describe("fed", "turn_relevant").range_text() == "0 or more"
    assert describe("fed", "turn_interesting").range_text() == "-1000 or more (clipped at the floor -1000)"


def test_pinned_entries():
    coherence = describe("holistic", "coherence")
    assert (coherence.low, coherence.high, coherence.higher_is_better, coherence.raw) == (0.0, 1.0, True, False)
    assert "without the context" in describe("holistic", "fluency").meaning
    assert (describe("holistic", "fluency_raw").range_text(), describe("holistic", "fluency_raw").raw) == \
        ("-1,000,000 to 0 (clipped at the floor -1,000,000)", True)
    assert describe("holistic", "consistency_pairs").direction_text() == "no direction (a count)"
    assert describe("grade", "grade").range_text() == "0 to 1"
    assert (describe("ssrem", "ssrem").range_text(), describe("ssrem", "ssrem").raw) == ("0 to 1", False)
    assert (describe("ssrem", "ssrem_f").range_text(), describe("ssrem", "ssrem_f").raw) == ("-1000 or more (clipped at the floor -1000)", True)
    assert describe("multiref", "bleu4").direction_text() == "higher = better"


def test_scale_texts():
    assert Scale(None, None, False, True, "").direction_text() == "lower = better"
    assert Scale(0.5, None, True, False, "").range_text() == "0.5 or more"
    assert Scale(-2.0, 3.0, True, False, "").range_text() == "-2 to 3"


def test_scales_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        describe("grade", "grade").low = -1.0


def test_unknown_pairs_name_metric_and_score():
    with pytest.raises(ValueError, match=r"fed score 'turn_nonsense'"):
        describe("fed", "turn_nonsense")
    with pytest.raises(ValueError, match=r"unknown metric 'bleurt'"):
        describe("bleurt", "bleurt")
