"""The combined metric (issues 21, 57): the regression on hand-computed values, held-out models that
never see the held-out set's source, model choice by feature pattern, the designs, the
leave-one-source-out comparison, the degenerate policy and the signature."""

import math

import pytest

from dialeval.combined import runner as combined_runner
from dialeval.combined.designs import design_named
from dialeval.combined.features import feature_table, pattern
from dialeval.combined.model import CombinedModel, fit_linear, percentiles
from dialeval.combined.training import fit_bundle as fit_design
from dialeval.core.degenerate import response_flags

RIDGE_ALL = design_named("a")  # the ridge over every feature, whatever the default design


def fit_bundle(rows, ridge=1.0, sources=None):
    return fit_design(rows, ridge, RIDGE_ALL, sources)


def test_percentiles_are_mid_ranks_over_n_with_ties_averaged():
    assert percentiles([3, 1, 2]).tolist() == pytest.approx([5 / 6, 1 / 6, 1 / 2], rel=1e-12)
    assert percentiles([1, 1, 2, 3]).tolist() == pytest.approx([0.25, 0.25, 0.625, 0.875], rel=1e-12)


def test_one_feature_ridge_solution_by_hand():
    # x = 1, 2, 3 (weights 1/3): mean 2, std sqrt(2/3), z = -+sqrt(3/2); y = 1/6, 1/2, 5/6, b = 1/2;
    # w = sum v z (y - b) / (sum v z^2 + lambda) = (2 sqrt(1.5) / 9) / (1 + 1) = sqrt(1.5) / 9
    model = fit_linear({"a": ({"f": [1.0, 2.0, 3.0]}, [10.0, 20.0, 30.0])}, ["f"], ridge=1.0)
    assert model.intercept == pytest.approx(0.5, rel=1e-12)
    assert model.mean == pytest.approx([2.0], rel=1e-12)
    assert model.std == pytest.approx([math.sqrt(2 / 3)], rel=1e-12)
    assert model.weights == pytest.approx([math.sqrt(1.5) / 9], rel=1e-12)
    assert model.predict({"f": [1.0, 2.0, 3.0, float("nan")]}) == pytest.approx([1 / 3, 1 / 2, 2 / 3, 1 / 2], rel=1e-12)


def test_every_set_weighs_the_same_and_a_contrary_feature_gets_weight_zero():
    small = ({"good": [1.0, 2.0, 3.0], "bad": [3.0, 2.0, 1.0]}, [1.0, 2.0, 3.0])
    large = ({"good": [float(i) for i in range(30)], "bad": [float(-i) for i in range(30)]}, list(range(30)))
    model = fit_linear({"small": small, "large": large}, ["good", "bad"], ridge=0.5)
    assert model.weights[1] == 0.0 and model.weights[0] > 0
    assert model.items == 33
    # items of the 3-item set weigh 1/3, of the 30-item set 1/30: the pooled mean is the sets' average
    assert model.mean[0] == pytest.approx((2.0 + 14.5) / 2, rel=1e-12)


def _rows(shift: float = 0.0):
    """Four sets; r1 and r2 have a referenced feature too (``shift`` changes r1's human ranking)."""
    return {
        "a": ({"coherence": [1.0, 2.0, 3.0, 4.0], "grade": [0.1, 0.4, 0.2, 0.9]}, [1.0, 3.0, 2.0, 4.0]),
        "b": ({"coherence": [2.0, 1.0, 4.0, 3.0], "grade": [0.3, 0.2, 0.8, 0.5]}, [2.0, 1.0, 4.0, 3.0]),
        "r1": ({"coherence": [1.0, 3.0, 2.0, 4.0], "grade": [0.5, 0.6, 0.1, 0.9], "meteor": [0.1, 0.3, 0.2, 0.5]},
               [1.0 + shift, 4.0, 2.0 - shift, 3.0]),
        "r2": ({"coherence": [4.0, 3.0, 2.0, 1.0], "grade": [0.9, 0.7, 0.4, 0.2], "meteor": [0.4, 0.1, 0.3, 0.2]},
               [4.0, 2.0, 3.0, 1.0]),
    }


