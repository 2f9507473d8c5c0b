"""Models: where every model and shipped file comes from.

* :mod:`~dialeval.models.resolve`: model resolution, in one place, for every metric and training
  script (a local folder, ``$DIALEVAL_MODELS``, the HF cache, a bundled ``hub/`` folder, the Hub);
  its public names are re-exported here (``from dialeval.models import resolve_model``);
* :mod:`~dialeval.models.hub`: the bundled Hub-ready folders ``hub/<name>/`` (content hashes,
  adapters over pinned bases, cards' metadata);
* :mod:`~dialeval.models.shipped`: where the files shipped beside the code are (checkout or wheel).
"""

from dialeval.models.resolve import (
    ADAPTER_FILES, ADAPTER_WEIGHTS, HUB_HOST, MODEL_FILES, PROBE_TIMEOUT_S, ModelNotFoundError, check_model_dir,
    is_offline, models_dir, preferred_model, resolve_model,
)

__all__ = ["ADAPTER_FILES", "ADAPTER_WEIGHTS", "HUB_HOST", "MODEL_FILES", "PROBE_TIMEOUT_S", "ModelNotFoundError",
           "check_model_dir", "is_offline", "models_dir", "preferred_model", "resolve_model"]
