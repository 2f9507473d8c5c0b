"""SSREM: speaker-sensitive response evaluation (Bak & Oh 2020, ACL).

:mod:`~dialeval.ssrem.scorer` (the model, its training data and scoring), :mod:`~dialeval.ssrem.runner`
(generic items), :mod:`~dialeval.ssrem.benchmark` (Table 4 layout, Section 6), :mod:`~dialeval.ssrem.scales`
and :mod:`~dialeval.ssrem.spec` (the metric's declaration).
"""