def test_a_ridge_toward_equal_weights_by_hand():
    # the one-feature problem above with the prior w0 = sigma / k (k = 1: weight 1 on the input itself):
    # w = (sum v z (y - b) + lambda w0) / (sum v z^2 + lambda) = (2 sqrt(1.5) / 9 + sqrt(2/3)) / 2
    model = fit_linear({"a": ({"grade": [1.0, 2.0, 3.0]}, [10.0, 20.0, 30.0])}, ["grade"], 1.0, prior=["grade"])
    assert model.weights == pytest.approx([(2 * math.sqrt(1.5) / 9 + math.sqrt(2 / 3)) / 2], rel=1e-9)
    # a huge lambda keeps the prior: the prediction is the input's own deviation from its mean
    model = fit_linear({"a": ({"grade": [1.0, 2.0, 3.0]}, [30.0, 20.0, 10.0])}, ["grade"], 1e9, prior=["grade"])
    assert model.predict({"grade": [1.0, 3.0]}) == pytest.approx([0.0, 1.0], rel=1e-6)


def test_equal_weights_are_the_mean_of_the_inputs_and_a_missing_one_counts_as_the_median():
    from dialeval.combined.model import equal_weights

    model = equal_weights(["a", "b"], "rank")
    # within-batch percentiles (rank - 0.5) / n: a -> 1/6, 5/6, 1/2; b -> 1/6, 1/2, 5/6 (NaN stays out)
    assert model.predict({"a": [1.0, 3.0, 2.0], "b": [0.1, 0.5, 0.7]}) == pytest.approx([1 / 6, 2 / 3, 2 / 3], rel=1e-12)
    # a -> 1/4, 3/4; b's NaN counts as 0.5 and its one finite value is at 1/2: (1/4 + 1/2) / 2, (3/4 + 1/2) / 2
    assert model.predict({"a": [1.0, 3.0], "b": [float("nan"), 0.2]}) == pytest.approx([0.375, 0.625], rel=1e-12)
    assert (model.sets, model.items) == ([], 0)


def test_human_inputs_are_the_stored_references_percentiles():
    from dialeval.combined.features import as_inputs
    from dialeval.scoring.human_reference import load_reference

    values = [0.05, 0.6, 0.95, float("nan")]
    stored = load_reference("grade").percentiles("grade", values)
    assert as_inputs({"grade": values}, "human")["grade"][:3] == pytest.approx([v / 100 for v in stored[:3]], rel=1e-12)
    assert math.isnan(as_inputs({"grade": values}, "human")["grade"][3])
    with pytest.raises(ValueError, match="inputs must be one of"):
        as_inputs({"grade": values}, "z")


def test_held_out_models_leave_the_whole_source_out():
    rows = _rows()
    bundle = fit_bundle(rows, sources={"a": "A", "b": "A", "r1": "R1", "r2": "R2"})
    assert bundle.held_out["a"].sets == bundle.held_out["b"].sets == ["r1", "r2"]  # each sibling held out with the other
    assert bundle.held_out["r1"].sets == ["r2"] and bundle.held_out["r1"].features == ["coherence", "grade", "meteor"]
    with pytest.raises(SystemExit, match="no set of another source"):
        fit_design({"x": rows["r1"], "y": rows["r2"]}, 1.0, RIDGE_ALL, {"x": "R", "y": "R"})
    # a design that reads no rating: the same model for every set, trained on none
    none = fit_design(rows, 1.0, design_named("c"), {"a": "A", "b": "A", "r1": "R", "r2": "R"})
    assert none.held_out["a"] == none.held_out["r1"] == none.models[0] and none.models[0].sets == []
    assert none.held_out["a"].features == ["coherence", "grade"]


