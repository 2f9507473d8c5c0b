"""FED: unsupervised evaluation of dialogue from follow-up likelihoods (Mehri & Eskenazi 2020, SIGdial).

:mod:`~dialeval.fed.scorer` (the 18 qualities, three variants), :mod:`~dialeval.fed.runner` (generic
items), :mod:`~dialeval.fed.data` (the FED data set), :mod:`~dialeval.fed.benchmark` (Table 6),
:mod:`~dialeval.fed.scales` and :mod:`~dialeval.fed.spec` (the metric's declaration).
"""
