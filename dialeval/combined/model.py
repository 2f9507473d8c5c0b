"""The combined metric's model: one non-negative linear model per feature pattern.

Training data (:func:`fit_linear`): items of several human-judgment sets, each item with its
component features ``x`` (:mod:`dialeval.combined.features`, as the model's inputs: the scores, their
percentiles among human replies or within the set, :func:`dialeval.combined.features.as_inputs`) and
its human score. Human scales differ between sets (1-3, 1-5, 0-1), so the target is the item's
*percentile within its set*, ``y = (rank - 0.5) / n`` (average ranks for ties), in (0, 1). Every set
weighs the same: an item of a set of ``n`` items has weight ``1 / n``.

Features are standardised with the weighted training mean and standard deviation,
``z_j = (x_j - mu_j) / sigma_j``, and the weights solve the non-negative ridge problem

    minimise  sum_i v_i (y_i - b - w . z_i)^2 + lambda |w - w0|^2   subject to  w >= 0,

with ``b`` the weighted mean of ``y`` (the ``z`` are centred), solved as a bounded least squares
problem (``scipy.optimize.lsq_linear``) on the rows ``sqrt(v_i) z_i`` stacked on ``sqrt(lambda) I``.
``w0`` is the prior: 0 (a ridge toward no weight), or equal weights ``1/k`` on the *inputs* of ``k``
prior features (``w0_j = sigma_j / k`` in ``z`` units: the mean of their inputs, which the ridge then
moves away from only as far as the ratings ask). Non-negative because every component is "higher =
better": the model can ignore a component, never turn it upside down. The score of an item is the
predicted percentile, clipped to [0, 1]: ``combined = clip(b + w . z, 0, 1)``. A model with no fit
at all (:func:`equal_weights`) is the mean of its inputs, ``0.5 + sum_j (x_j - 0.5) / k``.

A :class:`CombinedModel` holds the models trained on all sets (one per feature pattern seen in
training) and, for every training set ``S``, the model trained without ``S``'s *source* (the sets of
the same paper: its systems, raters and scale) for ``S``'s pattern (``held_out[S]``), which is what
the meta-evaluation reports on ``S``: never a score of a model that saw ``S`` or a sibling set.
It is saved as one JSON file, ``combined.json``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dialeval.combined.features import percentiles  # a set's human scores on a common (0, 1) scale

MODEL_FILE = "combined.json"
RIDGE = 1.0  # lambda, in units of one set's total weight (fixed, not tuned on any set)


@dataclass
class LinearModel:
    """``clip(intercept + sum_j weight_j (x_j - mean_j) / std_j, 0, 1)`` over ``features`` (as
    ``inputs``, :func:`dialeval.combined.features.as_inputs`)."""

    features: list[str]
    mean: list[float]
    std: list[float]
    weights: list[float]
    intercept: float
    sets: list[str]  # the human-judgment sets it was trained on
    items: int  # training items used (those with every feature finite)
    inputs: str = "score"

    def predict(self, table: Mapping[str, Sequence[float]]) -> list[float]:
        """Per-item scores; a non-finite feature value counts as the training mean (``z = 0``)."""
        from dialeval.combined.features import as_inputs

        table = as_inputs({name: table[name] for name in self.features}, self.inputs)
        n = len(table[self.features[0]])
        out = []
        for i in range(n):
            total = self.intercept
            for name, mu, sd, w in zip(self.features, self.mean, self.std, self.weights):
                x = float(table[name][i])
                if math.isfinite(x):
                    total += w * (x - mu) / sd
            out.append(min(1.0, max(0.0, total)))
        return out

    def contributions(self) -> dict[str, float]:
        """Weight per raw feature unit (``w_j / sigma_j``): what one more point of a component adds."""
        return {name: w / sd for name, w, sd in zip(self.features, self.weights, self.std)}


@dataclass
class WeightedRows:
    """The weighted, standardised least-squares rows of :func:`fit_linear` before the ridge rows:
    ``rows = sqrt(v_i) z_i``, ``target = sqrt(v_i) (y_i - b)``."""

    features: list[str]
    rows: np.ndarray
    target: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    intercept: float
    sets: list[str]
    items: int
    inputs: str = "score"

    def model(self, weights: Sequence[float]) -> LinearModel:
        return LinearModel(list(self.features), self.mean.tolist(), self.std.tolist(), [float(w) for w in weights],
                           self.intercept, self.sets, self.items, self.inputs)


def design(rows: Mapping[str, tuple[Mapping[str, Sequence[float]], Sequence[float]]],
           features: Sequence[str], inputs: str = "score") -> WeightedRows:
    """The rows of ``rows`` (set name -> (feature table, human scores)), each set's features as
    ``inputs``, as the module docstring weighs and standardises them; items with a non-finite
    feature or human score are left out."""
    from dialeval.combined.features import as_inputs, complete_rows

    if not rows:
        raise ValueError("fit_linear: no training set")
    xs, ys, vs = [], [], []
    for set_name, (table, human) in rows.items():
        missing = [f for f in features if f not in table]
        if missing:
            raise ValueError(f"fit_linear: set {set_name!r} has no feature(s) {missing}")
        table = as_inputs({f: table[f] for f in features}, inputs)
        keep = [i for i in complete_rows(table, features) if math.isfinite(human[i])]
        if len(keep) < 3:
            raise ValueError(f"fit_linear: set {set_name!r} has {len(keep)} complete items (3 or more needed)")
        xs.append(np.array([[table[f][i] for f in features] for i in keep], dtype=float))
        ys.append(percentiles([human[i] for i in keep]))
        vs.append(np.full(len(keep), 1.0 / len(keep)))
    x, y, v = np.vstack(xs), np.concatenate(ys), np.concatenate(vs)
    mean = (v[:, None] * x).sum(0) / v.sum()
    std = np.sqrt((v[:, None] * (x - mean) ** 2).sum(0) / v.sum())
    std[std == 0] = 1.0
    intercept = float((v * y).sum() / v.sum())
    return WeightedRows(list(features), np.sqrt(v)[:, None] * ((x - mean) / std), np.sqrt(v) * (y - intercept), mean,
                        std, intercept, sorted(rows), int(len(y)), inputs)


def fit_linear(rows: Mapping[str, tuple[Mapping[str, Sequence[float]], Sequence[float]]], features: Sequence[str],
               ridge: float = RIDGE, inputs: str = "score", prior: Sequence[str] = ()) -> LinearModel:
    """Fit on ``rows``: set name -> (feature table, human scores); see the module docstring
    (``prior``: the features of ``w0``'s equal weights; none: a ridge toward 0). Items with a
    non-finite feature or human score are left out."""
    from scipy.optimize import lsq_linear

    found = design(rows, features, inputs)
    w0 = np.array([sd / len(prior) if f in prior else 0.0 for f, sd in zip(features, found.std)])
    solved = lsq_linear(np.vstack([found.rows, math.sqrt(ridge) * np.eye(len(features))]),
                        np.concatenate([found.target, math.sqrt(ridge) * w0]), bounds=(0, np.inf),
                        method="bvls", tol=1e-12)
    return found.model(solved.x)


def equal_weights(features: Sequence[str], inputs: str) -> LinearModel:
    """The mean of ``features``' inputs (percentiles in [0, 1]), fitted on nothing: a missing input
    counts as 0.5."""
    k = len(features)
    return LinearModel(list(features), [0.5] * k, [1.0] * k, [1.0 / k] * k, 0.5, [], 0, inputs)


@dataclass
class CombinedModel:
    """Per-pattern models trained on every set, and each set's leave-one-source-out model
    (``design``: the name of the :class:`dialeval.combined.designs.Design` they follow)."""

    models: list[LinearModel]
    held_out: dict[str, LinearModel]
    components: dict[str, str]  # grid job -> the signature of the scores it was trained on
    ridge: float = RIDGE
    notes: dict[str, Any] = field(default_factory=dict)
    design: str = ""

    def features(self) -> list[str]:
        """Every feature one of its models reads."""
        return list(dict.fromkeys(f for m in [*self.models, *self.held_out.values()] for f in m.features))

    def for_pattern(self, available: Sequence[str], held_out: str | None = None) -> LinearModel:
        """The model to score a batch whose available features are ``available``: the one trained
        without ``held_out`` when given (a set the model was trained on), else the trained-on-all
        model with the most features that are all available."""
        if held_out is not None:
            if held_out not in self.held_out:
                raise ValueError(f"no model trained without {held_out!r}; training sets: {sorted(self.held_out)}")
            model = self.held_out[held_out]
            missing = [f for f in model.features if f not in available]
            if missing:
                raise ValueError(f"the model trained without {held_out!r} needs features {missing} this batch lacks")
            return model
        fitting = [m for m in self.models if set(m.features) <= set(available)]
        if not fitting:
            patterns = [m.features for m in self.models]
            raise ValueError(f"no combined model for the features {list(available)}; trained patterns: {patterns}")
        return max(fitting, key=lambda m: len(m.features))

    def save(self, folder: str | os.PathLike) -> Path:
        path = Path(folder) / MODEL_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"model_type": "dialeval-combined", **asdict(self)}, indent=1) + "\n")
        return path

    @classmethod
    def load(cls, folder: str | os.PathLike) -> "CombinedModel":
        path = Path(folder) / MODEL_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: no combined-metric {MODEL_FILE}")
        raw = json.loads(path.read_text())
        return cls([LinearModel(**m) for m in raw["models"]],
                   {s: LinearModel(**m) for s, m in raw["held_out"].items()},
                   raw["components"], raw.get("ridge", RIDGE), raw.get("notes", {}), raw.get("design", ""))