def test_leave_one_source_out_against_grade_alone():
    from dialeval.combined.transfer import choose, evaluate
    from dialeval.stats.correlation import correlate

    rows = _rows()
    sources = {"a": "A", "b": "A", "r1": "R1", "r2": "R2"}
    flags = {"a": {"grade": [[], ["empty"], [], []]}}
    result = evaluate(rows, flags, sources, [RIDGE_ALL, design_named("b")], n_resamples=50)
    a, b = result["designs"]
    row = a["sets"][0]
    model = fit_bundle(rows, sources=sources).held_out["a"]
    expected = model.predict(rows["a"][0])
    expected[1] = 0.0  # the flagged item, as the metric scores it
    assert row["rho"] == pytest.approx(correlate(expected, rows["a"][1]).spearman, rel=1e-12)
    assert row["grade"] == pytest.approx(correlate(rows["a"][0]["grade"], rows["a"][1]).spearman, rel=1e-12)
    source = a["sources"][0]
    assert source["source"] == "A" and source["sets"] == ["a", "b"]
    assert source["rho"] == pytest.approx((a["sets"][0]["rho"] + a["sets"][1]["rho"]) / 2, rel=1e-12)
    assert source["wins"] == (source["rho"] > source["grade"]) and 0.0 <= source["p"] <= 1.0
    # design (b) reads grade and coherence here; both designs' counts, the choice by sources then weights
    assert a["sources_with_grade"] == 3 and b["free_weights"] == 3 and a["free_weights"] == 10
    tie = [{"design": "x", "sources_won": 1, "free_weights": 10}, {"design": "y", "sources_won": 1, "free_weights": 3},
           {"design": "z", "sources_won": 0, "free_weights": 0}]
    assert choose(tie) == "y"
    assert result["chosen"] == choose(result["designs"])


def test_a_design_that_ranks_as_grade_does_never_beats_it():
    from dialeval.combined.designs import Design
    from dialeval.combined.transfer import evaluate

    rows = {name: ({"grade": table["grade"]}, human) for name, (table, human) in _rows().items()}
    only_grade = Design("g", "GRADE's percentile", ("grade",), "human", "none")
    source = evaluate(rows, None, {"a": "A", "b": "A", "r1": "R1", "r2": "R2"}, [only_grade], n_resamples=20)
    for entry in source["designs"][0]["sources"]:
        assert entry["difference"] == 0.0 and not entry["wins"] and entry["p"] == 1.0


def test_leave_one_set_out_never_sees_the_held_out_set():
    bundle = fit_bundle(_rows(), ridge=1.0)
    assert bundle.held_out["a"].sets == ["b", "r1", "r2"]
    assert bundle.held_out["a"].features == ["coherence", "grade"]
    assert bundle.held_out["r1"].sets == ["r2"]
    assert bundle.held_out["r1"].features == ["coherence", "grade", "meteor"]
    assert [(m.features, m.sets) for m in bundle.models] == [
        (["coherence", "grade", "meteor"], ["r1", "r2"]), (["coherence", "grade"], ["a", "b", "r1", "r2"])]
    # r1's human ratings change: its own held-out model does not move, every model trained with it does
    moved = fit_bundle(_rows(shift=2.5), ridge=1.0)
    assert moved.held_out["r1"] == bundle.held_out["r1"]
    assert moved.held_out["a"].weights != bundle.held_out["a"].weights
    assert moved.models[0].weights != bundle.models[0].weights


def test_a_batch_gets_the_model_of_its_pattern(tmp_path):
    bundle = fit_bundle(_rows(), ridge=1.0)
    assert bundle.for_pattern(("coherence", "grade")).sets == ["a", "b", "r1", "r2"]
    assert bundle.for_pattern(("coherence", "grade", "meteor", "ssrem")).features == ["coherence", "grade", "meteor"]
    assert bundle.for_pattern(("coherence", "grade"), held_out="b").sets == ["a", "r1", "r2"]
    with pytest.raises(ValueError, match="no combined model for the features"):
        bundle.for_pattern(("meteor",))
    with pytest.raises(ValueError, match="needs features \\['meteor'\\]"):
        bundle.for_pattern(("coherence", "grade"), held_out="r1")
    bundle.save(tmp_path)
    assert CombinedModel.load(tmp_path) == bundle


def test_feature_table_takes_the_sub_score_present():
    table = feature_table({"ssrem": {"ssrem_f": [1.0], "ssrem": [2.0]}, "grade": {"grade": [0.5]},
                           "holistic": {"fluency": [0.3]}, "fed": {"turn_overall": [9.0]}})
    assert table == {"ssrem": [2.0], "fluency": [0.3], "grade": [0.5]}  # FED is no feature since issue 57
    assert pattern(table) == ("fluency", "grade", "ssrem")


