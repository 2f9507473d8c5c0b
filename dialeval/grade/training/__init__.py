"""Training GRADE (``training/grade.py``, which parses the options and calls :func:`run.run`).

:mod:`~dialeval.grade.training.examples` (pairs, negatives, cached embeddings),
:mod:`~dialeval.grade.training.graphs` (compact keyword graphs), :mod:`~dialeval.grade.training.split`
(one split's inputs), :mod:`~dialeval.grade.training.prepare` (the cached inputs of a run),
:mod:`~dialeval.grade.training.trainee` (what trains and its loop), :mod:`~dialeval.grade.training.accuracy`
(pairwise ranking accuracy on validation), :mod:`~dialeval.grade.training.variants` (Table 3 ablations,
design sweep) and :mod:`~dialeval.grade.training.run` (one run). Scoring never imports this package.
"""
