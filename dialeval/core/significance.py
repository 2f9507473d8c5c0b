"""Moved to :mod:`dialeval.stats` (:mod:`~dialeval.stats.paired` has the paired tests and their
formulas, :mod:`~dialeval.stats.results` the result types and :class:`Settings`); kept for one
release so that code importing ``dialeval.core.significance`` keeps working."""

from dialeval import __version__  # noqa: F401  (the version the signatures carry)
from dialeval.stats.paired import (  # noqa: F401
    DEFAULT_MAX_CHUNK_BYTES, MAX_EXACT_ITEMS, TIE_RTOL, adjust_p_values, agreement_of, check_systems, compare,
    human_agreement, rank_groups,
)
from dialeval.stats.results import (  # noqa: F401
    CORRECTIONS, TESTS, Agreement, AgreementPair, Comparison, PairResult, Settings, SystemResult,
)

__all__ = [
    "Agreement", "AgreementPair", "Comparison", "PairResult", "Settings", "SystemResult",
    "adjust_p_values", "compare", "human_agreement",
]
