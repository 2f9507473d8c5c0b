"""The designs of the combined metric compared leave-one-source-out (issue 57), and the default.

A :class:`Design` says which features (:mod:`dialeval.combined.features`) the model reads, as which
inputs (:func:`dialeval.combined.features.as_inputs`) and how its weights are had
(:mod:`dialeval.combined.model`): a non-negative ridge toward no weight, a ridge toward equal weights
on :data:`~dialeval.combined.features.TRANSFER`'s inputs, or those equal weights with no fit. The
benchmark ``dialeval benchmark --metric combined --dataset combined-loso-source``
(:mod:`dialeval.combined.benchmark`) scores each one leave-one-source-out against GRADE alone;
:data:`DEFAULT` is the one ``training/combined.py`` builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from dialeval.combined.features import FEATURES, TRANSFER, jobs_of

FITS = ("ridge", "prior", "none")


@dataclass(frozen=True)
class Design:
    """``features`` as ``inputs``, weighted by ``fit``: ``"ridge"`` (non-negative, toward 0),
    ``"prior"`` (non-negative, toward equal weights on the :data:`TRANSFER` features' inputs) or
    ``"none"`` (those equal weights, no rating read)."""

    name: str
    summary: str
    features: tuple[str, ...]
    inputs: str = "score"
    fit: str = "ridge"

    @property
    def reads_ratings(self) -> bool:
        return self.fit != "none"

    def free_weights(self) -> int:
        """Weights fitted to ratings (per pattern model)."""
        return 0 if self.fit == "none" else len(self.features)

    def fit_model(self, rows: Mapping[str, tuple[Mapping[str, Sequence[float]], Sequence[float]]],
                  features: Sequence[str], ridge: float):
        """The :class:`dialeval.combined.model.LinearModel` of pattern ``features`` on ``rows``."""
        from dialeval.combined.model import equal_weights, fit_linear

        if self.fit == "none":
            return equal_weights(features, self.inputs)
        prior = [f for f in features if f in TRANSFER] if self.fit == "prior" else ()
        return fit_linear(rows, features, ridge, self.inputs, prior)


# (a) and (e) read the ten features there were before USL-H: their tables stay comparable with the earlier ones
_ALL = tuple(f.name for f in FEATURES if f.job != "usl")
# USL-H passes every declared kind of the behavioural suite on unseen DailyDialog test contexts too
# (benchmarks/results/usl-behaviour-50.md), the rule that made TRANSFER
_TRANSFER_USL = (*TRANSFER, "usl")
_REFERENCE_FREE = ("coherence", "fluency", "consistency", "grade", "ssrem_f")
DESIGNS: tuple[Design, ...] = (
    Design("a", "non-negative ridge over every available feature (the design until issue 57, less FED and FULL)", _ALL),
    Design("b", "the same ridge over the components that pass the behavioural suite (coherence, grade, ssrem_f)",
           TRANSFER),
    Design("c", "the mean of coherence's, GRADE's and ssrem_f's percentiles among human replies (no fit)", TRANSFER,
           "human", "none"),
    Design("d", "a ridge over those three percentiles shrunk toward (c)'s equal weights", TRANSFER, "human", "prior"),
    Design("e", "the ridge of (a) over within-set percentiles of the features", _ALL, "rank"),
    Design("f", "the ridge of (a) over the reference-free features, for referenced items too", _REFERENCE_FREE),
    Design("g", "the mean of (c)'s three percentiles and USL-H's among human replies (no fit)", _TRANSFER_USL,
           "human", "none"),
    Design("h", "the ridge of (b) with USL-H's parts U, S and L beside coherence, grade and ssrem_f",
           (*TRANSFER, "usl_u", "usl_s", "usl_l")),
)
DEFAULT = DESIGNS[2]  # (c): chosen by benchmarks/results/combined-loso-source.txt
JOBS: tuple[str, ...] = jobs_of(DEFAULT.features)


def design_named(name: str) -> Design:
    for design in DESIGNS:
        if design.name == name:
            return design
    raise ValueError(f"no combined design {name!r}; designs: {[d.name for d in DESIGNS]}")
