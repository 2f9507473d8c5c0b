"""Paired significance tests, confidence intervals and ranking of dialogue systems scored on the same items.

This is the statistics core of ``dialeval compare`` (moved from ``dialeval.stats.paired``): pure
numpy/scipy, no I/O, no metric names. The settings are one :class:`~dialeval.stats.results.Settings`. The
input is always a mapping ``system name -> per-item scores`` where every system was scored on the
SAME ``n`` items in the SAME order (item ``i`` of one system is paired with item ``i`` of every
other). Scores must be finite: a NaN or inf is refused with a ``ValueError`` naming the system and
the index (nothing is dropped silently; drop the item for every system yourself if you mean to).

Notation: system ``s`` has scores ``x_s[0..n-1]`` and mean ``m_s = (1/n) sum_i x_s[i]``. For a pair
``(A, B)`` the item differences are ``d_i = x_A[i] - x_B[i]`` and the observed statistic is the
difference of means ``delta = m_A - m_B`` (= mean of ``d``).

Paired bootstrap (Koehn 2004)
    ``B = n_resamples`` resamples of the item indices, drawn with replacement; resample ``b`` is the
    index vector ``I_b`` (``n`` indices) and is the SAME for every system, so every pair is compared
    on the same resampled test sets. ``m*_{s,b} = mean(x_s[I_b])`` and ``delta*_b = m*_{A,b} -
    m*_{B,b}``.

    * System interval: the percentile interval of ``m*_{s,1..B}``, i.e. the ``(1-c)/2`` and
      ``1-(1-c)/2`` quantiles (``c = confidence``), computed with numpy's default linear
      interpolation (Hyndman & Fan type 7). The reported ``mean`` is the observed ``m_s``.
    * Difference interval: the same percentile interval of ``delta*_{1..B}``.
    * p-value (two-sided, null-centred): the bootstrap distribution of the difference is shifted to
      the null by subtracting the observed difference, and

          p_bs = (1 + #{b : |delta*_b - delta| >= |delta|}) / (B + 1).

      This is the shift method of Efron & Tibshirani (1993, ch. 16) applied to Koehn's paired
      resampling. sacrebleu's ``paired_bs`` (which replicates Moses'
      ``bootstrap-hypothesis-difference-significance.pl``) differs in two ways that we do NOT
      follow: it takes the absolute value of each resampled difference BEFORE centring (centring
      ``|delta*_b|`` on the mean of ``|delta*|``), which folds the distribution and makes the test
      roughly one-sided for large differences and anti-conservative for small ones; and it counts
      strictly greater (``>``). We centre the signed difference and count ``>=`` (ties count
      against the alternative, so identical systems get ``p = 1``).

Approximate randomization (Riezler & Maxwell 2005; Noreen 1989)
    Under the null that the two systems are exchangeable item by item, each item's pair of scores
    may be swapped. Trial ``t`` draws an independent swap decision per item with probability 1/2,
    i.e. signs ``s_{t,i}`` in ``{+1, -1}``, and ``delta^pi_t = (1/n) sum_i s_{t,i} d_i`` (the
    difference of the two swapped pseudo-systems' means). With ``T = n_permutations`` trials

        p_ar = (1 + #{t : |delta^pi_t| >= |delta|}) / (T + 1),

    as in sacrebleu's ``paired_ar`` (which follows multeval's stratified AR). When ``2**n <= T``
    (or ``ar_exact=True``, allowed up to ``n = 20``) the test is exact instead: all ``2**n`` sign
    vectors are enumerated (the identity included) and ``p_ar = #{|delta^pi| >= |delta|} / 2**n``;
    its smallest attainable value is ``2 / 2**n`` (the identity and the full swap).

Ties (both tests): a value counts as ``>=`` when it is at least ``|delta| - g`` with
``g = 1e-9 * max_i max(|x_A[i]|, |x_B[i]|)``, so differences that are equal in exact arithmetic but
differ by floating-point rounding are ties. This tolerance is part of the definition.

Correction for multiple comparisons
    With ``k`` systems there are ``m = k(k-1)/2`` pairs; each test's p-values form one family (the
    bootstrap family and the AR family are corrected separately). Holm (1979), the default: sort
    ``p_(1) <= ... <= p_(m)`` and set ``adj_(j) = min(1, max_{l <= j} (m - l + 1) p_(l))``
    (step-down, monotone, ties order-invariant). Bonferroni: ``adj = min(1, m p)``. ``"none"``
    reports the raw p-values as adjusted. A pair is *significant* when the adjusted p-value of the
    chosen ``test`` (AR by default) is ``< alpha``.

Ranking with ties
    Systems are ordered by mean (descending when ``higher_is_better``; equal means keep input
    order). The first system leads rank group 1. Walking down that order, each system joins the
    current group if it is NOT significantly different from the group's leader (the group's best
    system), otherwise it becomes the leader of a new group whose rank is the previous rank + 1
    (dense ranks: 1, 1, 2, ...). So a rank is shared by systems that are not significantly different
    from the best system of their group; unlike "split where the adjacent difference is
    significant", this does not chain (A ~ B ~ C with A >> C puts C in a new group).

Random streams and reproducibility
    ``numpy.random.SeedSequence(seed).spawn(2)`` (:func:`dialeval.stats.bootstrap.spawned_rngs`) gives
    two independent PCG64 generators, the first
    for the bootstrap and the second for AR. Bootstrap resample ``b`` consumes the next ``n``
    doubles ``u`` of the first generator and uses indices ``floor(u * n)``; AR trial ``t`` consumes
    the next ``n`` doubles ``v`` of the second and swaps item ``i`` when ``v_i < 0.5``. One double
    is one 64-bit draw, so the results do not depend on how the work is chunked in memory (the
    vectorised code processes ``(rows x n)`` blocks of at most ``max_chunk_bytes``). The same
    resamples and swap decisions are used for every pair, so adding a system does not change the
    raw p-values of the existing pairs (only their correction). Reproducible for a given numpy
    version (numpy does not promise identical streams across versions).

Human agreement (:func:`human_agreement`)
    Kendall's tau-b between the per-system mean metric scores and the per-system mean human scores
    (scipy), and, among system pairs whose HUMAN difference is significant (same paired test, same
    correction, same settings), the share where the metric's mean difference has the same sign, and
    how many of them the metric also finds significant.

References
    Philipp Koehn. 2004. Statistical Significance Tests for Machine Translation Evaluation. EMNLP.
    Stefan Riezler and John T. Maxwell III. 2005. On Some Pitfalls in Automatic Evaluation and
    Significance Testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.
    Sture Holm. 1979. A Simple Sequentially Rejective Multiple Test Procedure. Scandinavian Journal
    of Statistics 6(2):65-70.
    Bradley Efron and Robert J. Tibshirani. 1993. An Introduction to the Bootstrap. Chapman & Hall.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from scipy import stats

from dialeval.stats.bootstrap import percentile_interval, resample, spawned_rngs
from dialeval.stats.results import (CORRECTIONS, TESTS, Agreement, AgreementPair, Comparison, PairResult, Settings,
                                    SystemResult)

TIE_RTOL = 1e-9  # ties: |x| >= |delta| - TIE_RTOL * (largest absolute score of the pair)
MAX_EXACT_ITEMS = 20  # ar_exact=True enumerates 2**n sign vectors; refused above this
DEFAULT_MAX_CHUNK_BYTES = 100_000_000


# ----------------------------------------------------------------------------------------------
# Validation


def check_systems(systems: Mapping[str, Sequence[float]]) -> Tuple[List[str], List[np.ndarray]]:
    """Names in input order and one finite 1-D float array per system (lengths not compared);
    ``ValueError`` naming any problem. Shared by the paired tests and the unpaired ones of
    :mod:`dialeval.compare`."""
    if not isinstance(systems, Mapping):
        raise ValueError(f"systems must be a mapping of system name -> per-item scores, "
                         f"got {type(systems).__name__}")
    names = list(systems)
    if len(names) < 2:
        raise ValueError(f"need at least 2 systems to compare, got {len(names)}: {names}")
    rows = []
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"system names must be strings, got {name!r}")
        try:
            row = np.asarray(systems[name], dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"system {name!r}: scores are not numbers ({error})") from None
        if row.ndim != 1:
            raise ValueError(f"system {name!r}: scores must be a 1-D sequence, got shape {row.shape}")
        bad = np.flatnonzero(~np.isfinite(row))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"system {name!r}: score at index {i} is {row[i]!r} (not finite; "
                             f"{bad.size} such value(s)); drop the item for every system first")
        rows.append(row)
    return names, rows


def _check_scores(systems: Mapping[str, Sequence[float]]) -> Tuple[List[str], np.ndarray]:
    """Names in input order and a ``(k, n)`` float array of paired scores; ``ValueError`` naming any problem."""
    names, rows = check_systems(systems)
    lengths = {name: len(row) for name, row in zip(names, rows)}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"unequal lengths: every system must be scored on the same items, got {lengths}")
    n = len(rows[0])
    if n < 2:
        raise ValueError(f"need at least 2 items, got {n}")
    scores = np.vstack(rows)
    if not np.isfinite(scores.mean(axis=1)).all():
        raise ValueError("scores too large: a system mean overflows")
    return names, scores


# ----------------------------------------------------------------------------------------------
# Multiple-comparison correction


def adjust_p_values(p_values: Sequence[float], method: str = "holm") -> np.ndarray:
    """Adjusted p-values, in the input order: Holm (1979) step-down, Bonferroni, or ``"none"``.

    Holm: with ``p_(1) <= ... <= p_(m)``, ``adj_(j) = min(1, max_{l <= j} (m - l + 1) p_(l))``.
    Bonferroni: ``min(1, m p)``. A hypothesis is rejected at level alpha when ``adj < alpha``.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {method!r}")
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be a 1-D sequence, got shape {p.shape}")
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, m * p)
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


