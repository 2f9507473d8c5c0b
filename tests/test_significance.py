"""dialeval.stats.paired: exact values on hand examples, a plain reference loop for the vectorised
path, size and power of both paired tests, Holm/Bonferroni, ranking with ties, human agreement."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from dialeval import __version__
from dialeval.stats import paired as significance
from dialeval.stats.paired import adjust_p_values, compare, human_agreement


def _reference(systems, *, n_resamples, n_permutations, seed, confidence=0.95):
    """The documented definitions, one resample / one trial / one item at a time in plain Python."""
    names = list(systems)
    x = [[float(v) for v in systems[s]] for s in names]
    k, n = len(x), len(x[0])
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    bootstrap_seq, ar_seq = np.random.SeedSequence(seed).spawn(2)
    rng_bootstrap, rng_ar = np.random.default_rng(bootstrap_seq), np.random.default_rng(ar_seq)
    means = [sum(row) / n for row in x]
    observed = [means[i] - means[j] for i, j in pairs]
    tolerance = [1e-9 * max(max(abs(v) for v in x[i]), max(abs(v) for v in x[j])) for i, j in pairs]

    resampled = [[] for _ in range(k)]
    boot_count = [0] * len(pairs)
    boot_diffs = [[] for _ in pairs]
    for _ in range(n_resamples):
        u = rng_bootstrap.random(n)
        idx = [min(int(u[t] * n), n - 1) for t in range(n)]
        m = [sum(x[s][t] for t in idx) / n for s in range(k)]
        for s in range(k):
            resampled[s].append(m[s])
        for p, (i, j) in enumerate(pairs):
            diff = m[i] - m[j]
            boot_diffs[p].append(diff)
            if abs(diff - observed[p]) >= abs(observed[p]) - tolerance[p]:
                boot_count[p] += 1

    ar_count = [0] * len(pairs)
    for _ in range(n_permutations):
        v = rng_ar.random(n)
        for p, (i, j) in enumerate(pairs):
            a = [x[j][t] if v[t] < 0.5 else x[i][t] for t in range(n)]
            b = [x[i][t] if v[t] < 0.5 else x[j][t] for t in range(n)]
            if abs(sum(a) / n - sum(b) / n) >= abs(observed[p]) - tolerance[p]:
                ar_count[p] += 1

    tail = (1 - confidence) / 2
    return {
        "means": dict(zip(names, means)),
        "system_ci": {s: tuple(np.quantile(resampled[q], [tail, 1 - tail])) for q, s in enumerate(names)},
        "pairs": {
            (names[i], names[j]): {
                "diff": observed[p],
                "ci": tuple(np.quantile(boot_diffs[p], [tail, 1 - tail])),
                "p_bootstrap": (boot_count[p] + 1) / (n_resamples + 1),
                "p_ar": (ar_count[p] + 1) / (n_permutations + 1),
            }
            for p, (i, j) in enumerate(pairs)
        },
    }


def _check_against_reference(systems, seed, n_resamples=200, n_permutations=150):
    fast = compare(systems, n_resamples=n_resamples, n_permutations=n_permutations, seed=seed,
                   ar_exact=False)
    ref = _reference(systems, n_resamples=n_resamples, n_permutations=n_permutations, seed=seed)
    for name, mean in ref["means"].items():
        result = fast.system(name)
        assert result.mean == pytest.approx(mean, rel=1e-12, abs=1e-12)
        assert (result.ci_low, result.ci_high) == pytest.approx(ref["system_ci"][name], rel=1e-12, abs=1e-12)
    assert len(fast.pairs) == len(ref["pairs"])
    for pair in fast.pairs:
        expected = ref["pairs"][(pair.system_a, pair.system_b)]
        assert pair.mean_diff == pytest.approx(expected["diff"], rel=1e-12, abs=1e-12)
        assert (pair.diff_ci_low, pair.diff_ci_high) == pytest.approx(expected["ci"], rel=1e-12, abs=1e-12)
        assert pair.p_bootstrap == expected["p_bootstrap"]  # counts: exactly equal
        assert pair.p_ar == expected["p_ar"]
    p_boot = [p.p_bootstrap for p in fast.pairs]
    p_ar = [p.p_ar for p in fast.pairs]
    assert [p.p_bootstrap_adjusted for p in fast.pairs] == adjust_p_values(p_boot, "holm").tolist()
    assert [p.p_ar_adjusted for p in fast.pairs] == adjust_p_values(p_ar, "holm").tolist()
    return fast


# ---------------------------------------------------------------------------------------------
# Exact values


def test_hand_example_exact_ar_and_means():
    # d = A - B = [0.3, -0.2, 0.0, 0.7], delta = 0.2. Swapping item 3 never matters (d = 0); the 8
    # sign patterns of (0.3, -0.2, 0.7) give sums 0.8, 1.2, -0.6, 0.2, -0.2, 0.6, -1.2, -0.8, of which
    # 4 have |sum| >= 0.8 (two of them ties in exact arithmetic): p = 2 * 4 / 16 = 0.5.
    with pytest.warns(RuntimeWarning, match="no pair can be significant"):
        result = compare({"A": [0.7, 0.1, 0.3, 0.9], "B": [0.4, 0.3, 0.3, 0.2]}, ar_exact=True)
    assert result.settings.ar_exact
    assert result.system("A").mean == pytest.approx(0.5, abs=1e-15)
    assert result.system("B").mean == pytest.approx(0.3, abs=1e-15)
    pair = result.pair("A", "B")
    assert pair.mean_diff == pytest.approx(0.2, abs=1e-15)
    assert pair.p_ar == 0.5
    assert pair.p_ar_adjusted == 0.5  # one pair: nothing to correct
    assert not pair.significant
    assert [s.rank for s in result.systems] == [1, 1]


def test_exact_ar_integer_scores_and_constant_difference():
    # d = [2, 2, 0, 2]: sign sums of three 2s are 6, 2, -2, -6 with multiplicities 1, 3, 3, 1 (x2 for
    # the zero item): p = 2 * 2 / 16 = 0.25.
    with pytest.warns(RuntimeWarning):
        result = compare({"A": [3, 4, 2, 5], "B": [1, 2, 2, 3]}, ar_exact=True)
    assert result.pair("A", "B").p_ar == 0.25
    # A constant difference: only the identity and the full swap reach |delta|: p = 2 / 16. The
    # bootstrap difference never moves, so its interval is the point and p_bootstrap = 1 / (B + 1).
    with pytest.warns(RuntimeWarning):
        result = compare({"A": [1.5, 2.5, 0.5, 3.5], "B": [1.0, 2.0, 0.0, 3.0]}, n_resamples=99,
                         ar_exact=True)
    pair = result.pair("A", "B")
    assert pair.p_ar == 2 / 16
    assert pair.p_bootstrap == 1 / 100
    assert (pair.mean_diff, pair.diff_ci_low, pair.diff_ci_high) == (0.5, 0.5, 0.5)


def test_identical_systems_have_p_one():
    scores = [0.1, 0.9, 0.4, 0.4, 0.7, 0.2]
    result = compare({"A": scores, "B": list(scores)}, n_resamples=200, n_permutations=200, ar_exact=False)
    pair = result.pair("A", "B")
    assert (pair.mean_diff, pair.diff_ci_low, pair.diff_ci_high) == (0.0, 0.0, 0.0)
    assert (pair.p_bootstrap, pair.p_ar) == (1.0, 1.0)


def test_exact_ar_equals_brute_force_enumeration():
    rng = np.random.default_rng(3)
    a, b = rng.integers(1, 6, 8).astype(float), rng.integers(1, 6, 8).astype(float)
    a[0] += 3  # make sure the difference is not zero
    delta = a.mean() - b.mean()
    count = 0
    for swaps in itertools.product([False, True], repeat=8):
        pa = [b[i] if s else a[i] for i, s in enumerate(swaps)]
        pb = [a[i] if s else b[i] for i, s in enumerate(swaps)]
        count += abs(sum(pa) / 8 - sum(pb) / 8) >= abs(delta) - 1e-9 * 8
    result = compare({"A": a, "B": b})  # 2**8 <= 10000 permutations: exact automatically
    assert result.settings.ar_exact
    assert "permutations:exact" in result.signature
    assert result.pair("A", "B").p_ar == count / 256
    assert count < 256  # the example is not degenerate


def test_holm_and_bonferroni_hand_example():
    assert adjust_p_values([0.01, 0.04, 0.03], "holm") == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
    assert adjust_p_values([0.01, 0.04, 0.03], "bonferroni") == pytest.approx([0.03, 0.12, 0.09], abs=1e-15)
    assert adjust_p_values([0.01, 0.04, 0.03], "none").tolist() == [0.01, 0.04, 0.03]
    # Monotone in the raw p-values and capped at 1; ties get the same value whatever their order.
    raw = [0.2, 0.001, 0.03, 0.03, 0.5, 0.04]
    holm = adjust_p_values(raw, "holm")
    # sorted: 0.001*6, 0.03*5, 0.03*4 -> 0.15, 0.04*3 -> 0.15, 0.2*2, 0.5*1
    assert holm == pytest.approx([0.4, 0.006, 0.15, 0.15, 0.5, 0.15], abs=1e-15)
    order = np.argsort(raw, kind="stable")
    assert (np.diff(holm[order]) >= 0).all()
    assert adjust_p_values([0.4, 0.5], "bonferroni").tolist() == [0.8, 1.0]
    with pytest.raises(ValueError, match="correction"):
        adjust_p_values([0.1], "fdr")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_p_values([0.1, 1.5])


# ---------------------------------------------------------------------------------------------
# Vectorised path


def test_fast_path_equals_reference_loop_continuous():
    rng = np.random.default_rng(11)
    base = rng.normal(size=30)
    systems = {"A": base + rng.normal(0, 0.5, 30) + 0.3, "B": base + rng.normal(0, 0.5, 30),
               "C": base + rng.normal(0, 0.5, 30) + 0.1}
    fast = _check_against_reference(systems, seed=5)
    assert min(p.p_ar for p in fast.pairs) < 0.05 < max(p.p_ar for p in fast.pairs)  # not degenerate


def test_fast_path_equals_reference_loop_with_ties():
    # Likert scores: many exact ties between permuted/resampled and observed differences.
    rng = np.random.default_rng(12)
    systems = {name: rng.integers(1, 6, 25).astype(float) for name in ("A", "B", "C")}
    systems["A"][:5] = 5.0
    _check_against_reference(systems, seed=99)


def test_chunking_does_not_change_results():
    rng = np.random.default_rng(13)
    systems = {name: rng.normal(size=40) for name in ("A", "B", "C", "D")}
    whole = compare(systems, n_resamples=300, n_permutations=300, seed=1)
    chunked = compare(systems, n_resamples=300, n_permutations=300, seed=1, max_chunk_bytes=1)  # 1 row
    assert chunked.to_dict() == whole.to_dict()
    # The same resamples and swaps serve every pair: adding a system leaves the raw p-values alone.
    fewer = compare({k: systems[k] for k in ("A", "B", "C")}, n_resamples=300, n_permutations=300, seed=1)
    for pair in fewer.pairs:
        full = whole.pair(pair.system_a, pair.system_b)
        assert (pair.p_bootstrap, pair.p_ar, pair.diff_ci_low) == (full.p_bootstrap, full.p_ar, full.diff_ci_low)
        assert pair.p_ar_adjusted <= full.p_ar_adjusted  # a family of 3 instead of 6
    other_seed = compare(systems, n_resamples=300, n_permutations=300, seed=2)
    assert other_seed.to_dict() != whole.to_dict()


# ---------------------------------------------------------------------------------------------
# Size and power


@pytest.mark.parametrize("kind", ["normal", "likert"])
def test_size_two_halves_of_one_system(kind):
    splits, n_items, alpha = 200, 100, 0.05
    low = stats.binom.ppf(0.0005, splits, alpha)
    high = stats.binom.ppf(0.9995, splits, alpha)
    rng = np.random.default_rng(2024)
    rejections = {"bootstrap": 0, "ar": 0}
    for split in range(splits):
        pool = rng.normal(size=2 * n_items) if kind == "normal" else rng.integers(1, 6, 2 * n_items) * 1.0
        result = compare({"A": pool[:n_items], "B": pool[n_items:]}, n_resamples=999, n_permutations=999,
                         seed=split)
        pair = result.pair("A", "B")
        rejections["bootstrap"] += pair.p_bootstrap < alpha
        rejections["ar"] += pair.p_ar < alpha
    assert (low, high) == (2, 21)  # the binomial(200, 0.05) 99.9 % interval, for the record
    for test, count in rejections.items():
        assert low <= count <= high, (test, count, low, high)


def test_power_planted_difference():
    rng = np.random.default_rng(7)
    item = rng.normal(size=100)
    a, b = item + rng.normal(0, 0.5, 100), item + rng.normal(0, 0.5, 100)
    a = a + 0.3 * np.std(np.concatenate([a, b]))
    result = compare({"base": b, "new": a})
    pair = result.pair("new", "base")
    assert pair.mean_diff > 0 and pair.diff_ci_low > 0
    assert pair.p_bootstrap < 0.01
    assert pair.p_ar < 0.01
    assert pair.significant
    assert [(s.name, s.rank) for s in result.systems] == [("new", 1), ("base", 2)]


# ---------------------------------------------------------------------------------------------
# Ranking


def _planted(effects, n=200, noise=1.0, seed=0):
    rng = np.random.default_rng(seed)
    item = rng.normal(size=n)
    systems = {}
    for name, effect in effects.items():
        e = rng.normal(0, noise, n)
        systems[name] = item + (e - e.mean()) + effect  # the mean is exactly item.mean() + effect
    return systems


def test_ranking_a_much_better_than_b_and_c_tied():
    systems = _planted({"B": 0.0, "A": 1.0, "C": 0.02}, noise=0.5)
    result = compare(systems, n_resamples=500, n_permutations=2000)
    assert [(s.name, s.rank) for s in result.systems] == [("A", 1), ("C", 2), ("B", 2)]
    assert result.pair("A", "B").significant and result.pair("A", "C").significant
    assert not result.pair("B", "C").significant
    assert result.pair("C", "B").p_ar_adjusted > 0.05
    # Lower is better: the same groups upside down.
    lower = compare(systems, n_resamples=500, n_permutations=2000, higher_is_better=False)
    assert [(s.name, s.rank) for s in lower.systems] == [("B", 1), ("C", 1), ("A", 2)]


def test_ranking_does_not_chain_through_the_middle():
    # A ~ B and B ~ C, but A >> C: C starts a new group (its group leader A is significantly better).
    systems = _planted({"C": 0.0, "B": 0.18, "A": 0.36}, noise=1.0, seed=1)
    result = compare(systems, n_resamples=500, n_permutations=2000)
    assert not result.pair("A", "B").significant
    assert not result.pair("B", "C").significant
    assert result.pair("A", "C").significant
    assert [(s.name, s.rank) for s in result.systems] == [("A", 1), ("B", 1), ("C", 2)]


def test_ranking_test_and_correction_choices():
    systems = _planted({"A": 0.0, "B": 0.18, "C": 0.36}, noise=1.0, seed=1)
    holm = compare(systems, n_resamples=500, n_permutations=2000, test="bootstrap")
    bonferroni = compare(systems, n_resamples=500, n_permutations=2000, test="bootstrap",
                         correction="bonferroni")
    for h, b in zip(holm.pairs, bonferroni.pairs):
        assert h.p_bootstrap == b.p_bootstrap
        assert b.p_bootstrap_adjusted == min(1.0, 3 * b.p_bootstrap)
        assert h.p_bootstrap_adjusted <= b.p_bootstrap_adjusted
        assert h.significant == (h.p_bootstrap_adjusted < 0.05)  # decided by the bootstrap here
    assert "correction:bonferroni" in bonferroni.signature and "test:bootstrap" in bonferroni.signature


# ---------------------------------------------------------------------------------------------
# Results, JSON, signature


def test_to_dict_is_strict_json_and_signature():
    systems = _planted({"A": 0.0, "B": 0.5}, n=50)
    result = compare(systems, n_resamples=100, n_permutations=100, seed=7, confidence=0.9)
    assert result.signature == ("resamples:100|permutations:100|seed:7|ci:0.9|correction:holm|"
                                f"alpha:0.05|test:ar|better:higher|version:{__version__}")
    text = json.dumps(result.to_dict(), allow_nan=False)
    loaded = json.loads(text)
    assert loaded["signature"] == result.signature
    assert loaded["n_items"] == 50
    assert [s["name"] for s in loaded["systems"]] == ["B", "A"]
    assert loaded["pairs"][0]["system_a"] == "A"
    swapped = result.pair("B", "A")
    direct = result.pair("A", "B")
    assert swapped.mean_diff == -direct.mean_diff
    assert (swapped.diff_ci_low, swapped.diff_ci_high) == (-direct.diff_ci_high, -direct.diff_ci_low)
    with pytest.warns(RuntimeWarning):  # 10 permutations: p >= 1/11
        unseeded = compare(systems, seed=None, n_resamples=10, n_permutations=10)
    assert unseeded.signature.startswith("resamples:10|permutations:10|seed:none|")
    with pytest.raises(KeyError, match="no pair"):
        result.pair("A", "Z")


def test_powerless_family_warns():
    rng = np.random.default_rng(0)
    systems = {f"s{i}": rng.normal(size=30) for i in range(12)}  # 66 pairs; 66 / 1001 >= 0.05
    with pytest.warns(RuntimeWarning, match="no pair can be significant"):
        compare(systems, n_resamples=50, n_permutations=1000)


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("systems, message", [
    ({"A": [1.0, 2.0, 3.0], "B": [1.0, 2.0]}, r"unequal lengths.*'A': 3.*'B': 2"),
    ({"A": [1.0, 2.0, 3.0]}, r"at least 2 systems"),
    ({}, r"at least 2 systems"),
    ({"A": [1.0, 2.0, 3.0], "B": [1.0, float("nan"), 2.0]}, r"system 'B'.*index 1.*nan"),
    ({"A": [1.0, 2.0, float("inf")], "B": [1.0, 2.0, 2.0]}, r"system 'A'.*index 2.*inf"),
    ({"A": [1.0], "B": [2.0]}, r"at least 2 items"),
    ({"A": [[1.0, 2.0]], "B": [[2.0, 1.0]]}, r"1-D"),
    ({"A": ["x", "y"], "B": [1.0, 2.0]}, r"system 'A'.*not numbers"),
])
def test_invalid_scores_are_refused(systems, message):
    with pytest.raises(ValueError, match=message):
        compare(systems)


@pytest.mark.parametrize("option, message", [
    ({"n_resamples": 0}, "n_resamples"), ({"n_permutations": 2.5}, "n_permutations"),
    ({"confidence": 1.0}, "confidence"), ({"alpha": 0}, "alpha"), ({"correction": "fdr"}, "correction"),
    ({"test": "t"}, "test"), ({"seed": -1}, "seed"),
])
def test_invalid_settings_are_refused(option, message):
    with pytest.raises(ValueError, match=message):
        compare({"A": [1.0, 2.0, 3.0], "B": [2.0, 2.0, 2.0]}, **option)


def test_forced_exact_ar_is_refused_for_many_items():
    systems = {"A": np.arange(21.0), "B": np.arange(21.0)[::-1]}
    with pytest.raises(ValueError, match="n = 21 items"):
        compare(systems, ar_exact=True)


# ---------------------------------------------------------------------------------------------
# Human agreement


def test_human_agreement_counts_and_kendall():
    # Humans: A > B > C, all clearly. Metric: A > C > B (B vs C flipped, also clearly).
    human = _planted({"A": 1.0, "B": 0.5, "C": 0.0}, n=100, noise=0.3, seed=4)
    metric = _planted({"A": 2.0, "B": 0.0, "C": 1.0}, n=100, noise=0.3, seed=5)
    result = human_agreement(human, metric, n_resamples=300, n_permutations=2000)
    assert result.n_pairs == 3
    assert result.n_human_significant == 3
    assert result.n_same_sign == 2
    assert result.sign_agreement == pytest.approx(2 / 3, rel=1e-12)
    assert result.n_metric_significant == 3
    assert result.n_metric_significant_same_sign == 2
    assert result.kendall_tau == pytest.approx(1 / 3, rel=1e-12)  # 2 concordant, 1 discordant pair of systems
    flipped = [p for p in result.pairs if not p.same_sign]
    assert [(p.system_a, p.system_b) for p in flipped] == [("B", "C")]
    assert flipped[0].human_diff > 0 > flipped[0].metric_diff
    json.dumps(result.to_dict(), allow_nan=False)


def test_human_agreement_without_significant_human_pairs():
    same = [3.0, 4.0, 2.0, 5.0, 1.0, 4.0]
    human = {"A": same, "B": list(same), "C": list(same)}
    metric = {"A": [1, 2, 3, 4, 5, 6], "B": [2, 2, 2, 2, 2, 2], "C": [6, 5, 4, 3, 2, 1]}
    result = human_agreement(human, metric, n_resamples=100, n_permutations=100, ar_exact=False)
    assert result.n_human_significant == 0
    assert result.sign_agreement is None
    assert (result.n_same_sign, result.n_metric_significant, result.n_metric_significant_same_sign) == (0, 0, 0)
    assert result.kendall_tau is None and result.kendall_p is None  # human means all tied
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["sign_agreement"] is None and data["kendall_tau"] is None


def test_human_agreement_input_errors():
    good = {"A": [1.0, 2.0, 3.0], "B": [2.0, 3.0, 1.0]}
    with pytest.raises(ValueError, match=r"same systems.*only metric \['C'\]"):
        human_agreement(good, {**good, "C": [1.0, 1.0, 1.0]})
    with pytest.raises(ValueError, match=r"system 'B': 3 human scores vs 2 metric"):
        human_agreement(good, {"A": [1.0, 2.0, 3.0], "B": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"metric scores: system 'A'.*index 0"), \
            pytest.warns(RuntimeWarning):  # the human comparison of 3 items runs first
        human_agreement(good, {"A": [math.nan, 2.0, 3.0], "B": [1.0, 2.0, 3.0]})
