"""The Wilson score interval (dialeval.stats.proportion), on values computed by hand (issue 54, item 7)."""

import math

import pytest
from scipy import stats

from dialeval.stats.proportion import wilson_interval


def test_nine_of_ten_by_hand():
    # z = 1.959964 (97.5 % normal quantile), z^2 = 3.841459; n = 10, p = 0.9:
    # centre = (0.9 + 0.1920729) / 1.3841459 = 0.7889869
    # half = 1.959964 / 1.3841459 * sqrt(0.009 + 0.0096036) = 1.4160097 * 0.1363952 = 0.1931369
    low, high = wilson_interval(9, 10)
    assert low == pytest.approx(0.5958499, abs=1e-6)
    assert high == pytest.approx(0.9821238, abs=1e-6)


def test_all_of_ten_does_not_shrink_to_a_point():
    # p = 1: centre = 1.1920729 / 1.3841459 = 0.8612336, half = 1.4160097 * sqrt(0.0096036) = 0.1387664
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7224672, abs=1e-6) and high == 1.0
    assert wilson_interval(0, 10)[0] == 0.0


def test_ninety_of_a_hundred_and_other_confidences():
    # n = 100, p = 0.9: centre = (0.9 + 0.0192073) / 1.0384146 = 0.8852026,
    # half = 1.959964 / 1.0384146 * sqrt(0.0009 + 0.0000960) = 1.8874581 * 0.0315600 = 0.0595683
    low, high = wilson_interval(90, 100)
    assert (low, high) == (pytest.approx(0.8256343, abs=1e-6), pytest.approx(0.9447709, abs=1e-6))
    narrower = wilson_interval(90, 100, confidence=0.5)
    assert low < narrower[0] < 0.9 < narrower[1] < high


@pytest.mark.parametrize("k, n", [(9, 10), (10, 10), (0, 7), (1, 1), (19, 20), (180, 200), (37, 91)])
def test_agrees_with_scipy(k, n):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k, n) == (pytest.approx(ci.low, abs=1e-12), pytest.approx(ci.high, abs=1e-12))


@pytest.mark.parametrize("k, n, confidence", [(11, 10, 0.95), (-1, 10, 0.95), (0, 0, 0.95), (5, 10, 1.0),
                                              (5, 10, 0.0), (5.0, 10, 0.95)])
def test_bad_input_is_refused(k, n, confidence):
    with pytest.raises(ValueError, match="wilson_interval needs|confidence must be"):
        wilson_interval(k, n, confidence)


def test_the_interval_holds_the_share():
    for n in (1, 2, 5, 10, 33):
        for k in range(n + 1):
            low, high = wilson_interval(k, n)
            assert 0.0 <= low <= k / n <= high <= 1.0 and not math.isnan(low)