@pytest.fixture
def stub_components(monkeypatch, tmp_path):
    """A bundled-like folder fitted on _rows and components that return fixed scores."""
    bundle = fit_bundle(_rows(), ridge=1.0)
    bundle.components = {"holistic": "stub-holistic", "grade": "stub-grade"}
    bundle.save(tmp_path)
    (tmp_path / "README.md").write_text("stub")
    calls = []

    def component_scores(items, set_name=None, refresh=False, precision=None, jobs=None):
        calls.append(set_name)
        n = len(items)
        scores = {"holistic": {"coherence": [1.0 + i for i in range(n)]}, "grade": {"grade": [0.2 * (i + 1) for i in range(n)]}}
        signatures = {"holistic": "metric:holistic|model:stub-holistic|version:x", "grade": "metric:grade|model:stub-grade|version:x"}
        # as the real components do: every one flags empty and repetitive responses, GRADE unknown words too
        own = [response_flags(it["response"]) for it in items]
        flags = {"holistic": own, "grade": [f + (["unknown_words"] if it["response"] == "asdf qwer" else [])
                                       for f, it in zip(own, items)]}
        return combined_runner.Components(scores, signatures, flags, {"multiref": "not applicable: no references"})

    monkeypatch.setattr(combined_runner, "component_scores", component_scores)
    return tmp_path, bundle, calls


def test_runner_scores_with_the_pattern_model_and_applies_the_policy(stub_components):
    folder, bundle, calls = stub_components
    responses = ("Fine, thanks.", "Good, you?", "", "no no no no no no no no", "asdf qwer")
    items = [{"context": ["hi"], "response": r} for r in responses]
    scores = combined_runner.run_combined(items, str(folder))
    per_item, signature = scores
    expected = bundle.models[1].predict({"coherence": [1.0, 2.0, 3.0, 4.0, 5.0], "grade": [0.2, 0.4, 0.6, 0.8, 1.0]})
    assert per_item["combined"][:2] == pytest.approx(expected[:2], rel=1e-12)
    # empty, repetitive and unknown words (flags the components set): the worst value ...
    assert per_item["combined"][2:] == [0.0, 0.0, 0.0]
    assert scores.flags == [[], [], ["empty"], ["repetitive"], ["unknown_words"]]
    assert min(expected[2:]) > 0.0  # ... where their component scores alone would not give it
    assert "features:coherence+grade" in signature and "trained_on:4" in signature
    assert "components:holistic=stub-holistic+grade=stub-grade" in signature and "held_out" not in signature
    per_item, signature = combined_runner.run_combined(items[:2], str(folder), held_out="b")
    held = bundle.held_out["b"].predict({"coherence": [1.0, 2.0], "grade": [0.2, 0.4]})
    assert per_item["combined"] == pytest.approx(held, rel=1e-12)
    assert "held_out:b" in signature and "trained_on:3" in signature and calls[-1] == "b"


def test_a_component_without_weights_is_skipped_with_a_warning(stub_components, monkeypatch):
    folder, bundle, _ = stub_components

    def without_grade(items, set_name=None, refresh=False, precision=None, jobs=None):
        return combined_runner.Components({"holistic": {"coherence": [1.0, 2.0]}},
                                          {"holistic": "metric:holistic|model:stub-holistic|version:x"},
                                          {"holistic": [[], []]}, {"grade": "missing weights: no grade folder"})

    monkeypatch.setattr(combined_runner, "component_scores", without_grade)
    items = [{"context": ["hi"], "response": r} for r in ("Fine, thanks.", "Good, you?")]
    with pytest.warns(UserWarning, match="component grade skipped"):
        per_item, signature = combined_runner.run_combined(items, str(folder))
    nan = float("nan")
    assert per_item["combined"] == pytest.approx(bundle.models[1].predict({"coherence": [1.0, 2.0], "grade": [nan, nan]}),
                                                 rel=1e-12)
    assert "missing:grade" in signature


def test_a_missing_model_names_the_build_command(tmp_path, monkeypatch):
    from dialeval.models import ModelNotFoundError

    def never(*args, **kwargs):
        raise AssertionError("components scored although the combined model is missing")

    monkeypatch.setattr(combined_runner, "component_scores", never)

    with pytest.raises(ModelNotFoundError, match="training/combined.py"):
        combined_runner.run_combined([{"context": ["hi"], "response": "yes"}], str(tmp_path / "nowhere"))


