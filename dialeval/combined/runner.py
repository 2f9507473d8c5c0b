"""How the combined metric scores generic items: its components through the score cache, then the
per-pattern linear model (:mod:`dialeval.combined.model`).

Each component is a meta-evaluation grid job (:func:`dialeval.registry.grid_jobs`), run with the
options it has on the set named by ``held_out`` (FED's dialogue level on ``fed-dialog``) or on
generic items, over which :data:`dialeval.combined.features.PINNED_OPTIONS` keep the options the
model was trained with (none while it is trained on every component's default), and read through
:func:`dialeval.scoring.cache.scores_for` with the same key as ``dialeval benchmark --all`` for an
unpinned job: scoring with ``combined`` after the grid (or a second time) costs only the regression
and the pinned jobs. A component that does not apply to the items (no references, no contexts) is
left out and the model for the remaining features is used; a component whose weights cannot be had
is left out with a warning, its features count as their training mean, and the signature names it
(``missing:<job>``).

This is the one metric that reads other metrics: it sits with the runners (ARCHITECTURE.md), and
reaches the others only through the registry's grid jobs, the runners and the score cache.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from dialeval.core.results import ItemScores
from dialeval.core.signature import Signature
from dialeval.core.spec import Job

DEFAULT_MODEL = "dialeval/combined-judgments"
MISSING = "missing weights"


def resolve_folder(model: str) -> Path:
    """A folder holding ``combined.json``: a directory, or ``dialeval/<name>`` bundled under ``hub/``."""
    from dialeval.combined.model import MODEL_FILE
    from dialeval.models.hub import bundled_dir
    from dialeval.models import ModelNotFoundError

    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a folder or 'dialeval/<name>', got {model!r}")
    path = Path(model).expanduser()
    if (path / MODEL_FILE).is_file():
        return path
    bundled = bundled_dir(model)
    if bundled is not None and (bundled / MODEL_FILE).is_file():
        return bundled
    raise ModelNotFoundError(f"combined model {model!r}: no {MODEL_FILE} there and no bundled hub/ folder of that "
                             "name; build it with `python training/combined.py` (after `dialeval benchmark --all`)")


@dataclass
class Components:
    """The component jobs' results on a batch: per-item scores, signature and per-item flags by job,
    and why each job left out was left out."""

    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    flags: dict[str, list[list[str]]] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    def missing_weights(self) -> list[str]:
        """The jobs left out because their weights cannot be had."""
        return sorted(job for job, why in self.left_out.items() if why.startswith(MISSING))

    def item_flags(self, n: int) -> list[list[str]]:
        """Per item, the union of the flags the components set."""
        union: list[list[str]] = [[] for _ in range(n)]
        for per_job in self.flags.values():
            for mine, theirs in zip(union, per_job):
                mine.extend(f for f in theirs if f not in mine)
        return union


def model_jobs(model: str | None = None) -> tuple[str, ...]:
    """The component jobs the combined model ``model`` (default: the bundled one) reads."""
    from dialeval.combined.features import jobs_of
    from dialeval.combined.model import CombinedModel

    return jobs_of(CombinedModel.load(resolve_folder(model or DEFAULT_MODEL)).features())


def component_jobs(items: Sequence[dict], set_name: str | None = None, precision: str | None = None,
                   jobs: Sequence[str] | None = None) -> list[tuple[Job, dict[str, Any]]]:
    """Every component job of ``jobs`` (default :data:`dialeval.combined.designs.JOBS`) with the
    options it runs with on ``items``: the grid job's on ``set_name``,
    :data:`~dialeval.combined.features.PINNED_OPTIONS` over them, and ``precision`` where the job's
    runner takes it."""
    from dialeval.combined.designs import JOBS
    from dialeval.combined.features import PINNED_OPTIONS
    from dialeval.registry import grid_jobs
    from dialeval.scoring.chunks import with_precision_option

    found = []
    for job in (j for j in grid_jobs() if j.name in (JOBS if jobs is None else jobs)):
        options = {**job.options_on(set_name or "", items), **PINNED_OPTIONS.get(job.name, {})}
        found.append((job, with_precision_option(job.metric, options, precision)))
    return found


def runs_read(items: Sequence[dict], options: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(metric, options)`` of every component run that ``run_combined(items, **options)`` reads from
    the score cache (``MetricSpec.reads_runs``)."""
    return [(job.metric, job_options)
            for job, job_options in component_jobs(items, options.get("held_out"), options.get("precision"),
                                                   model_jobs(options.get("model")))]


