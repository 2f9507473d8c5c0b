"""Moved to :mod:`dialeval.stats.correlation`; kept for one release so that code importing
``dialeval.correlation`` keeps working. New code imports :mod:`dialeval.stats.correlation`."""

from dialeval.stats.correlation import (  # noqa: F401
    STATISTICS, Correlation, bootstrap_interval, correlate, correlate_all, finite_pairs, inter_rater, rowwise,
    system_level, williams_spearman, williams_test,
)

__all__ = ["STATISTICS", "Correlation", "bootstrap_interval", "correlate", "correlate_all", "finite_pairs",
           "inter_rater", "rowwise", "system_level", "williams_spearman", "williams_test"]
