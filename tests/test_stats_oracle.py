"""dialeval.stats.paired's approximate randomization against an external implementation: sacrebleu's
paired AR test (``sacrebleu.significance._paired_ar_test``, sacrebleu 2.x, which follows multeval's
stratified approximate randomization; the function is private, the algorithm is what ``sacrebleu
--paired-ar`` runs).

sacrebleu's algorithm, with ``T`` trials and ``n`` items: ``pos_sel = default_rng(seed).integers(2,
size=(T, n), dtype=bool)``; in trial ``t`` pseudo-system A takes the baseline's item ``i`` where
``pos_sel[t, i]``, the other system's elsewhere, B the converse; both corpus scores are recomputed
from the summed sufficient statistics and ``p = (1 + #{t : |score(A_t) - score(B_t)| > |score(base)
- score(system)|}) / (T + 1)``. Given a "metric" whose sufficient statistic is the per-item score and
whose corpus score is the mean (:class:`MeanOfItems`), ``|score(A_t) - score(B_t)| = |sum_i s_ti d_i|
/ n`` with ``s_ti = +-1``: exactly our statistic, so the two tests are the same test. What differs:

1. the random stream: sacrebleu swaps where a bounded integer draw of ``default_rng(seed)`` is 0, we
   where a double of the second generator of ``SeedSequence(seed).spawn(2)`` is below 0.5 (same
   distribution: each item swapped with probability 1/2, independently), so with the same seed and
   the same number of trials the two p-values agree within Monte-Carlo error, not to the digit;
2. ties: sacrebleu counts ``>``, we count ``>=`` (with a 1e-9 relative tolerance). On the pinned
   example below (scores with four decimals, chosen so) no swap pattern other than the identity and
   the full swap reaches ``|delta|``, which are 2 of the ``2**16`` patterns; identical systems are
   where it shows: sacrebleu gives ``1 / (T + 1)``, we give 1 (documented in
   :mod:`dialeval.stats.paired`).

Pinned: the scores (16 items, sentence-level-BLEU-like values), the seed (12345, sacrebleu's default
``SACREBLEU_SEED`` and ours) and ``T = 10000`` (sacrebleu's default for AR and ours). Our exact test
(all ``2**16`` patterns) gives ``p = 0.0614013671875``; sacrebleu's estimate and our Monte-Carlo one
must lie within 4 standard errors of it (observed with numpy 2.4 and sacrebleu 2.6: 0.05989 and
0.06289, both within 1 standard error of 0.0024).
"""

from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pytest

sacrebleu_significance = pytest.importorskip("sacrebleu.significance")  # in the `test` extra

from dialeval.stats.paired import compare  # noqa: E402

A = [49.9921, 38.6727, 23.0344, 37.5986, 20.3016, 52.052, 43.6106, 55.8646, 49.3073, 44.5045, 36.8991, 21.0416,
     51.4974, 23.6718, 46.1919, 41.7486]
B = [52.9319, 34.6158, 24.6278, 23.9256, 14.0888, 44.0754, 38.5301, 56.8198, 60.069, 35.1508, 33.3147, 28.5042,
     35.2103, 17.8738, 36.1203, 40.9467]
SEED = 12345
TRIALS = 10000


class MeanOfItems:
    """The two methods of a sacrebleu ``Metric`` that its AR test calls: the sufficient statistics of
    a system are its per-item scores (one column), the corpus score is their mean."""

    def __init__(self, scores: dict[str, float], n: int):
        self.scores, self.n = scores, n

    def _extract_corpus_statistics(self, hypotheses, references):
        return np.array([[self.scores[h]] for h in hypotheses])

    def _aggregate_and_compute(self, stats):
        return types.SimpleNamespace(score=float(np.sum(stats)) / self.n)


def sacrebleu_ar(a, b, trials=TRIALS, seed=SEED) -> float:
    """sacrebleu's paired AR p-value of system ``b`` against the baseline ``a``."""
    n = len(a)
    metric = MeanOfItems({**{f"a{i}": v for i, v in enumerate(a)}, **{f"b{i}": v for i, v in enumerate(b)}}, n)
    baseline_stats = metric._extract_corpus_statistics([f"a{i}" for i in range(n)], None)
    baseline = (baseline_stats, sacrebleu_significance.Result(metric._aggregate_and_compute(baseline_stats).score))
    _, results = sacrebleu_significance._paired_ar_test(
        {"mean": baseline}, "b", [f"b{i}" for i in range(n)], None, {"mean": metric}, n_samples=trials, seed=seed)
    return results["mean"].p_value


def ours(a, b, **settings) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return compare({"A": a, "B": b}, seed=SEED, **settings).pair("A", "B").p_ar


def test_sacrebleu_paired_ar_agrees_with_ours_within_monte_carlo_error():
    exact = ours(A, B, ar_exact=True)
    assert exact == pytest.approx(0.0614013671875, abs=1e-15)  # 4024 of 2**16 swap patterns
    standard_error = math.sqrt(exact * (1 - exact) / TRIALS)
    theirs = sacrebleu_ar(A, B)
    mine = ours(A, B, n_permutations=TRIALS, ar_exact=False)
    # sacrebleu's expectation: strict ">" leaves out the identity and the full swap
    expected_theirs = (1 + TRIALS * (exact - 2 / 2 ** len(A))) / (TRIALS + 1)
    assert abs(theirs - expected_theirs) <= 4 * standard_error
    assert abs(mine - exact) <= 4 * standard_error
    assert abs(mine - theirs) <= 4 * math.sqrt(2) * standard_error


def test_a_difference_no_swap_reaches_gives_the_same_p_value_to_the_digit():
    """Every item favours A: only the identity and the full swap reach |delta|; neither stream draws
    them among 1000 trials of 20 items, so both count none and give exactly 1 / (T + 1)."""
    a = [40.0 + 1.37 * i for i in range(20)]
    b = [v - 0.5 - 0.01 * i for i, v in enumerate(a)]
    assert sacrebleu_ar(a, b, trials=1000) == ours(a, b, n_permutations=1000, ar_exact=False) == 1 / 1001


def test_identical_systems_are_where_the_tie_conventions_differ():
    assert sacrebleu_ar(A, A, trials=1000) == 1 / 1001  # sacrebleu: ">" never holds for 0 > 0
    assert ours(A, A, n_permutations=1000, ar_exact=False) == 1.0  # ours: ties count against the alternative
