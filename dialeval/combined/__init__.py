"""A combined metric learned from dialeval's own scores (issue 21; after Yeh et al. 2021's suggestion
to combine metrics): a non-negative ridge regression over the headline scores of the other metrics,
trained on the human-judgment sets and always validated on a set it never saw (leave-one-set-out).

:mod:`~dialeval.combined.features` (the components' scores as features), :mod:`~dialeval.combined.model`
(the regressions and their file), :mod:`~dialeval.combined.runner` (scoring generic items),
:mod:`~dialeval.combined.training` (the fit of ``training/combined.py``), :mod:`~dialeval.combined.card`
(the bundled folder's card), :mod:`~dialeval.combined.benchmark` (leave-one-set-out),
:mod:`~dialeval.combined.scales` and :mod:`~dialeval.combined.spec` (the metric's declaration).
"""
