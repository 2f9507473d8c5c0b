"""The base class of dialeval's ``evaluate`` modules (``metrics/<name>/<name>.py``).

:class:`CheckedMetric` is an :class:`evaluate.Metric` whose ``compute`` checks what it is given
before evaluate does:

* the options: the keywords that are no input must be parameters of the module's ``_compute``
  (:meth:`CheckedMetric.compute_options`, read from its signature; a ``_compute`` taking
  ``**kwargs`` is refused when the class is defined, as evaluate's own common test does). An
  unknown one is a ``ValueError`` naming it and the accepted ones, where evaluate would raise a
  ``TypeError`` from inside ``_compute``;
* the inputs (:func:`dialeval.modules.inputs.check_module_inputs`): a missing input, ``None``, a non-list
  or an entry of the wrong type (an int turn, a dict query) is a ``ValueError`` naming the input and
  the index, where evaluate would say "call add or add_batch" or fail inside ``datasets``; a
  module's own checks come first (:meth:`CheckedMetric._check_inputs`). An input mixing bare
  strings and lists of strings is made all lists (:func:`dialeval.modules.inputs.normalise_module_inputs`).
  A call that gives none of the inputs goes on to evaluate unchanged, so ``add_batch(...)`` then
  ``compute()`` still works.

Every module's result carries, beside each directed sub-score's mean ``<score>`` (flagged replies at
their worst value), ``<score>_unflagged`` (the mean over unflagged replies) and ``flagged`` (their
number), from the scorer's :func:`dialeval.core.results.summarize`. Every module takes
``percentiles=True`` (off by default): each per-item list ``<score>_scores`` that has a stored human
reference gets ``<score>_percentiles``, the score's mid-rank percentile among human replies to
DailyDialog test contexts (100: better than every one; a flagged reply at 0), and its mean
``<score>_percentile``, the readable system summary that still falls when a reply is blanked
(:mod:`dialeval.core.results`); ``percentiles_signature`` names that reference
(:mod:`dialeval.scoring.human_reference`).
The reference is stored for the bundled default: a call with other options (another ``model``, a
FED ``level="dialog"``) is refused with a ``ValueError`` naming the command that builds one, as is a
reference whose weights no longer match.

Module scripts import this module, not the class (``import dialeval.modules.metric_base``; ``class
Fed(dialeval.modules.metric_base.CheckedMetric)``): evaluate takes the first Metric subclass it finds in a
script's namespace as the module's class, and an imported ``CheckedMetric`` would come first.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable

import evaluate

from dialeval.core.options import check_known
from dialeval.core.results import percentile_means
from dialeval.modules.inputs import check_module_inputs, input_kinds, normalise_module_inputs

# evaluate's compute() has these as keywords of its own and hands them to _compute only as inputs
# (features): a module that takes one as an option (combined's optional references) gets it here.
EVALUATE_KEYWORDS = ("predictions", "references")


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
        from dialeval.scoring.human_reference import SUFFIX, with_percentiles

        options = {k: v for k, v in kwargs.items()
                   if k not in INPUT_NAMES and k not in self._feature_names() and v is not None}
        per_item = {key[: -len(SCORES_SUFFIX)]: values for key, values in result.items()
                    if key.endswith(SCORES_SUFFIX) and isinstance(values, list)}
        found, signature = with_percentiles(self.name, per_item, options, bool(kwargs.get("references")),
                                            result.get("flags"))
        means = percentile_means({key[: -len(SUFFIX)]: values for key, values in found.items()})
        return {**result, **found, **means, "percentiles_signature": signature}

    return wrapped


class CheckedMetric(evaluate.Metric):
    """:class:`evaluate.Metric` with its options and inputs checked first and ``percentiles=True``
    (module docstring)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuses a ``_compute`` taking ``**kwargs``; a module's own ``compute`` takes ``percentiles`` too."""
        super().__init_subclass__(**kwargs)
        catch_all = [p.name for p in inspect.signature(cls._compute).parameters.values() if p.kind is p.VAR_KEYWORD]
        if catch_all:
            raise TypeError(f"{cls.__name__}._compute takes **{catch_all[0]}: name each option as a parameter "
                            "(the accepted options are read from its signature)")
        if "compute" in cls.__dict__:
            cls.compute = reading_percentiles(cls.__dict__["compute"])

    def input_names(self) -> list[str]:
        """The inputs of ``compute`` (the feature names over every alternative of ``features``)."""
        return list(input_kinds(self.features))

    def compute_options(self) -> list[str]:
        """The options ``compute`` accepts: the parameters of ``_compute`` that are no input."""
        inputs = self.input_names()
        return [name for name in inspect.signature(self._compute).parameters if name not in inputs]

    def check_options(self, given: Iterable[str]) -> None:
        """``ValueError`` naming every keyword of ``given`` that is neither an input nor an option."""
        inputs = self.input_names()
        check_known(f"{self.name} compute()", [k for k in given if k not in inputs], self.compute_options())

    def _check_inputs(self, given: dict[str, Any]) -> None:
        """A module's own checks of the inputs ``given``, before the common ones (none here)."""

    def compute(self, **kwargs: Any) -> dict | None:
        """Compute the module's scores after checking the options and inputs given (module docstring)."""
        inputs = self.input_names()
        # None is evaluate's "not given" for its own keywords, as in evaluate.Metric.compute
        kwargs = {k: v for k, v in kwargs.items() if k in inputs or k not in EVALUATE_KEYWORDS or v is not None}
        self.check_options(kwargs)
        if any(name in kwargs for name in inputs):
            self._check_inputs(kwargs)
            check_module_inputs(self.features, kwargs)
            kwargs = normalise_module_inputs(self.features, kwargs)
        held = {k: kwargs.pop(k) for k in EVALUATE_KEYWORDS if k in kwargs and k not in inputs}
        if held:  # evaluate would drop them: bound to _compute for this call only
            self._compute = functools.partial(type(self)._compute, self, **held)
        try:
            return super().compute(**kwargs)
        finally:
            self.__dict__.pop("_compute", None)


CheckedMetric.compute = reading_percentiles(CheckedMetric.compute)
