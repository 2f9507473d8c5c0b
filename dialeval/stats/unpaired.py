"""Systems scored on DIFFERENT items: the unpaired bootstrap and the permutation test (moved from
``dialeval.compare``; used by the meta-evaluation on human-judgment sets whose systems answered
different contexts).

Unpaired bootstrap
    Each system's items are resampled on their own: ``B`` resamples of ``n_s`` indices of system
    ``s``, drawn from one seeded stream system after system (the ``uniform`` draw of the first
    :func:`~dialeval.stats.bootstrap.spawned_rngs` generator, as the paired tests draw). The
    difference of the resampled means gives the interval and the null-centred p-value
    ``(1 + #{|delta*_b - delta| >= |delta|}) / (B + 1)``.

Permutation test (in ``p_ar``)
    The approximate randomization test becomes a permutation test of the pooled items of the two
    systems: trial ``t`` shuffles the pooled ``n_A + n_B`` scores (the order of ``n_A + n_B`` doubles
    of the second generator), the first ``n_A`` are A's, and
    ``p = (1 + #{|delta^pi_t| >= |delta|}) / (T + 1)``.

Same tie tolerance, correction and ranking as the paired tests (:mod:`dialeval.stats.paired`).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from dialeval.stats.bootstrap import percentile_interval, resample, spawned_rngs
from dialeval.stats.paired import (agreement_of, assemble, bootstrap_pairs, check_same_systems, check_systems,
                                   tie_tolerance)
from dialeval.stats.results import Agreement, Comparison, Settings


def compare_unpaired(
    systems: Mapping[str, Sequence[float]],
    settings: Optional[Settings] = None,
    *,
    max_chunk_rows: int = 2000,
    **overrides: Any,
) -> Comparison:
    """Like :func:`dialeval.stats.paired.compare` for systems scored on DIFFERENT items (each at
    least 2): unpaired bootstrap and a permutation test (module docstring); ``settings`` and keyword
    overrides as for :func:`~dialeval.stats.paired.compare` (``ar_exact=True`` is refused). ``p_ar``
    holds the permutation test's p-value; ``settings.ar_exact`` is ``False``; ``n_items`` is the
    number of items of all systems together."""
    names, rows = check_systems(systems)
    short = [name for name, row in zip(names, rows) if len(row) < 2]
    if short:
        raise ValueError(f"systems {short}: need at least 2 scores each")
    asked = Settings.of(settings, **overrides)
    asked.check()  # the same checks of the settings as the paired tests
    if asked.ar_exact:
        raise ValueError("the unpaired permutation test is not enumerated: ar_exact=True applies to paired systems")
    settings = asked.resolved(False)
    n_resamples, n_permutations = settings.n_resamples, settings.n_permutations
    rng_bootstrap, rng_ar = spawned_rngs(settings.seed)
    k = len(rows)
    means = np.array([row.mean() for row in rows])
    boot = np.empty((n_resamples, k))
    for s, row in enumerate(rows):
        boot[:, s] = resample(lambda idx: row[idx].mean(axis=1), len(row), n_resamples, rng_bootstrap,
                              chunk_rows=max_chunk_rows)
    system_ci = percentile_interval(boot, settings.confidence, axis=0)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    observed = np.array([means[i] - means[j] for i, j in pairs])
    threshold = np.array([abs(observed[p]) - tie_tolerance(rows[i], rows[j]) for p, (i, j) in enumerate(pairs)])
    diff_ci, p_boot = bootstrap_pairs(boot, pairs, observed, threshold, settings.confidence)
    p_perm = np.empty(len(pairs))
    for p, (i, j) in enumerate(pairs):
        pooled = np.concatenate([rows[i], rows[j]])
        n_a = len(rows[i])
        count = 0
        for start in range(0, n_permutations, max_chunk_rows):
            stop = min(n_permutations, start + max_chunk_rows)
            shuffled = pooled[np.argsort(rng_ar.random((stop - start, len(pooled))), axis=1)]
            permuted = shuffled[:, :n_a].mean(axis=1) - shuffled[:, n_a:].mean(axis=1)
            count += int(np.count_nonzero(np.abs(permuted) >= threshold[p]))
        p_perm[p] = (count + 1) / (n_permutations + 1)
    return assemble(settings, names, means, system_ci, pairs, observed, diff_ci, p_boot, p_perm,
                    int(sum(len(r) for r in rows)))


def unpaired_agreement(human: Mapping[str, Sequence[float]], metric: Mapping[str, Sequence[float]],
                       settings: Optional[Settings] = None, **overrides: Any) -> Agreement:
    """:func:`dialeval.stats.paired.human_agreement` for systems rated on different items: both
    sides compared with :func:`compare_unpaired` under the same settings (hence the same resamples
    and permutations, since each system has as many human as metric scores)."""
    check_same_systems(human, metric)
    settings = Settings.of(settings, **overrides)
    human_result = compare_unpaired(human, settings)
    metric_result = compare_unpaired({name: metric[name] for name in human}, settings)
    return agreement_of(human_result, metric_result, metric, settings.test)


__all__ = ["compare_unpaired", "unpaired_agreement"]
