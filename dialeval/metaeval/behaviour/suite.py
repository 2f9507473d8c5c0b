"""Running the behavioural suite on one metric: every reply of :mod:`dialeval.metaeval.behaviour.kinds`
scored in its context, through the registry's runner and the score cache, then checked
(:mod:`dialeval.metaeval.behaviour.checks`) against what the metric declares it must catch
(:attr:`dialeval.core.spec.MetricSpec.behaviour`).

Each reply set (the real replies, each kind, each control) is scored in fixed chunks of
:data:`CHUNK` cases, each chunk a score-cache entry (:mod:`dialeval.scoring.cache`, keyed by metric,
options, models, weights and the chunk's items): an interrupted run goes on where it stopped, and a
second run costs only the arithmetic. A score at its scale's declared floor (the degenerate-response
policy's arbitrary worst value for a flagged reply on an unbounded scale,
:mod:`dialeval.core.degenerate`) is checked as NaN, the worst value: it wins and ties as the floor
would, and stays out of the real replies' mean, the mean changes and the controls' spread, which a
constant far below every real score would dominate.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Collection, Mapping, Sequence

from dialeval import registry
from dialeval.metaeval.behaviour.checks import FAIL, PASS, UNDECIDED, ControlCheck, KindCheck, check_control, check_kind
from dialeval.metaeval.behaviour.kinds import build
from dialeval.metaeval.behaviour.cases import Case
from dialeval.core.spec import BEHAVIOUR_CONTROLS, BEHAVIOUR_KINDS
from dialeval.scoring.runners import get_runner
from dialeval.scoring.cache import cached_scores
from dialeval.scoring.chunks import check_options

CHUNK = 25
REAL = "real"


@dataclass(frozen=True)
class ScoreResult:
    """One judged sub-score: its direction, the real replies' mean, every kind's and control's check."""

    score: str
    higher_is_better: bool
    real_mean: float | None
    kinds: tuple[KindCheck, ...]
    controls: tuple[ControlCheck, ...]

    def failures(self) -> list[str]:
        """``score:kind`` of every declared check that failed (or could not be made)."""
        found = [c.kind for c in self.kinds if c.verdict == FAIL]
        found += [c.control for c in self.controls if c.declared and not c.passed]
        return [f"{self.score}:{name}" for name in found]

    def undecided(self) -> list[str]:
        """``score:kind`` of every declared kind whose share reaches the bar on too few contexts
        (:data:`~dialeval.metaeval.behaviour.checks.UNDECIDED`)."""
        return [f"{self.score}:{c.kind}" for c in self.kinds if c.verdict == UNDECIDED]

    @property
    def verdict(self) -> str:
        """``"FAIL"`` when a declared check failed, else ``"not enough contexts"`` when a declared
        kind is undecided, else ``"pass"``."""
        return FAIL if self.failures() else (UNDECIDED if self.undecided() else PASS)