def component_scores(items: Sequence[dict], set_name: str | None = None, refresh: bool = False,
                     precision: str | None = None, jobs: Sequence[str] | None = None) -> Components:
    """Every component job of ``jobs`` (:func:`component_jobs`) on ``items``, with the grid job's
    options and :data:`~dialeval.combined.features.PINNED_OPTIONS`, through the score cache; ``precision``
    (:mod:`dialeval.core.precision`) is given to every component whose runner takes it.

    Progress per component and, inside it, per item (:mod:`dialeval.core.progress`): ``combined:
    component 2/6: fed-turn, 3:05 so far | fed-turn: 112/300 items (37%), 1.9 items/s, 1:39 left``;
    no estimate over the components, whose costs differ too much to extrapolate."""
    from dialeval.models import ModelNotFoundError
    from dialeval.core.degenerate import floors_as_missing
    from dialeval.core.progress import Progress
    from dialeval.registry import spec
    from dialeval.scoring.cache import scores_for

    found = Components()
    runs = component_jobs(items, set_name, precision, jobs)
    with Progress(len(runs), "combined", unit="component", estimate=False) as bar:
        for number, (job, options) in enumerate(runs, 1):
            bar.set_label(f"component {number}/{len(runs)}: {job.name}")
            try:
                entry = scores_for(job.metric, options, items, refresh, desc=job.name)
            except ModelNotFoundError as e:
                found.left_out[job.name] = f"{MISSING}: {e}"
                continue
            except (ValueError, FileNotFoundError) as e:
                found.left_out[job.name] = f"not applicable: {e}"
                continue
            finally:
                bar.update()
            # a flagged item's floor value (FED's -1000) is no feature value: NaN, as the item is scored 0
            scores = floors_as_missing(entry["per_item"], entry["flags"], spec(job.metric).scales())
            found.scores[job.name], found.signatures[job.name] = scores, entry["signature"]
            found.flags[job.name] = entry["flags"]
    return found


def model_of(signature: str) -> str:
    """The first ``model:`` (or, for consistency, ``nli:``) field of a signature, or of the first of
    several joined ones (``none`` for a metric that loads no weights)."""
    fields = (item for parsed in Signature.parse_all(signature) for item in parsed.fields.items())
    return next((value for key, value in fields if key in ("model", "nli")), "none")


def precisions_named(signatures: dict[str, str]) -> str | None:
    """The ``precision:`` fields of the components' signatures, ``+``-joined (``None``: all float32)."""
    found = sorted({part.split(":", 1)[1] for s in signatures.values() for part in s.split("|")
                    if part.startswith("precision:")})
    return "+".join(found) or None


def weights_named(signatures: dict[str, str]) -> str:
    """``job=<model>`` for every component, ``+``-joined."""
    return "+".join(f"{job}={model_of(signature)}" for job, signature in signatures.items())


def run_combined(items: Sequence[dict], model: str | None = None, held_out: str | None = None,
                 precision: str | None = None) -> ItemScores:
    """The combined score of each item (in [0, 1], higher = better); an item a component flagged
    (empty, repetitive, unknown words: :mod:`dialeval.core.degenerate`) gets 0 and the flags.

    ``held_out``: the human-judgment set the items are (``dialeval benchmark --all`` passes it): the
    model trained *without* that set scores them, and the components run with that set's options.
    ``precision``: the components' (:func:`component_scores`; each resolves ``"auto"`` by its own
    declaration); the signature names the precisions they ran in other than float32."""
    if not items:
        raise ValueError("combined: no items to score")
    jobs = model_jobs(model)  # a missing model fails before any component is scored
    return combine(component_scores(items, held_out, precision=precision, jobs=jobs), model, held_out)


def combine(found: Components, model: str | None = None, held_out: str | None = None) -> ItemScores:
    """:func:`run_combined` from the components' results on the items (:func:`component_scores`)."""
    from dialeval.combined.features import FEATURES, feature_table, pattern
    from dialeval.combined.model import CombinedModel
    from dialeval.combined.scales import SCALES
    from dialeval.core.degenerate import apply_policy
    from dialeval.core.results import make_signature
    from dialeval.models.hub import weights_id

    name = model or DEFAULT_MODEL
    folder = resolve_folder(name)
    missing = found.missing_weights()
    for job in missing:
        warnings.warn(f"combined: component {job} skipped ({found.left_out[job]}); its features count as their training mean")
    table = feature_table(found.scores)
    # a component without weights counts as applicable: the model is chosen as with its weights, and
    # LinearModel.predict lets the training mean stand in for its missing values
    available = pattern(table) + tuple(f.name for f in FEATURES if f.job in missing)
    try:
        linear = CombinedModel.load(folder).for_pattern(available, held_out)
    except ValueError as e:  # e.g. items without contexts, where no component of the model applies
        why = "; ".join(f"{job}: {reason}" for job, reason in found.left_out.items())
        raise ValueError(f"combined: {e}" + (f" (components left out: {why})" if why else "")) from None
    n = len(next(iter(found.flags.values())))
    values = linear.predict({f: table.get(f, [float("nan")] * n) for f in linear.features})
    flags = found.item_flags(n)  # every component flags empty and repetitive responses itself
    signature = make_signature(
        "combined", model=weights_id(name, folder), features="+".join(linear.features),
        trained_on=len(linear.sets), held_out=held_out, missing="+".join(missing) or None,
        components=weights_named(found.signatures), precision=precisions_named(found.signatures))
    return ItemScores(apply_policy({"combined": values}, flags, SCALES), signature, flags)
