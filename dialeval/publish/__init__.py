"""``dialeval publish``: model cards, reference scores, validation and upload of ``hub/<name>``
folders (:mod:`dialeval.publish.folders`, whose public names are re-exported here)."""

from dialeval.publish.folders import *  # noqa: F401,F403  (every public name of the one module)
