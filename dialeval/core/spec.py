"""What a metric declares about itself, once: :class:`MetricSpec`.

Every metric sub-package ``dialeval/<name>/`` has a ``spec.py`` whose ``SPEC`` is a
:class:`MetricSpec`: how it scores generic items (its runner), the bundled model folders it loads,
the human-judgment sets it owns and how its sub-scores map to the papers' published rows, its paper
benchmarks, its jobs in the meta-evaluation grid, the samples its bundled folders reproduce, its
examples and the scale of every sub-score. The layers above the metrics (runners, human-judgment
sets, benchmark grid, hub/publish, CLI, demo) read these declarations through
:mod:`dialeval.registry` and name no metric themselves.

A spec module stays light: it imports no model code; whatever loads models is referenced through
functions that import it when called.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from dialeval.core.results import ItemScores

if TYPE_CHECKING:  # annotations only: no import at run time
    import argparse
    from pathlib import Path

    from dialeval.core.scales import Scale
    from dialeval.data import JudgmentItem

# The fixed sample every bundled model scores (library level) for its reference file
# (dialeval.publish); the metrics' evaluate samples are built from it too.
SAMPLE_PAIRS: tuple[tuple[str, str], ...] = (
    ("Do you like reading books?", "Yes, mostly novels. I read one every week."),
    ("What time does the train leave?", "It leaves at half past seven, so we should hurry."),
    ("I failed my driving test again.", "Oh no, I am sorry. You will pass next time, I am sure."),
    ("Can I help you?", "banana the of purple quickly"),
)

# (paper key, table id, row, column) of paper_tables.json (dialeval.data.paper.value)
PaperCell = tuple[str, str, str, str]

# The fields of a generic item (dialeval.data) a runner may read ("group": holistic diversity's
# groups); MetricSpec.reads_fields names those of one metric, which alone key its cached scores.
ITEM_FIELDS: tuple[str, ...] = ("context", "response", "references", "group")

# The behavioural suite's replies (dialeval.metaeval.behaviour builds them from a context and its real reply).
# Kinds a metric may have to catch: the real reply should score strictly higher than each.
BEHAVIOUR_KINDS: tuple[str, ...] = (
    "echo_last",    # the context's last turn, repeated back
    "echo_own",     # the responder's own previous turn (the context's turn before the last)
    "salad",        # the context's words shuffled, as many as the reply has
    "generic",      # a fixed generic reply ("I don't know.", "Okay.", ...)
    "other_reply",  # the real reply of another dialogue
    "empty",        # ""
    "repeated",     # the real reply said four times
    "gibberish",    # random letter strings, as many as the reply has words
    "punctuation",  # a lone punctuation mark ("?", "!", "...", ".")
)
# Controls: changes that should barely move the score.
BEHAVIOUR_CONTROLS: tuple[str, ...] = (
    "lowercase",     # the reply lower-cased, punctuation removed
    "paraphrase",    # a close WordNet-substitution paraphrase (MetricSpec.paraphrase)
    "continuation",  # the reply followed by the dialogue's next turn (a second fluent sentence)
)
# What metrics of one purpose declare (Sai et al. 2020's irrelevant responses for context relevance;
# generic replies also for overall quality; Khalid & Lee 2022's ungrammatical ones for fluency).
RELEVANCE_KINDS = ("echo_last", "echo_own", "salad", "other_reply")
OVERALL_KINDS = RELEVANCE_KINDS + ("generic",)
FLUENCY_KINDS = ("salad", "gibberish", "punctuation")
MEANING_CONTROLS = ("lowercase", "paraphrase")
FLUENCY_CONTROLS = ("paraphrase", "continuation")


@dataclass(frozen=True)
class Job:
    """One row group of the meta-evaluation grid: the metric's runner with fixed options and the
    sub-scores it is known by. ``options_for(set_name, items)`` adapts the options to one set
    (e.g. FED's level); without it the options are used as they are."""

    name: str
    metric: str
    options: Mapping[str, Any] = field(default_factory=dict)
    headline: tuple[str, ...] = ()
    options_for: Callable[[Mapping[str, Any], str, Sequence[dict]], dict[str, Any]] | None = None

    def options_on(self, set_name: str, items: Sequence[dict]) -> dict[str, Any]:
        """The job's options on the set ``set_name`` of ``items``."""
        if self.options_for is None:
            return dict(self.options)
        return self.options_for(self.options, set_name, items)


def dialog_level_on(*dialog_sets: str) -> Callable[[Mapping[str, Any], str, Sequence[dict]], dict[str, Any]]:
    """A :attr:`Job.options_for` for a metric with a turn and a dialog level: ``level="dialog"`` on
    the sets named (whole rated conversations), ``level="turn"`` on every other set."""

    def options_for(options: Mapping[str, Any], set_name: str, items: Sequence[dict]) -> dict[str, Any]:
        return {**options, "level": "dialog" if set_name in dialog_sets else "turn"}

    return options_for


def fallback_note(paper_model: str, stand_in: str) -> Callable[[Sequence[str]], str | None]:
    """A :attr:`MetricSpec.example_note` saying when a metric did not run on its paper's model
    ``paper_model`` (offline: the bundled ``stand_in``), read from the signatures' ``model:`` field."""

    def note(signatures: Sequence[str]) -> str | None:
        if any(f"model:{paper_model}" not in s for s in signatures):
            return (f"the paper's {paper_model} cannot be had here (offline or not cached); scored with the "
                    f"model named in the signature above (the bundled {stand_in} by default)")
        return None

    return note


@dataclass(frozen=True)
class Benchmark:
    """A paper-layout benchmark: ``module.compute(*args, **options)`` gives its result and
    ``module.render(result)`` its table; the module is imported when the benchmark runs. ``runs``:
    the human-correlation runs of it that benchmarks/correlations.py makes, results file name (under
    benchmarks/results/, without .txt/.json) -> the runner options of that run."""

    module: str
    compute: str
    render: str
    args: tuple[Any, ...] = ()
    runs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def run(self, **options: Any) -> tuple[dict, str]:
        """The result (for ``--json``) and its printed table."""
        module = importlib.import_module(self.module)
        result = getattr(module, self.compute)(*self.args, **options)
        return result, getattr(module, self.render)(result)


@dataclass(frozen=True)
class CardContent:
    """What a metric's own card function (:attr:`CardSpec.content`) reads from a folder's reports:
    the card's text below the metadata, its ``model-index`` numbers and the Hub base model."""

    body: str
    measured: Sequence[Any] = ()  # dialeval.models.hub.Measured
    base_model: str | None = None


@dataclass(frozen=True)
class CardSpec:
    """What a bundled model's card says beyond its training report. One writer,
    :func:`dialeval.publish.write_model_card`, writes every card from one of these: the adapter card
    (title, summary, usage, benchmarks, the full fine-tune it replaces) unless ``content`` gives the
    metric's own text."""

    title: str = ""
    summary: str = ""
    used_by: str = ""
    datasets: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    pipeline_tag: str | None = None
    usage: str = ""  # the card's Python example
    # (dataset, score key, adapter results file, full fine-tune results file) from benchmarks/results;
    # "variant/key" (e.g. "conditional/overall") reads that variant of a file that holds several
    benchmarks: tuple[tuple[str, str, str, str], ...] = ()
    # the full fine-tune it replaces, as reported in training/README.md and in the benchmark files of
    # commit dialeval.publish.FULL_COMMIT (later runs of the same plain names score the bundled adapters)
    full: Mapping[str, Any] = field(default_factory=dict)
    # the Hub metadata's library (None: peft for an adapter, transformers for a full fine-tune) and licence
    library_name: str | None = None
    license: str = "apache-2.0"
    # a model that is no adapter (GRADE's heads, SSREM's bilinear map, the combined regression): the
    # function ("module:function", imported when the card is written, as Benchmark's) that reads its
    # card text and measured numbers from the folder's reports
    content: str | None = None

    def content_of(self, folder: Path) -> CardContent:
        """The card :attr:`content` gives for ``folder``."""
        module, _, function = (self.content or "").partition(":")
        return getattr(importlib.import_module(module), function)(folder)


@dataclass(frozen=True)
class EvaluateSample:
    """A fixed call of the metric's evaluate module that a bundled folder reproduces
    (``dialeval publish --dry-run``, tests/test_hub.py): ``evaluate.load("dialeval/<module>",
    config).compute(**inputs, <model_keyword>=<folder>)[output]``."""

    module: str
    config: str | None
    inputs: Mapping[str, Any]
    model_keyword: str
    output: str


@dataclass(frozen=True)
class Command:
    """An extra ``dialeval`` sub-command a metric brings (e.g. holistic's ``augment``)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class DemoChoice:
    """One metric choice of the Gradio demo (spaces/dialeval-demo): its label, the runner's options,
    what each sub-score refers to (the first matching ``(score-name prefix, text)``; ``""`` matches
    all) and the item fields (``"context"``, ``"references"``) it cannot do without."""

    label: str
    options: Mapping[str, Any] = field(default_factory=dict)
    refers_to: tuple[tuple[str, str], ...] = (("", "response"),)
    needs: tuple[str, ...] = ()

    def subject(self, score: str) -> str:
        """What ``score`` rates: the text of the first ``refers_to`` prefix it starts with."""
        return next(text for prefix, text in self.refers_to if score.startswith(prefix))


@dataclass(frozen=True)
class Behaviour:
    """What the behavioural suite (:mod:`dialeval.metaeval.behaviour`; CheckList, Ribeiro et al. 2020) checks
    of a metric: per judged sub-score, the kinds of reply (:data:`BEHAVIOUR_KINDS`) that the real
    reply must beat in at least 90 % of contexts, and the controls (:data:`BEHAVIOUR_CONTROLS`) that
    must barely move the score. ``options`` are the runner's options; ``references``: the items carry
    the real reply as their one reference (for a runner that needs references; the judged
    sub-scores must then not read them). A metric with nothing in ``must_catch`` is not run, and
    ``note`` says why; otherwise ``note`` says why these sub-scores are judged.

    The suite's real replies are also the human reference of the judged sub-scores' percentiles
    (:mod:`dialeval.scoring.human_reference`): ``neutral_options`` are runner options that do not
    change them (FED's ``level``, which adds the other level's scores), so a reference is read
    whatever they are; ``reads_references``: the judged sub-scores change when the items carry
    references, so a reference scored with (``references``) or without them is read only for items
    like its own."""

    must_catch: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    controls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    references: bool = False
    note: str = ""
    neutral_options: tuple[str, ...] = ()
    reads_references: bool = False

    def __post_init__(self) -> None:
        for score, kinds in self.must_catch.items():
            unknown = sorted(set(kinds) - set(BEHAVIOUR_KINDS))
            if unknown:
                raise ValueError(f"must_catch[{score!r}]: unknown kind(s) {unknown}; kinds: {BEHAVIOUR_KINDS}")
        for score, controls in self.controls.items():
            unknown = sorted(set(controls) - set(BEHAVIOUR_CONTROLS))
            if unknown:
                raise ValueError(f"controls[{score!r}]: unknown control(s) {unknown}; controls: {BEHAVIOUR_CONTROLS}")
            if score not in self.must_catch:
                raise ValueError(f"controls[{score!r}]: not a judged sub-score (must_catch: {sorted(self.must_catch)})")

    @property
    def scores(self) -> tuple[str, ...]:
        """The judged sub-scores, in declaration order."""
        return tuple(self.must_catch)

    @property
    def declared(self) -> tuple[str, ...]:
        """Every kind and control some judged sub-score declares, in the suite's order (the replies a
        check of the declarations needs to build)."""
        named = {n for names in (*self.must_catch.values(), *self.controls.values()) for n in names}
        return tuple(n for n in BEHAVIOUR_KINDS + BEHAVIOUR_CONTROLS if n in named)


@dataclass(frozen=True)
class MetricSpec:
    """A metric's one declaration (module docstring). Only ``name``, ``summary``, ``runner`` and
    ``scales`` are required; the rest defaults to "none"."""

    name: str
    summary: str
    runner: Callable[..., ItemScores]
    scales: Callable[[], Mapping[str, Scale]]
    # bundled hub/ folders it loads (the first by default; another one as an option, or for a metric
    # that reads this one), and how each model it may load is (re)built
    bundled: tuple[str, ...] = ()
    # other metrics whose scores it reads (a combination of them): their folders key its cached scores too
    reads: tuple[str, ...] = ()
    # reads_runs(items, options) -> (metric, options) of each run of those metrics that its runner reads
    # from the score cache for these items: `dialeval examples` scores them while their metric's models
    # are loaded (then releases them, dialeval.core.held), so the reader loads no model of its own
    reads_runs: Callable[[Sequence[dict], Mapping[str, Any]], Sequence[tuple[str, dict[str, Any]]]] | None = None
    # runner option -> the model the runner loads when that option is not given, resolved now (for a
    # default that depends on what can be had, e.g. the published model or a bundled stand-in): keys
    # its cached scores, so a default that resolves differently never reuses the other's scores
    default_models: Callable[[], Mapping[str, str]] | None = None
    # runner option -> its default when it is a setting, not a model (holistic's pmi_weight): keys the
    # metric's own cached scores and human references, so an earlier default's scores are never reused;
    # a metric that reads this one fixes the options it runs it with itself (the combined metric)
    default_settings: Mapping[str, str] = field(default_factory=dict)
    build_hints: Mapping[str, str] = field(default_factory=dict)
    # a published model id -> the bundled stand-in used when the published one cannot be had
    hub_alternatives: Mapping[str, str] = field(default_factory=dict)
    # human-judgment sets it owns (name -> loader of generic items) and their published Spearman
    judgment_sets: Mapping[str, Callable[[], list[JudgmentItem]]] = field(default_factory=dict)
    published: Callable[[str, str, str], PaperCell | None] | None = None
    # its own method's published Spearman on sets it does not own, from a paper outside paper_tables.json:
    # (set, sub-score) -> (value, source); the grid prints it beside the cell (USL-H: Yeh et al. 2021)
    reported: Mapping[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    benchmarks: Mapping[str, Benchmark] = field(default_factory=dict)
    aspects: tuple[str, ...] = ()  # `dialeval benchmark --aspect A` = `--dataset <name>-A`
    grid_jobs: tuple[Job, ...] = ()
    # `dialeval examples`: runner options per job, the sub-scores shown, a note on the signatures
    example_jobs: tuple[Mapping[str, Any], ...] = ({},)
    headline: tuple[str, ...] = ()
    example_note: Callable[[Sequence[str]], str | None] | None = None
    cards: Mapping[str, CardSpec] = field(default_factory=dict)
    samples: Mapping[str, tuple[EvaluateSample, ...]] = field(default_factory=dict)
    commands: tuple[Command, ...] = ()
    demo: tuple[DemoChoice, ...] = ()
    trainer_default: bool = False  # scored by dialeval.integrations.compute_metrics by default
    # the reduced precisions `precision="auto"` may choose (dialeval.core.precision): those that passed the
    # fidelity rule against float32; the runner's AUTO_PRECISIONS. They key the score cache's "auto" entries
    auto_precisions: tuple[str, ...] = ()
    # what the behavioural suite checks (dialeval.metaeval.behaviour): the replies the metric must catch
    behaviour: Behaviour = field(default_factory=Behaviour)
    # a paraphraser the metric brings, paraphrase(text, seed) -> a close paraphrase or None (holistic's
    # WordNet substitution); the behavioural suite's paraphrase control uses it
    paraphrase: Callable[[str, int], str | None] | None = None
    # the item fields (ITEM_FIELDS) its runner reads, or a function of the runner's options giving them
    # (SSREM's reference_free, holistic's aspects): they alone key its cached scores, so items that differ
    # only in a field it does not read (the same replies with and without references, for a metric that
    # reads none) share its entries; None: every field
    reads_fields: tuple[str, ...] | Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None

    def fields_read(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        """The item fields the runner reads with ``options`` (:attr:`reads_fields`; all of
        :data:`ITEM_FIELDS` when undeclared), in :data:`ITEM_FIELDS` order; ``ValueError`` for a name
        that is no item field."""
        declared = self.reads_fields(options) if callable(self.reads_fields) else self.reads_fields
        declared = ITEM_FIELDS if declared is None else declared
        unknown = sorted(set(declared) - set(ITEM_FIELDS))
        if unknown:
            raise ValueError(f"{self.name}: reads_fields names {unknown}, which are no item fields {list(ITEM_FIELDS)}")
        return tuple(f for f in ITEM_FIELDS if f in declared)
