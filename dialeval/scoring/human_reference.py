"""Scores a person can read: a score's percentile among human replies, from a stored reference.

A FED ``turn_overall`` of 9.35 or a GRADE score of 0.61 says little by itself. The behavioural
suite's real replies (people answering DailyDialog test contexts, :mod:`dialeval.metaeval.behaviour`)
give each metric a reference distribution, which is stored beside the bundled weights the metric
loads by default: ``hub/<folder>/dialeval_percentiles.json`` (:data:`FILE`, the metric's first bundled
folder; one entry per metric and options, so metrics that share a folder share its file).
:func:`percentile` places a score among the stored scores as the mid-rank percentile

    100 * (worse + equal / 2) / n

where ``worse`` counts the human replies that score worse (lower, or higher on a lower-is-better
scale) and ``equal`` those that score the same: a score equal to every human reply's is at 50, a
score better than all of them at 100. A NaN (a score that does not apply to the item) has none. A
flagged reply (:mod:`dialeval.core.degenerate`) is at exactly 0, whatever its worst value would tie
with (the human replies that are themselves flagged): :meth:`HumanReference.percentiles` with the
items' ``flags``.

An entry is keyed like the score cache (:mod:`dialeval.scoring.cache`): the metric, its options (the
runner's defaults, the suite's declared options and the given ones over them, less those that do not
change the judged scores and those left at ``None``, :func:`reference_options`), the content
hashes of the bundled folders that key its cached scores, the models its defaults resolve to now, and
the score cache's format (:data:`dialeval.scoring.cache.CACHE_FORMAT`, which changes with the scoring
policy of flagged replies); the cases (source, ``n``, ``seed``, the items' hash) are stored beside
the key. :func:`load_reference` refuses (:class:`StaleReference`, a ``ValueError`` naming what
differs and the command that rebuilds it) an entry whose key differs from what the metric loads now:
a stale reference is never used. The dialeval version is not in the key: the reference is rebuilt
when what decides the scores changes, not at every release.

Rebuild every stored reference with one command (``dialeval behaviour --reference --all``), or one
metric's with ``dialeval behaviour --reference --metric M`` (:mod:`dialeval.metaeval.behaviour.reference`
writes the files through :func:`store_reference`).
"""

from __future__ import annotations

import bisect
import inspect
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from dialeval import registry
from dialeval.models.hub import NAMESPACE, PERCENTILES_FILE, hub_root
from dialeval.scoring.cache import CACHE_FORMAT, weights_fingerprint

FILE = PERCENTILES_FILE
FORMAT = 1
# runner options that decide where and how fast a score is computed, not its value
NEUTRAL_OPTIONS = ("batch_size", "device", "progress")
SUFFIX = "_percentiles"
REBUILD = "dialeval behaviour --reference --metric {metric}"


class StaleReference(ValueError):
    """No stored human reference matches what the metric scores with now (message: what differs, the command)."""


@dataclass(frozen=True)
class HumanReference:
    """A stored reference: per judged sub-score, the sorted finite scores of the human replies."""

    metric: str
    key: Mapping[str, Any]
    scores: Mapping[str, tuple[float, ...]]
    cases: Mapping[str, Any]
    signature: str
    note: str = ""

    @property
    def label(self) -> str:
        """What a percentile is among, e.g. ``"human replies on DailyDialog test (n=200, seed 0)"``."""
        return f"human replies on {self.cases['source']} (n={self.cases['n']}, seed {self.cases['seed']})"

    def percentiles(self, score: str, values: Sequence[float | None],
                    flags: Sequence[Sequence[str]] | None = None) -> list[float | None]:
        """Each of ``values`` (scores of sub-score ``score``) as a percentile among the human replies;
        an item with ``flags`` (a flagged reply) at exactly 0."""
        higher = registry.describe(self.metric, score).higher_is_better is not False
        flagged = [bool(f) for f in flags] if flags is not None else [False] * len(values)
        if len(flagged) != len(values):
            raise ValueError(f"{len(flags or ())} flags for {len(values)} {score} scores")
        return [0.0 if f else percentile(v, self.scores[score], higher) for v, f in zip(values, flagged)]

    def read(self, per_item: Mapping[str, Sequence[float | None]],
             flags: Sequence[Sequence[str]] | None = None) -> dict[str, list[float | None]]:
        """Sub-score -> per-item percentiles (flagged items at 0), for every sub-score of ``per_item``
        the reference holds; ``ValueError`` when it holds none of them."""
        found = {score: self.percentiles(score, per_item[score], flags) for score in self.scores if score in per_item}
        if not found:
            raise ValueError(f"none of {self.metric}'s scores {sorted(per_item)} has a human reference "
                             f"(it holds {sorted(self.scores)})")
        return found


