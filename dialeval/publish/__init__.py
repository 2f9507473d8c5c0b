"""Publishing the ``hub/<name>`` folders (``dialeval publish``, whose command is :mod:`dialeval.cli.publish`).

A bundled folder is laid out as the Hub repository ``dialeval/<name>`` (:mod:`dialeval.models.hub`);
this package adds what makes it publishable and checkable, one job a module, their public names
re-exported here:

* :mod:`~dialeval.publish.model_cards`: :func:`write_model_card`, every folder's card, from the
  ``CardSpec`` its metric declares and the measured numbers;
* :mod:`~dialeval.publish.reference`: ``dialeval_reference.json``, a fixed sample's scores
  (:func:`write_reference`) recomputed to within ``1e-4`` (:func:`check_reference`);
* :mod:`~dialeval.publish.upload`: :func:`validate` (what ``--dry-run`` checks) and :func:`publish`
  (validation, then the upload; offline it fails at once).
"""

from dialeval.publish.model_cards import (
    FULL_COMMIT, RESULTS, card_body, card_measured, card_spec, cards, write_model_card,
)
from dialeval.publish.reference import (
    NLI_SAMPLE, REFERENCE_FILE, TOLERANCE, check_evaluate_reference, check_reference, evaluate_samples,
    evaluate_scores, max_difference, sample_scores, stored_reference, task_type, write_reference,
)
from dialeval.publish.upload import (
    FOLDER_LIMIT_MB, REQUIRED_METADATA, TOTAL_LIMIT_MB, check_card, check_sizes, folder_mb, publish, validate,
)

__all__ = ["FOLDER_LIMIT_MB", "FULL_COMMIT", "NLI_SAMPLE", "REFERENCE_FILE", "REQUIRED_METADATA", "RESULTS",
           "TOLERANCE", "TOTAL_LIMIT_MB", "card_body", "card_measured", "card_spec", "cards", "check_card",
           "check_evaluate_reference", "check_reference", "check_sizes", "evaluate_samples", "evaluate_scores",
           "folder_mb", "max_difference", "publish", "sample_scores", "stored_reference", "task_type", "validate",
           "write_model_card", "write_reference"]
