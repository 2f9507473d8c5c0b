"""The degenerate-response policy (dialeval.core.degenerate), on hand-computed values (issue 23)."""

import math

import pytest

from dialeval.core.degenerate import apply_policy, repeated_share, response_flags, unknown_words, worst
from dialeval.core.scales import Scale


def test_repeated_share_counts_repeated_word_trigrams():
    assert repeated_share("the the the the the") == pytest.approx(2 / 3)  # 3 trigrams, 1 distinct
    assert repeated_share("I think that I think so") == 0.0
    assert repeated_share("a b c a b c a b c") == pytest.approx(4 / 7)  # 7 trigrams, 3 distinct
    assert repeated_share("hi there") == 0.0  # no trigram


@pytest.mark.parametrize("text, flags", [
    ("", ["empty"]), (" \n\t", ["empty"]),
    ("The the the the the", ["repetitive"]),
    (" ".join(["I like it."] * 50), ["repetitive"]),
    ("ha ha ha ha", []),  # 2 trigrams, 1 repeats: 0.5 is not more than the threshold
    ("weather weather the the good good good", []),  # word salad, not repetition
    ("She loves reading, especially mystery novels.", []),
])
def test_response_flags(text, flags):
    assert response_flags(text) == flags


def test_worst_is_the_bound_on_the_bad_side():
    assert worst(Scale(0.0, 1.0, True, False, "")) == 0.0
    assert worst(Scale(-1.0, 1.0, True, False, "")) == -1.0
    assert worst(Scale(0.0, 5.0, False, False, "")) == 5.0
    assert math.isnan(worst(Scale(None, None, True, True, "")))  # unbounded: no worst value
    assert math.isnan(worst(Scale(0.0, None, None, False, "")))  # a count has no direction


def test_policy_sets_flagged_items_and_keeps_counts():
    scales = {"s": Scale(0.0, 1.0, True, False, ""), "raw": Scale(None, 0.0, True, True, ""),
              "pairs": Scale(0.0, None, None, False, "")}
    out = apply_policy({"s": [0.9, 0.8], "raw": [-1.0, -2.0], "pairs": [2.0, 3.0], "other": [1.0, 1.0]},
                       [["empty"], []], scales)
    assert out["s"] == [0.0, 0.8] and out["pairs"] == [2.0, 3.0] and out["other"] == [1.0, 1.0]
    assert math.isnan(out["raw"][0]) and out["raw"][1] == -2.0


def test_unknown_words_needs_two_words_mostly_outside_the_known_ones():
    ranks = {"the": 0, "novels": 5519, "lol": 73048, "asdf": 117853, "haha": 154265}
    assert unknown_words("asdf qwer zxcv", ranks) == ["unknown_words"]  # rank >= 100,000 or absent
    assert unknown_words("haha lol", ranks) == []  # 1 of 2 is not more than half
    assert unknown_words("qwer", ranks) == []  # one word: too short to judge
    assert unknown_words("the novels", ranks) == []

