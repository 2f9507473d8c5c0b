"""Holistic evaluation of open-domain dialogue (Pang et al. 2020, ACL).

:mod:`~dialeval.holistic.scorer` (coherence, fluency, diversity, consistency),
:mod:`~dialeval.holistic.calibration` (stored 5th-percentile cutoffs), :mod:`~dialeval.holistic.augment`
(query paraphrases for diversity), :mod:`~dialeval.holistic.runner` (generic items),
:mod:`~dialeval.holistic.data` (the human judgments), :mod:`~dialeval.holistic.benchmark` (Tables 3, 4, 8),
:mod:`~dialeval.holistic.scales`, :mod:`~dialeval.holistic.defaults` (the default LM's name) and
:mod:`~dialeval.holistic.spec` (the metric's declaration).
"""
