"""GRADE: Graph-enhanced Representations for Automatic Dialogue Evaluation (Huang et al. 2020, EMNLP).

One module per job: :mod:`~dialeval.grade.keywords` (TF-IDF x POS keywords),
:mod:`~dialeval.grade.graph` (ConceptNet, hop distances, dialogue adjacency),
:mod:`~dialeval.grade.nodes` (node vectors, k-hop inputs), :mod:`~dialeval.grade.gat` (graph branch),
:mod:`~dialeval.grade.encoder` (pair encoder, frozen or with a LoRA adapter), :mod:`~dialeval.grade.features` (pair ->
tensors), :mod:`~dialeval.grade.model` (head, loss, checkpoint), :mod:`~dialeval.grade.negatives`
(training negatives) and :mod:`~dialeval.grade.scorer` (scoring from a checkpoint).
"""

from dialeval.grade.scorer import DEFAULT_MODEL, GradeScorer, grade_scorer

__all__ = ["DEFAULT_MODEL", "GradeScorer", "grade_scorer"]
