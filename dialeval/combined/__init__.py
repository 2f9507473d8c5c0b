"""A combined metric made of dialeval's own scores (issues 21, 57; after Yeh et al. 2021's suggestion
to combine metrics): by default the mean percentile among human replies of the components that pass
the behavioural suite (coherence, GRADE, SSREM's f), the design chosen among six by
leave-one-source-out agreement with the shared sets' ratings against GRADE alone.

:mod:`~dialeval.combined.features` (the components' scores as features and inputs),
:mod:`~dialeval.combined.designs` (the designs and the default), :mod:`~dialeval.combined.model` (the
linear models and their file), :mod:`~dialeval.combined.runner` (scoring generic items),
:mod:`~dialeval.combined.training` (the fit of ``training/combined.py``), :mod:`~dialeval.combined.card`
(the bundled folder's card), :mod:`~dialeval.combined.benchmark` (the bundled model held out by source,
beside single metrics), :mod:`~dialeval.combined.transfer` (the designs leave-one-source-out),
:mod:`~dialeval.combined.scales` and :mod:`~dialeval.combined.spec` (the metric's declaration).
"""
