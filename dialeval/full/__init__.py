"""FULL: open-domain dialogue evaluation from the likelihood of negative follow-ups (De Bruyn et al.
2022, COLING).

:mod:`~dialeval.full.scorer` (the scoring rule and its variants), :mod:`~dialeval.full.runner`
(generic items, the default model), :mod:`~dialeval.full.benchmark` (the paper's FED correlations),
:mod:`~dialeval.full.scales` and :mod:`~dialeval.full.spec` (the metric's declaration). FULL owns no
human-judgment set: it is benchmarked on FED's (``fed-turn``, ``fed-dialog``) through the registry.
"""