# ----------------------------------------------------------------------------------------------
# Resampling (vectorised, chunked)


def _chunk_rows(bytes_per_row: int, max_chunk_bytes: int) -> int:
    return max(1, max_chunk_bytes // bytes_per_row)


def _ar_signs(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """``rows`` trials of ``n`` signs: -1 (swap) where the next double is < 0.5, else +1."""
    return np.where(rng.random((rows, n)) < 0.5, -1.0, 1.0)


def _bootstrap_means(scores: np.ndarray, n_resamples: int, rng: np.random.Generator,
                     max_chunk_bytes: int) -> np.ndarray:
    """``(n_resamples, k)``: each system's mean on each resample (the same indices for all systems)."""
    k, n = scores.shape
    rows = _chunk_rows(24 * n, max_chunk_bytes)  # doubles, indices, one gathered block
    return resample(lambda idx: np.stack([scores[s][idx].mean(axis=1) for s in range(k)], axis=1), n,
                    n_resamples, rng, chunk_rows=rows)


def _exact_sign_blocks(n: int, m: int, max_chunk_bytes: int) -> Iterator[np.ndarray]:
    """All ``2**n`` sign vectors (bit ``i`` of the row number set = item ``i`` swapped), in blocks."""
    total = 2 ** n
    rows = _chunk_rows(24 * n + 24 * m, max_chunk_bytes)  # bits, signs; permuted diffs, |.|, >=
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, total, rows):
        numbers = np.arange(start, min(total, start + rows), dtype=np.int64)
        swapped = (numbers[:, None] >> bits) & 1
        yield np.where(swapped == 1, -1.0, 1.0)


def _random_sign_blocks(rng: np.random.Generator, n_permutations: int, n: int, m: int,
                        max_chunk_bytes: int) -> Iterator[np.ndarray]:
    rows = _chunk_rows(16 * n + 24 * m, max_chunk_bytes)  # doubles, signs; permuted diffs, |.|, >=
    for start in range(0, n_permutations, rows):
        yield _ar_signs(rng, min(n_permutations, start + rows) - start, n)


def tie_tolerance(a: np.ndarray, b: np.ndarray) -> float:
    """``g`` of the module docstring: differences within it of ``|delta|`` are ties."""
    return TIE_RTOL * float(max(np.abs(a).max(), np.abs(b).max()))


def bootstrap_pairs(boot: np.ndarray, pairs: Sequence[Tuple[int, int]], observed: np.ndarray, threshold: np.ndarray,
                    confidence: float) -> Tuple[np.ndarray, np.ndarray]:
    """``(diff_ci (2, m), p_bootstrap (m,))`` of every pair from the systems' resampled means ``boot``
    (``(B, k)``): the percentile interval of the resampled differences and the null-centred p-value
    ``(1 + #{|delta*_b - delta| >= threshold}) / (B + 1)``; one pair at a time (no ``B x m`` matrix)."""
    diff_ci = np.empty((2, len(pairs)))
    count = np.empty(len(pairs), dtype=np.int64)
    for p, (i, j) in enumerate(pairs):
        boot_diff = boot[:, i] - boot[:, j]
        diff_ci[:, p] = percentile_interval(boot_diff, confidence)
        count[p] = np.count_nonzero(np.abs(boot_diff - observed[p]) >= threshold[p])
    return diff_ci, (count + 1) / (len(boot) + 1)


def assemble(settings: Settings, names: Sequence[str], means: np.ndarray, system_ci: np.ndarray,
             pairs: Sequence[Tuple[int, int]], observed: np.ndarray, diff_ci: np.ndarray, p_boot: np.ndarray,
             p_ar: np.ndarray, n_items: int) -> Comparison:
    """The :class:`Comparison` of raw p-values: both families corrected, significance by the chosen
    test, systems ranked (:func:`rank_groups`). Shared by the paired and the unpaired tests."""
    p_boot_adj = adjust_p_values(p_boot, settings.correction)
    p_ar_adj = adjust_p_values(p_ar, settings.correction)
    decisive = p_ar_adj if settings.test == "ar" else p_boot_adj
    significant = decisive < settings.alpha

    pair_results = tuple(
        PairResult(names[i], names[j], float(observed[p]), float(diff_ci[0, p]), float(diff_ci[1, p]),
                   float(p_boot[p]), float(p_boot_adj[p]), float(p_ar[p]), float(p_ar_adj[p]),
                   bool(significant[p]))
        for p, (i, j) in enumerate(pairs)
    )
    is_significant = {}
    for p, (i, j) in enumerate(pairs):
        is_significant[(i, j)] = is_significant[(j, i)] = bool(significant[p])
    higher = settings.higher_is_better
    order = sorted(range(len(names)), key=lambda s: (-means[s] if higher else means[s], s))
    ranks = rank_groups(order, is_significant)
    system_results = tuple(
        SystemResult(names[s], float(means[s]), float(system_ci[0, s]), float(system_ci[1, s]), ranks[s])
        for s in order
    )
    return Comparison(settings, n_items, system_results, pair_results)


# ----------------------------------------------------------------------------------------------
# Public API


def compare(
    systems: Mapping[str, Sequence[float]],
    settings: Optional[Settings] = None,
    *,
    max_chunk_bytes: int = DEFAULT_MAX_CHUNK_BYTES,
    **overrides: Any,
) -> Comparison:
    """Compare two or more systems scored on the same items (see the module docstring for formulas).

    :param systems: ``name -> per-item scores`` (equal lengths, same item order, all finite, n >= 2).
    :param settings: a :class:`~dialeval.stats.results.Settings` (default: its defaults), with any of
        its fields given as keywords (``compare(systems, seed=1)``) replaced:

        * ``n_resamples``: bootstrap resamples (system and difference intervals, ``p_bootstrap``);
        * ``n_permutations``: approximate-randomization trials (``p_ar``) when not exact;
        * ``seed``: seeds both random streams; ``None`` draws fresh entropy (signature ``seed:none``);
        * ``confidence``: level of the percentile intervals;
        * ``alpha``: significance level for ``PairResult.significant`` and the ranking;
        * ``correction``: ``"holm"`` (default), ``"bonferroni"`` or ``"none"``; applied separately to
          the bootstrap and the AR p-values of all ``k(k-1)/2`` pairs;
        * ``test``: which test's corrected p-value decides significance and ranks: ``"ar"`` or
          ``"bootstrap"``;
        * ``ar_exact``: ``None``: enumerate all ``2**n`` swaps when ``2**n <= n_permutations``;
          ``True``: always (``n <= 20``); ``False``: never;
        * ``higher_is_better``: direction of the ranking (p-values are two-sided either way).
    :param max_chunk_bytes: memory bound of one vectorised block; does not change any result.

    Warns (``RuntimeWarning``) when no pair can reach significance because the smallest attainable
    corrected p-value of the chosen test is >= alpha (too few resamples or items for the family).
    """
    asked = Settings.of(settings, **overrides)
    asked.check(max_chunk_bytes)
    names, scores = _check_scores(systems)
    k, n = scores.shape
    if asked.ar_exact is None:
        exact = 2 ** n <= asked.n_permutations if n < 63 else False
    elif asked.ar_exact:
        if n > MAX_EXACT_ITEMS:
            raise ValueError(f"ar_exact=True enumerates 2**n swap patterns; n = {n} items exceeds "
                             f"{MAX_EXACT_ITEMS}")
        exact = True
    else:
        exact = False
    settings = asked.resolved(exact)

    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    m = len(pairs)
    _warn_if_powerless(settings, n, m)
    rng_bootstrap, rng_ar = spawned_rngs(settings.seed)
    means = scores.mean(axis=1)

    # Bootstrap: per-system means on shared resamples.
    boot = _bootstrap_means(scores, settings.n_resamples, rng_bootstrap, max_chunk_bytes)
    system_ci = percentile_interval(boot, settings.confidence, axis=0)  # (2, k)

    observed = np.array([means[i] - means[j] for i, j in pairs])
    tolerance = np.array([tie_tolerance(scores[i], scores[j]) for i, j in pairs])
    threshold = np.abs(observed) - tolerance
    diff_ci, p_boot = bootstrap_pairs(boot, pairs, observed, threshold, settings.confidence)

    # Approximate randomization: shared swap patterns, one matrix product per block.
    item_diffs = np.stack([scores[i] - scores[j] for i, j in pairs], axis=1)  # (n, m)
    ar_count = np.zeros(m, dtype=np.int64)
    blocks = (_exact_sign_blocks(n, m, max_chunk_bytes) if exact
              else _random_sign_blocks(rng_ar, settings.n_permutations, n, m, max_chunk_bytes))
    for signs in blocks:
        permuted = (signs @ item_diffs) / n  # (rows, m)
        ar_count += (np.abs(permuted) >= threshold).sum(axis=0)
    p_ar = ar_count / 2 ** n if exact else (ar_count + 1) / (settings.n_permutations + 1)
    return assemble(settings, names, means, system_ci, pairs, observed, diff_ci, p_boot, p_ar, n)


def rank_groups(order: Sequence[int], is_significant: Mapping[Tuple[int, int], bool]) -> Dict[int, int]:
    """Dense rank groups along ``order`` (best first): a system joins the current group unless it is
    significantly different from the group's leader, in which case it leads the next group."""
    ranks = {order[0]: 1}
    leader, rank = order[0], 1
    for s in order[1:]:
        if is_significant[(leader, s)]:
            leader, rank = s, rank + 1
        ranks[s] = rank
    return ranks


def _warn_if_powerless(settings: Settings, n: int, m: int) -> None:
    if settings.test == "ar":
        smallest = 2.0 / 2 ** n if settings.ar_exact else 1.0 / (settings.n_permutations + 1)
    else:
        smallest = 1.0 / (settings.n_resamples + 1)
    factor = 1 if settings.correction == "none" else m
    if min(1.0, factor * smallest) >= settings.alpha:
        warnings.warn(
            f"no pair can be significant at alpha={settings.alpha:g}: the smallest attainable "
            f"{settings.correction}-corrected p-value of the {settings.test} test is "
            f"{min(1.0, factor * smallest):.4g} ({m} pair(s), {n} items; raise the number of "
            f"{'resamples' if settings.test == 'bootstrap' else 'permutations or items'})",
            RuntimeWarning, stacklevel=3)


def human_agreement(
    human: Mapping[str, Sequence[float]],
    metric: Mapping[str, Sequence[float]],
    settings: Optional[Settings] = None,
    *,
    max_chunk_bytes: int = DEFAULT_MAX_CHUNK_BYTES,
    **overrides: Any,
) -> Agreement:
    """Does a metric agree with humans at the system level?

    ``human`` and ``metric`` map the same system names to per-item scores of the same items (item
    ``i`` of system ``s`` is the same response in both; every system on the same items, as for
    :func:`compare`). Both must be oriented so that higher is better (negate a lower-is-better
    metric first; ``higher_is_better=False`` is refused). Both are compared with :func:`compare`
    under identical settings (``settings`` and keyword overrides as for :func:`compare`; hence the
    same resamples and swap patterns). Returns Kendall's tau-b of the system means and the sign
    agreement on the human-significant pairs (:func:`agreement_of`; no such pair gives
    ``sign_agreement=None`` and zero counts).
    """
    if not isinstance(human, Mapping) or not isinstance(metric, Mapping):
        raise ValueError("human and metric must be mappings of system name -> per-item scores")
    check_same_systems(human, metric)
    settings = Settings.of(settings, **overrides)
    if not settings.higher_is_better:
        raise ValueError("human_agreement compares higher-is-better scores: negate the metric instead")
    try:
        human_result = compare(human, settings, max_chunk_bytes=max_chunk_bytes)
    except ValueError as error:
        raise ValueError(f"human scores: {error}") from None
    metric_ordered = {name: metric[name] for name in human}  # the same pair orientation
    try:
        metric_result = compare(metric_ordered, settings, max_chunk_bytes=max_chunk_bytes)
    except ValueError as error:
        raise ValueError(f"metric scores: {error}") from None
    return agreement_of(human_result, metric_result, metric, settings.test)


def check_same_systems(human: Mapping[str, Sequence[float]], metric: Mapping[str, Sequence[float]]) -> None:
    """``ValueError`` unless ``human`` and ``metric`` name the same systems with as many scores each."""
    if set(human) != set(metric):
        raise ValueError(f"human and metric scores must cover the same systems: only human "
                         f"{sorted(set(human) - set(metric), key=str)}, only metric "
                         f"{sorted(set(metric) - set(human), key=str)}")
    for name in human:
        if len(human[name]) != len(metric[name]):
            raise ValueError(f"system {name!r}: {len(human[name])} human scores vs "
                             f"{len(metric[name])} metric scores for the same items")


def agreement_of(human_result: Comparison, metric_result: Comparison, metric: Mapping[str, Sequence[float]],
                 test: str) -> Agreement:
    """The :class:`~dialeval.stats.results.Agreement` of two comparisons of the same systems, paired
    or not: Kendall's tau-b (scipy) of the system means, and the sign agreement on the pairs whose
    human difference is significant (by ``test``'s corrected p-value); ``metric`` holds the per-item
    metric scores (for the tie tolerance of the metric's mean difference)."""
    names = list(dict.fromkeys([p.system_a for p in human_result.pairs] + [p.system_b for p in human_result.pairs]))
    human_means = np.array([human_result.system(s).mean for s in names])
    metric_means = np.array([metric_result.system(s).mean for s in names])
    tau: Optional[float] = None
    tau_p: Optional[float] = None
    if np.ptp(human_means) > 0 and np.ptp(metric_means) > 0:
        statistic, pvalue = stats.kendalltau(metric_means, human_means)
        if math.isfinite(statistic):
            tau = float(statistic)
            tau_p = float(pvalue) if math.isfinite(pvalue) else None

    def decisive(result: PairResult) -> float:
        return result.p_ar_adjusted if test == "ar" else result.p_bootstrap_adjusted

    agreement_pairs = []
    for h in human_result.pairs:
        mt = metric_result.pair(h.system_a, h.system_b)
        a = np.asarray(metric[h.system_a], dtype=np.float64)
        b = np.asarray(metric[h.system_b], dtype=np.float64)
        metric_sign = 0 if abs(mt.mean_diff) <= tie_tolerance(a, b) else int(np.sign(mt.mean_diff))
        same_sign = metric_sign != 0 and metric_sign == int(np.sign(h.mean_diff))
        agreement_pairs.append(AgreementPair(
            h.system_a, h.system_b, h.mean_diff, mt.mean_diff, decisive(h), decisive(mt),
            h.significant, mt.significant, same_sign))

    significant_pairs = [p for p in agreement_pairs if p.human_significant]
    n_same = sum(p.same_sign for p in significant_pairs)
    return Agreement(
        n_systems=len(names), n_items=human_result.n_items, kendall_tau=tau, kendall_p=tau_p,
        n_pairs=len(agreement_pairs), n_human_significant=len(significant_pairs), n_same_sign=n_same,
        sign_agreement=n_same / len(significant_pairs) if significant_pairs else None,
        n_metric_significant=sum(p.metric_significant for p in significant_pairs),
        n_metric_significant_same_sign=sum(p.metric_significant and p.same_sign for p in significant_pairs),
        pairs=tuple(agreement_pairs), human=human_result, metric=metric_result,
    )


__all__ = [
    "Agreement", "AgreementPair", "CORRECTIONS", "Comparison", "PairResult", "Settings", "SystemResult", "TESTS",
    "adjust_p_values", "agreement_of", "assemble", "bootstrap_pairs", "check_same_systems", "check_systems",
    "compare", "human_agreement", "rank_groups", "tie_tolerance",
]