def test_evaluate_module_scores_through_the_runner_and_checks_its_inputs(stub_components):
    import dialeval

    folder, bundle, _ = stub_components
    module = dialeval.load("combined")
    result = module.compute(contexts=[["hi"], ["hi"]], responses=["Fine, thanks.", ""], model=str(folder))
    expected = bundle.models[1].predict({"coherence": [1.0, 2.0], "grade": [0.2, 0.4]})
    assert result["combined_scores"] == pytest.approx([expected[0], 0.0], rel=1e-12)
    assert result["flags"] == [[], ["empty"]]
    # beside the mean (the empty reply at 0): the flagged count and the mean over the other reply
    assert result["flagged"] == 1 and result["combined_unflagged"] == pytest.approx(expected[0], rel=1e-12)
    assert result["signature"].startswith("metric:combined|model:")
    with pytest.raises(ValueError, match="unknown option"):
        module.compute(contexts=[["hi"]], responses=["yes"], modle="x")
    with pytest.raises(ValueError, match="responses"):
        module.compute(contexts=[["hi"]], responses=None)


def test_evaluate_module_checks_the_optional_references(stub_components):
    import dialeval

    folder, _, _ = stub_components
    module = dialeval.load("combined")
    with pytest.raises(ValueError, match=r"references\[0\]\[0\] must be a string"):
        module.compute(contexts=[["hi"]], responses=["yes"], references=[[3]], model=str(folder))
    with pytest.raises(ValueError, match="references has 2 entries for 1 responses"):
        module.compute(contexts=[["hi"]], responses=["yes"], references=[["a"], ["b"]], model=str(folder))


def test_evaluate_module_passes_the_references_to_the_components(stub_components, monkeypatch):
    import dialeval

    folder, _, _ = stub_components
    seen = []
    stub = combined_runner.component_scores

    def recording(items, set_name=None, refresh=False, precision=None, jobs=None):
        seen.append([it.get("references") for it in items])
        return stub(items, set_name, refresh, precision, jobs)

    monkeypatch.setattr(combined_runner, "component_scores", recording)
    module = dialeval.load("combined")
    module.compute(contexts=[["hi"], ["yo"]], responses=["yes", "no"], references=[["a", "b"], ["c"]], model=str(folder))
    module.compute(contexts=[["hi"]], responses=["yes"], model=str(folder))
    assert seen == [[["a", "b"], ["c"]], [None]]


def test_the_components_weights_key_the_combined_scores_in_the_cache():
    from dialeval import registry

    folders = registry.cache_folders()
    reads = registry.spec("combined").reads
    assert folders["combined"][0] == "combined-judgments"  # its own weights, then its components'
    assert set(folders["combined"][1:]) == {f for m in reads for f in registry.spec(m).bundled}
    components = {"grade-dailydialog-cross", "ssrem-chitchat-mpnet", "gemma3-dailydialog", "minilm-nli"}
    assert components <= set(folders["combined"])
    assert "gemma3-dialogue" not in folders["combined"]  # FED's adapter: no component since issue 57
    assert folders["grade"] == registry.spec("grade").bundled  # a metric that reads none keeps its own


def test_the_bundled_model_was_trained_on_the_components_the_metric_reads():
    """The component weights the bundled model was trained on (``components`` in ``combined.json``)
    are those the golden example's combined signature names, i.e. what the metric reads now
    (``test_golden`` holds the live signature to that entry): a component's new default needs the
    combined model retrained, or a pin in ``PINNED_OPTIONS`` meanwhile (then its job is exempt)."""
    import json
    from pathlib import Path

    from dialeval.combined.features import PINNED_OPTIONS
    from dialeval.combined.runner import resolve_folder
    from dialeval.core.signature import Signature

    golden = json.loads((Path(__file__).parent / "golden" / "examples.json").read_text())["combined"]["signatures"]
    reads = dict(part.split("=", 1) for signature in golden
                 for part in Signature.parse(signature)["components"].split("+"))
    trained = CombinedModel.load(resolve_folder("dialeval/combined-judgments")).components
    assert set(reads) == set(trained)
    assert {j: m for j, m in reads.items() if j not in PINNED_OPTIONS} == \
        {j: m for j, m in trained.items() if j not in PINNED_OPTIONS}