def percentile(value: float | None, reference: Sequence[float], higher_is_better: bool = True) -> float | None:
    """The mid-rank percentile of ``value`` in the sorted ``reference`` (module docstring), oriented
    so that 100 is best; ``None`` for ``None`` or NaN."""
    if not reference:
        raise ValueError("an empty reference distribution")
    if value is None or math.isnan(value):
        return None
    below, above = bisect.bisect_left(reference, value), len(reference) - bisect.bisect_right(reference, value)
    equal = len(reference) - below - above
    return 100.0 * ((below if higher_is_better else above) + equal / 2) / len(reference)


def ordinal(value: float) -> str:
    """``62.4`` -> ``"62nd"``: a percentile rounded to a whole number, as a person reads it."""
    whole = math.floor(value + 0.5)  # half up (36.5 -> 37th), not to even
    suffix = "th" if 10 <= whole % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(whole % 10, "th")
    return f"{whole}{suffix}"


def runner_defaults(metric: str) -> dict[str, Any]:
    """The default of every keyword option of ``metric``'s runner (an option given as its default is
    the option left out)."""
    parameters = list(inspect.signature(registry.spec(metric).runner).parameters.values())[1:]
    return {p.name: p.default for p in parameters if p.default is not p.empty}


def reference_options(metric: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options a reference of ``metric`` is keyed by: its runner's defaults, the suite's declared
    options (:attr:`dialeval.core.spec.Behaviour.options`) over them and ``options`` over those, less
    :data:`NEUTRAL_OPTIONS` and those the metric declares do not change its judged sub-scores
    (:attr:`dialeval.core.spec.Behaviour.neutral_options`)."""
    behaviour = registry.spec(metric).behaviour
    merged = {**runner_defaults(metric), **behaviour.options, **(options or {})}
    neutral = NEUTRAL_OPTIONS + behaviour.neutral_options
    return _without_none({k: merged[k] for k in sorted(merged) if k not in neutral})


def _without_none(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` less those left at ``None`` (the metric's own default: a runner option added later
    with a ``None`` default leaves the stored references, and those stored with it, as they were)."""
    return {k: v for k, v in options.items() if v is not None}


def reference_key(metric: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What must match for a stored reference of ``metric`` to be used (module docstring)."""
    return {"metric": metric, "options": reference_options(metric, options), "weights": weights_fingerprint(metric),
            "defaults": registry.resolved_defaults(metric), "cache_format": CACHE_FORMAT}


def reference_path(metric: str) -> Path:
    """Where ``metric``'s references are stored: :data:`FILE` in its first bundled folder."""
    spec = registry.spec(metric)
    if not spec.behaviour.scores:
        raise ValueError(f"{metric} has no human reference: {spec.behaviour.note}")
    if not spec.bundled:
        raise ValueError(f"{metric} bundles no model folder to store a human reference in")
    return hub_root() / spec.bundled[0] / FILE


def place(path: Path) -> str:
    """How a message names a stored reference file: its bundled folder's hub id and the file's name
    (``dialeval/grade-dailydialog's dialeval_percentiles.json``), not a path into the checkout."""
    return f"{NAMESPACE}/{path.parent.name}'s {path.name}"


def _entries(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("format") != FORMAT:
        raise StaleReference(f"{place(path)}: format {stored.get('format')!r}, this dialeval reads format {FORMAT}")
    return stored["references"]


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def load_reference(metric: str, options: Mapping[str, Any] | None = None, references: bool = False) -> HumanReference:
    """The stored reference of ``metric`` with ``options`` (module docstring); :class:`StaleReference`
    when there is none, or when its key differs from what the metric scores with now. ``references``:
    whether the items to read carry references; a metric whose judged sub-scores read them
    (:attr:`dialeval.core.spec.Behaviour.reads_references`) is refused for items unlike the reference's."""
    behaviour = registry.spec(metric).behaviour
    if behaviour.reads_references and references != behaviour.references:
        raise ValueError(f"{metric}'s human reference was scored on items {'with' if behaviour.references else 'without'} "
                         f"references, and its scores change with them: percentiles are read only for items "
                         f"{'with' if behaviour.references else 'without'} references")
    path, key = reference_path(metric), _normal(reference_key(metric, options))
    default = _normal(reference_options(metric))
    rebuild = REBUILD.format(metric=metric) + "".join(f" --option {k}={json.dumps(v)}"
                                                       for k, v in key["options"].items() if default.get(k) != v)
    same_options = [e for e in _entries(path)
                    if e["key"]["metric"] == metric and _without_none(e["key"]["options"]) == key["options"]]
    if not same_options:
        raise StaleReference(f"no human reference of {metric} with options {key['options']} in {place(path)}; "
                             f"build it with `{rebuild}`")
    entry = same_options[0]
    differs = [field for field in ("weights", "defaults", "cache_format") if entry["key"].get(field) != key.get(field)]
    if differs:
        detail = "; ".join(f"{field}: stored {entry['key'].get(field)!r}, now {key[field]!r}" for field in differs)
        raise StaleReference(f"the human reference of {metric} in {place(path)} is stale ({detail}); "
                             f"rebuild it with `{rebuild}`")
    return HumanReference(metric, entry["key"], {s: tuple(v) for s, v in entry["scores"].items()}, entry["cases"],
                          entry["signature"], entry.get("note", ""))


def with_percentiles(metric: str, per_item: Mapping[str, Sequence[float | None]],
                     options: Mapping[str, Any] | None = None,
                     references: bool = False, flags: Sequence[Sequence[str]] | None = None
                     ) -> tuple[dict[str, list[float | None]], str]:
    """``(<score>_percentiles -> per item, the reference's signature)`` for every sub-score of
    ``per_item`` the stored reference holds (:func:`load_reference`, :meth:`HumanReference.read`;
    items with ``flags`` at 0)."""
    reference = load_reference(metric, options, references)
    found = {f"{score}{SUFFIX}": values for score, values in reference.read(per_item, flags).items()}
    return found, reference_signature(reference)


def reference_signature(reference: HumanReference) -> str:
    """The reference's own signature: what it is among and the key it was checked against (the
    scores' signature is the result's own)."""
    cases = reference.cases
    return (f"percentiles:{reference.metric}|among:{cases['source']} human replies|n:{cases['n']}|seed:{cases['seed']}"
            f"|weights:{reference.key['weights'][:12]}|cache_format:{reference.key['cache_format']}")


def store_reference(metric: str, options: Mapping[str, Any] | None, scores: Mapping[str, Sequence[float | None]],
                    cases: Mapping[str, Any], signature: str, note: str = "") -> Path:
    """Write (or replace) the entry of ``metric`` with ``options`` in its :data:`FILE`: the sorted
    finite ``scores`` of each sub-score, keyed by :func:`reference_key` as it is now."""
    path, key = reference_path(metric), _normal(reference_key(metric, options))
    entry = {"key": key, "cases": _normal(cases), "signature": signature, "note": note,
             "scores": {s: sorted(v for v in values if v is not None and not math.isnan(v))
                        for s, values in scores.items()}}
    kept = [e for e in _entries(path)  # an entry of the same options (Nones left out, as load_reference reads it) goes
            if (e["key"]["metric"], _without_none(e["key"]["options"])) != (metric, key["options"])]
    entries = sorted(kept + [entry], key=lambda e: (e["key"]["metric"], json.dumps(e["key"]["options"])))
    path.write_text(json.dumps({"format": FORMAT, "references": entries}, indent=1) + "\n", encoding="utf-8")
    return path
