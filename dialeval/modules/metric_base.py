"""The base class of dialeval's ``evaluate`` modules (``metrics/<name>/<name>.py``).

:class:`CheckedMetric` is an :class:`evaluate.Metric` whose ``compute`` checks the inputs it is given
before evaluate does (:func:`dialeval.modules.inputs.check_module_inputs`): a missing input, ``None``, a
non-list or an entry of the wrong type (an int turn, a dict query) is a ``ValueError`` naming the
input and the index, where evaluate would say "call add or add_batch" or fail inside ``datasets``.
An input mixing bare strings and lists of strings is made all lists
(:func:`dialeval.modules.inputs.normalise_module_inputs`). A call that gives none of the inputs goes on to
evaluate unchanged, so ``add_batch(...)`` then ``compute()`` still works.

Every module takes ``percentiles=True`` (off by default: the default outputs do not change): each
per-item list ``<score>_scores`` that has a stored human reference gets ``<score>_percentiles``, the
score's mid-rank percentile among human replies to DailyDialog test contexts (100: better than every
one), and ``percentiles_signature`` names that reference (:mod:`dialeval.scoring.human_reference`).
The reference is stored for the bundled default: a call with other options (another ``model``, a
FED ``level="dialog"``) is refused with a ``ValueError`` naming the command that builds one, as is a
reference whose weights no longer match.

Module scripts import this module, not the class (``import dialeval.modules.metric_base``; ``class
Fed(dialeval.modules.metric_base.CheckedMetric)``): evaluate takes the first Metric subclass it finds in a
script's namespace as the module's class, and an imported ``CheckedMetric`` would come first.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import evaluate

from dialeval.modules.inputs import check_module_inputs, normalise_module_inputs


# compute() keywords that are inputs, never options (the modules' features and the inputs they take beside them)
INPUT_NAMES = ("contexts", "responses", "references", "predictions", "conversations", "queries", "histories",
               "response_groups", "speakers", "response_speakers")
SCORES_SUFFIX = "_scores"


def reading_percentiles(compute: Callable[..., dict | None]) -> Callable[..., dict | None]:
    """``compute`` taking ``percentiles=False`` as well (module docstring)."""

    @functools.wraps(compute)
    def wrapped(self: evaluate.Metric, *args: Any, percentiles: bool = False, **kwargs: Any) -> dict | None:
        """Compute the module's scores; ``percentiles=True`` adds each score's percentile among human
        replies (dialeval.modules.metric_base). Inputs:
        """
        # (evaluate copies this function per instance from its code, so the docstring is written here)
        result = compute(self, *args, **kwargs)
        if not percentiles or result is None:
            return result
        from dialeval.scoring.human_reference import with_percentiles

        options = {k: v for k, v in kwargs.items()
                   if k not in INPUT_NAMES and k not in self._feature_names() and v is not None}
        per_item = {key[: -len(SCORES_SUFFIX)]: values for key, values in result.items()
                    if key.endswith(SCORES_SUFFIX) and isinstance(values, list)}
        found, signature = with_percentiles(self.name, per_item, options, bool(kwargs.get("references")))
        return {**result, **found, "percentiles_signature": signature}

    return wrapped


class CheckedMetric(evaluate.Metric):
    """:class:`evaluate.Metric` with its inputs checked first and ``percentiles=True`` (module docstring)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A module's own ``compute`` (checks of its own before this class's) takes ``percentiles`` too."""
        super().__init_subclass__(**kwargs)
        if "compute" in cls.__dict__:
            cls.compute = reading_percentiles(cls.__dict__["compute"])

    def compute(self, **kwargs: Any) -> dict | None:
        """Compute the module's scores after checking the inputs given (module docstring). Inputs:
        """
        if any(name in kwargs for name in self._feature_names()):
            check_module_inputs(self.features, kwargs)
            kwargs = normalise_module_inputs(self.features, kwargs)
        return super().compute(**kwargs)


CheckedMetric.compute = reading_percentiles(CheckedMetric.compute)
