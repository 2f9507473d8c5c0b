"""No metric rewards an empty or repeated response under its default options (issue 23, item 1):
"" and a sentence said 50 times never outscore a plain, sensible reply, and carry their flag."""

import math

import pytest

import dialeval

CONTEXT = ["Do you like reading books?"]
PLAIN = "Yes, mostly novels. I read one every week."
REPEATED = " ".join(["I like it."] * 50)
RESPONSES = [PLAIN, "", REPEATED]
FLAGS = [[], ["empty"], ["repetitive"]]


def not_rewarded(scores: list[float]) -> None:
    """The degenerate responses' scores are NaN (no worst value on the scale) or at most the plain one's."""
    plain, *degenerate = scores
    assert not math.isnan(plain)
    for value in degenerate:
        assert math.isnan(value) or value < plain


@pytest.mark.slow
def test_multiref():
    out = dialeval.load("multiref").compute(predictions=RESPONSES, references=[["I read novels every week."]] * 3)
    assert out["flags"] == FLAGS
    for name in ("bleu1", "bleu2", "meteor", "rougeL", "embedding_average", "vector_extrema", "greedy_matching"):
        not_rewarded(out[f"{name}_scores"])


@pytest.mark.slow
def test_fed():
    out = dialeval.load("fed").compute(conversations=[CONTEXT + [r] for r in RESPONSES], level="turn")
    assert out["flags"] == FLAGS
    for name in (k for k in out if k.endswith("_scores")):
        not_rewarded(out[name])


@pytest.mark.slow
@pytest.mark.parametrize("aspect", ["coherence", "fluency"])
def test_holistic_likelihood(aspect):
    inputs = {"queries": [CONTEXT[0]] * 3} if aspect == "coherence" else {}
    out = dialeval.load("holistic", aspect).compute(responses=RESPONSES, **inputs)
    assert out["flags"] == FLAGS
    assert out[f"{aspect}_scores"][1:] == [0.0, 0.0] and out[f"{aspect}_scores"][0] > 0.0


@pytest.mark.slow
def test_holistic_consistency():
    out = dialeval.load("holistic", "consistency").compute(
        histories=[["I read a lot.", "Nice!"]] * 3, responses=RESPONSES)
    assert out["flags"] == FLAGS
    assert out["consistency_scores"][1:] == [0.0, 0.0] and out["consistency_scores"][0] > 0.0


@pytest.mark.slow
def test_grade():
    out = dialeval.load("grade").compute(contexts=[CONTEXT] * 3, responses=RESPONSES)
    assert out["flags"] == FLAGS
    assert out["grade_scores"][1:] == [0.0, 0.0] and out["grade_scores"][0] > 0.0


@pytest.mark.slow
def test_ssrem():
    out = dialeval.load("ssrem").compute(contexts=[CONTEXT] * 3, responses=RESPONSES,
                                         references=["I read novels every week."] * 3)
    assert out["flags"] == FLAGS
    for name in ("ssrem", "ssrem_f", "ssrem_g"):
        not_rewarded(out[f"{name}_scores"])