@dataclass(frozen=True)
class MetricResult:
    """The suite's result for one metric (:func:`run`)."""

    metric: str
    options: Mapping[str, Any]
    signature: str
    source: str
    n_cases: int
    seed: int
    note: str
    scores: tuple[ScoreResult, ...]
    real_scores: Mapping[str, list[float | None]] = field(default_factory=dict)  # per case, the reference distribution
    seconds: float = 0.0

    @property
    def failures(self) -> list[str]:
        return [f for s in self.scores for f in s.failures()]

    @property
    def undecided(self) -> list[str]:
        """``score:kind`` of every declared kind with too few contexts to pass (:meth:`ScoreResult.undecided`)."""
        return [u for s in self.scores for u in s.undecided()]

    @property
    def passed(self) -> bool:
        """Every declared kind and control passed (none failed, none undecided)."""
        return not self.failures and not self.undecided

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (no NaN: missing values are ``None``); each kind with its ``passed`` and
        ``verdict``, which :meth:`from_dict` derives again from its share and interval."""
        found = asdict(self)
        for stored, score in zip(found["scores"], self.scores):
            for kind, check in zip(stored["kinds"], score.kinds):
                kind.update(passed=check.passed, verdict=check.verdict)
        return {**found, "passed": self.passed, "failures": self.failures, "undecided": self.undecided}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> "MetricResult":
        """The result :meth:`to_dict` wrote (a report's JSON), to rewrite the report with other metrics
        rescored; the verdicts are derived again (a file written under an older verdict reads under the current one)."""
        fields = {k: v for k, v in stored.items() if k not in ("passed", "failures", "undecided")}
        derived = ("passed", "verdict")
        scores = tuple(ScoreResult(**{**s, "kinds": tuple(KindCheck(**{f: v for f, v in k.items() if f not in derived})
                                                          for k in s["kinds"]),
                                      "controls": tuple(ControlCheck(**c) for c in s["controls"])})
                       for s in fields.pop("scores"))
        return cls(**fields, scores=scores)


def runnable(metric: str) -> bool:
    """Whether ``metric`` declares something to catch (the suite runs it)."""
    return bool(registry.spec(metric).behaviour.must_catch)


def runnable_metrics() -> list[str]:
    """The registry's metrics the suite runs, in registry order."""
    return [name for name in registry.METRICS if runnable(name)]


def _number(value: float) -> float | None:
    return None if value != value else float(value)  # NaN -> None


def score_replies(metric: str, cases: Sequence[Case], replies: Mapping[str, Sequence[str | None]],
                  options: Mapping[str, Any], references: bool = False, refresh: bool = False,
                  progress: bool = True) -> tuple[dict[str, dict[str, list[float | None]]], list[str]]:
    """``(name -> sub-score -> per-case score (None where the reply was not built), signatures)`` for
    every reply set, scored in its case's context in chunks of :data:`CHUNK`, each through the cache,
    with progress over the replies (:mod:`dialeval.core.progress`)."""
    from dialeval.core.progress import Progress

    runner, options = get_runner(metric), dict(options)
    todo = {name: [i for i, text in enumerate(texts) if text is not None] for name, texts in replies.items()}
    scored: dict[str, dict[str, list[float | None]]] = {}
    signatures: list[str] = []
    with Progress(sum(map(len, todo.values())), f"{metric} behaviour", unit="reply", enabled=progress) as bar:
        for name, built in todo.items():
            per_score: dict[str, list[float | None]] = {}
            for start in range(0, len(built), CHUNK):
                rows = built[start:start + CHUNK]
                items = [{"context": list(cases[i].context), "response": replies[name][i],
                          "references": [cases[i].reply] if references else []} for i in rows]
                entry = cached_scores(metric, options, items, lambda: runner(items, **options), refresh)
                for score, values in entry["per_item"].items():
                    column = per_score.setdefault(score, [None] * len(cases))
                    for i, value in zip(rows, values):
                        column[i] = float("nan") if value is None else value
                if entry["signature"] not in signatures:
                    signatures.append(entry["signature"])
                bar.update(len(rows))
            scored[name] = per_score
    return scored, signatures


def judged_scores(metric: str, produced: Collection[str]) -> list[str]:
    """The sub-scores the suite judges for ``metric`` among those ``produced`` (options such as
    holistic's ``aspects`` may leave one out); ``ValueError`` when none is left."""
    declared = registry.spec(metric).behaviour.scores
    judged = [score for score in declared if score in produced]
    if not judged:
        raise ValueError(f"{metric}: none of the scores the suite judges ({', '.join(declared)}) was scored; "
                         f"scored: {sorted(produced)} (check the options)")
    return judged


def floors_as_nan(values: Sequence[float | None], floor: float | None) -> list[float | None]:
    """``values`` with a score at the scale's ``floor`` as NaN, the checks' worst value (module
    docstring); ``None`` (a reply not built) stays ``None``."""
    return [v if v is None or v != floor else float("nan") for v in values]


def check_scores(metric: str, scored: Mapping[str, Mapping[str, Sequence[float | None]]], seed: int = 0) -> list[ScoreResult]:
    """Every judged sub-score of ``metric`` that was scored (:func:`judged_scores`) checked: all kinds
    and controls that were scored, those the metric declares marked (and judged)."""
    behaviour = registry.spec(metric).behaviour
    results = []
    for score in judged_scores(metric, scored[REAL]):
        scale = registry.describe(metric, score)
        higher = scale.higher_is_better is not False
        real = [float("nan") if v is None else v for v in floors_as_nan(scored[REAL][score], scale.floor)]
        unbuilt = [None] * len(real)  # a reply set with no reply built was not scored
        kind_checks = tuple(
            check_kind(kind, real, floors_as_nan(scored[kind].get(score, unbuilt), scale.floor), higher,
                       kind in behaviour.must_catch[score])
            for kind in BEHAVIOUR_KINDS if kind in scored)
        control_checks = tuple(
            check_control(control, real, floors_as_nan(scored[control].get(score, unbuilt), scale.floor),
                          control in behaviour.controls.get(score, ()), seed)
            for control in BEHAVIOUR_CONTROLS if control in scored)
        finite = [v for v in real if v == v]
        results.append(ScoreResult(score, higher, sum(finite) / len(finite) if finite else None,
                                   kind_checks, control_checks))
    return results


def run(metric: str, cases: Sequence[Case], source: str, seed: int = 0, options: Mapping[str, Any] | None = None,
        refresh: bool = False, progress: bool = True) -> MetricResult:
    """The behavioural suite of ``metric`` on ``cases`` (``source`` names where they come from):
    every kind and control built (:func:`dialeval.metaeval.behaviour.kinds.build`), scored and checked.
    ``options`` are added to the metric's declared suite options. ``ValueError`` for a metric that
    declares nothing to catch (its ``note`` says why)."""
    behaviour = registry.spec(metric).behaviour
    if not behaviour.must_catch:
        raise ValueError(f"the behavioural suite does not run {metric}: {behaviour.note} "
                         f"(it runs {', '.join(runnable_metrics())})")
    merged = {**behaviour.options, **(options or {})}
    check_options(metric, merged)
    began = time.perf_counter()
    replies = {REAL: [case.reply for case in cases], **build(cases, seed)}
    scored, signatures = score_replies(metric, cases, replies, merged, behaviour.references, refresh, progress)
    return MetricResult(metric, merged, " / ".join(signatures), source, len(cases), seed, behaviour.note,
                        tuple(check_scores(metric, scored, seed)),
                        {score: [None if v is None else _number(v) for v in scored[REAL][score]]
                         for score in judged_scores(metric, scored[REAL])},
                        round(time.perf_counter() - began, 1))
