"""Statistics of dialeval: pure numpy/scipy, no I/O, no metric names, no other dialeval package
(``tests/test_architecture.py`` checks it; only ``dialeval.version.__version__`` is read, for signatures).

* :mod:`~dialeval.stats.bootstrap`: the one percentile-bootstrap helper (index draws, resampled
  statistics, percentile intervals), the random-number conventions, intervals of one mean;
* :mod:`~dialeval.stats.correlation`: Pearson, Spearman, Kendall, their bootstrap intervals,
  row-wise correlations, system-level correlation, Williams' test, inter-rater agreement;
* :mod:`~dialeval.stats.results`: :class:`~dialeval.stats.results.Settings` and the result types;
* :mod:`~dialeval.stats.paired`: paired bootstrap, approximate randomization, Holm/Bonferroni,
  ranking with ties, agreement with humans (systems on the same items);
* :mod:`~dialeval.stats.unpaired`: unpaired bootstrap and permutation test (systems on different items);
* :mod:`~dialeval.stats.systems`: system-level agreement over a judgment set, paired or not;
* :mod:`~dialeval.stats.proportion`: the Wilson score interval of a proportion.
"""