def test_the_single_metric_chosen_on_the_other_sets_and_the_table():
    from dialeval.combined.benchmark import best_single, chosen_elsewhere, format_table

    by_set = {"a": {"x:s": 0.5, "y:s": 0.1}, "b": {"x:s": 0.1, "y:s": 0.3}, "c": {"x:s": 0.2, "y:s": 0.4},
              "d": {"y:s": 0.9}}
    # on a: x averages 0.15 on b, c; y 0.533 on b, c, d: y is chosen, and scores 0.1 on a (hindsight: x, 0.5)
    assert chosen_elsewhere(by_set, "a") == ("y:s", pytest.approx(1.6 / 3, rel=1e-12), 0.1)
    assert best_single(by_set["a"]) == ("x:s", 0.5)
    assert chosen_elsewhere(by_set, "d") == ("y:s", pytest.approx(0.8 / 3, rel=1e-12), 0.9)  # only y applies on d
    row = {"set": "a", "n": 10, "trained_on": ["b", "c", "d"], "combined": 0.3, "combined_interval": [0.1, 0.5],
           "best_single": "x:s", "best_single_spearman": 0.5, "best_single_interval": [0.3, 0.7], "williams_p": 0.9,
           "chosen_elsewhere": "y:s", "chosen_elsewhere_spearman": 0.1, "chosen_elsewhere_interval": [-0.1, 0.3],
           "chosen_elsewhere_williams_p": 0.01}
    text = format_table({"rows": [row], "signature": "metric:combined|x", "wins": 0, "significant_wins": 0,
                         "wins_vs_chosen_elsewhere": 1, "significant_wins_vs_chosen_elsewhere": 1, "sets": 1})
    assert "a    10  3                  0.300" in text and "y:s                          0.100    [-0.100, 0.300]" in text
    assert "above the best single metric (hindsight) on 0 of 1" in text
    assert "above the single metric chosen on the other sets on 1 of 1 sets (1 significantly)" in text


def test_every_feature_of_the_default_comes_from_a_metric_the_combined_spec_reads():
    """A feature whose metric is not in ``reads`` would not key the combined scores' cache by that
    metric's weights; a metric it reads but no feature of the default design needs would cost its
    scoring for nothing (FED and FULL until issue 57)."""
    from dialeval import registry
    from dialeval.combined.designs import DEFAULT, JOBS

    jobs = {job.name: job.metric for spec in registry.specs() for job in spec.grid_jobs}
    assert {jobs[j] for j in JOBS} == set(registry.spec("combined").reads)
    bundled = CombinedModel.load(combined_runner.resolve_folder("dialeval/combined-judgments"))
    assert set(bundled.features()) == set(DEFAULT.features) and bundled.design == DEFAULT.name


def test_the_reference_free_design_reads_no_referenced_feature():
    """Design (f)'s features are exactly those of (a), every feature it was compared with, whose grid
    job reads no references."""
    from dialeval import registry
    from dialeval.combined.features import FEATURES

    jobs = {job.name: job for job in registry.grid_jobs()}
    job_of = {f.name: jobs[f.job] for f in FEATURES}
    free = [name for name in design_named("a").features
            if "references" not in registry.fields_read(job_of[name].metric, job_of[name].options)]
    assert list(design_named("f").features) == free


def test_usl_features_come_from_its_job_and_only_the_usl_designs_read_them():
    """USL-H's headline and its parts are features of the ``usl`` job; (a) and (e), "every feature",
    keep the ten they were compared with, (g) is (c) with USL-H's percentile, (h) is (b)'s ridge with
    U, S and L."""
    from dialeval.combined.features import feature_table

    scored = {"usl": {"usl": [0.5, 0.25], "usl_u": [0.9, 0.1], "usl_s": [0.2, 0.4], "usl_l": [0.3, 0.7]}}
    assert feature_table(scored) == scored["usl"]
    for name in "abcdef":
        assert not any(f.startswith("usl") for f in design_named(name).features), name
    assert design_named("g").features == (*design_named("c").features, "usl")
    assert design_named("g").free_weights() == 0 and not design_named("g").reads_ratings
    assert design_named("h").features == (*design_named("b").features, "usl_u", "usl_s", "usl_l")
    assert design_named("h").free_weights() == 6


def test_the_module_description_names_every_feature():
    """Its description named neither FULL nor ssrem_f (issue 54): each feature of the default design by
    its name, as in the signature."""
    import re

    import dialeval
    from dialeval.combined.designs import DEFAULT

    description = dialeval.load("combined").description
    assert [f for f in DEFAULT.features if not re.search(rf"\b{f}\b", description)] == []
