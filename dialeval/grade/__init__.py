"""GRADE: Graph-enhanced Representations for Automatic Dialogue Evaluation (Huang et al. 2020, EMNLP).

One module per job: :mod:`~dialeval.grade.keywords` (TF-IDF x POS keywords),
:mod:`~dialeval.grade.graph` (ConceptNet, hop distances, dialogue adjacency),
:mod:`~dialeval.grade.nodes` (node vectors, k-hop inputs), :mod:`~dialeval.grade.gat` (graph branch),
:mod:`~dialeval.grade.encoder` (pair encoder, frozen or with a LoRA adapter), :mod:`~dialeval.grade.features` (pair ->
tensors), :mod:`~dialeval.grade.model` (head, loss, checkpoint), :mod:`~dialeval.grade.negatives`
(training negatives), :mod:`~dialeval.grade.scorer` (scoring from a checkpoint),
:mod:`~dialeval.grade.runner` (generic items), :mod:`~dialeval.grade.data` (the human judgments),
:mod:`~dialeval.grade.benchmark` (Tables 1-3), :mod:`~dialeval.grade.training` (the training run of
``training/grade.py``; scoring never imports it), :mod:`~dialeval.grade.card` (the bundled folder's
card), :mod:`~dialeval.grade.scales` and :mod:`~dialeval.grade.spec` (the metric's declaration).
"""
