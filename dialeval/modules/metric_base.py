"""The base class of dialeval's ``evaluate`` modules (``metrics/<name>/<name>.py``).

:class:`CheckedMetric` is an :class:`evaluate.Metric` whose ``compute`` checks the inputs it is given
before evaluate does (:func:`dialeval.modules.inputs.check_module_inputs`): a missing input, ``None``, a
non-list or an entry of the wrong type (an int turn, a dict query) is a ``ValueError`` naming the
input and the index, where evaluate would say "call add or add_batch" or fail inside ``datasets``.
An input mixing bare strings and lists of strings is made all lists
(:func:`dialeval.modules.inputs.normalise_module_inputs`). A call that gives none of the inputs goes on to
evaluate unchanged, so ``add_batch(...)`` then ``compute()`` still works.

Module scripts import this module, not the class (``import dialeval.modules.metric_base``; ``class
Fed(dialeval.modules.metric_base.CheckedMetric)``): evaluate takes the first Metric subclass it finds in a
script's namespace as the module's class, and an imported ``CheckedMetric`` would come first.
"""

from __future__ import annotations

from typing import Any

import evaluate

from dialeval.modules.inputs import check_module_inputs, normalise_module_inputs


class CheckedMetric(evaluate.Metric):
    """:class:`evaluate.Metric` with its inputs checked first (module docstring)."""

    def compute(self, **kwargs: Any) -> dict | None:
        """Compute the module's scores after checking the inputs given (module docstring). Inputs:
        """
        if any(name in kwargs for name in self._feature_names()):
            check_module_inputs(self.features, kwargs)
            kwargs = normalise_module_inputs(self.features, kwargs)
        return super().compute(**kwargs)
