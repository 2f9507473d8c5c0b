"""Loaded models kept per settings and released (dialeval.core.held), and ``dialeval examples``
loading each metric's models once, one metric's at a time (issue 55, item 3: its peak memory,
benchmarks/results/examples-memory.md), without loading real models."""

import json
import shutil

import pytest

from dialeval.cli import main
from dialeval.core import held
from float_noise import ROUNDING


@pytest.fixture
def own_loaders():
    """The held loaders a test declares are forgotten after it."""
    before = list(held._LOADERS)
    yield
    held._LOADERS[:] = before


def test_the_same_settings_give_the_same_object_and_release_drops_it(own_loaders):
    loads, closed = [], []

    @held.held(maxsize=2)
    def load(model, precision):
        loads.append((model, precision))
        return object()

    @held.held(maxsize=1, close=closed.append)
    def start():
        return object()

    first = load("m", "float32")
    assert load("m", "float32") is first and loads == [("m", "float32")]
    other = load("m", "bfloat16")  # another precision: another object
    assert other is not first and loads[-1] == ("m", "bfloat16")
    since = held.mark()
    process = start()
    assert start() is process and held.held_count() >= 3 and held.is_held(load) and not held.is_held(print)
    assert held.release(since=since) == 1 and closed == [process]  # only what was loaded after the mark, closed
    assert load("m", "float32") is first and len(loads) == 2  # loaded before the mark: kept
    assert held.release() >= 2 and held.held_count() == 0
    assert load("m", "float32") is not first and len(loads) == 3  # loaded anew after the release
    assert start() is not process and held.release() >= 1 and len(closed) == 2


def test_a_full_loader_drops_the_least_recently_used(own_loaders):
    @held.held(maxsize=2)
    def load(name):
        return [name]

    a, b = load("a"), load("b")
    assert load("a") is a  # now the most recently used
    load("c")
    assert load("a") is a and load("b") is not b


def test_a_loader_may_name_its_key(own_loaders):
    loads = []

    @held.held(maxsize=2, key=lambda name, build: name)
    def load(name, build):
        loads.append(name)
        return build()

    first = load("a", object)
    assert load("a", lambda: "another build") is first and loads == ["a"]  # the build is not the key
    assert load("b", object) is not first and loads == ["a", "b"]


def test_a_new_module_instance_takes_the_latest_scorer_of_its_metric_and_settings():
    """``kept_scorer``: an instance keeps its own scorer while its settings stay; a second instance of
    a metric (another ``evaluate.load``) with the same configuration and settings as the latest
    scorer built gets that one; other settings, another configuration or another metric build anew;
    a release drops the latest scorers, not those an instance keeps."""
    from types import SimpleNamespace

    from dialeval.modules import kept_scorer

    builds = []

    def build():
        builds.append(object())
        return builds[-1]

    def module(name="fed", config="default"):
        return SimpleNamespace(name=name, config_name=config)

    held.release()
    fed = module()
    scorer = kept_scorer(fed, ("model", 32), build)
    again = module()
    assert kept_scorer(again, ("model", 32), build) is scorer and again._cached_scorer is scorer and len(builds) == 1
    assert kept_scorer(again, ("model", 16), build) is builds[1]  # other settings: built, now the latest
    assert kept_scorer(fed, ("model", 32), build) is scorer and len(builds) == 2  # its own, kept
    assert kept_scorer(module(), ("model", 32), build) is builds[2]  # not the latest: built anew
    assert kept_scorer(module(config="other"), ("model", 32), build) is builds[3]
    assert kept_scorer(module(name="full"), ("model", 32), build) is builds[4]
    assert kept_scorer(module(), ("model", 32), build) is builds[2] and len(builds) == 5
    held.release()
    assert kept_scorer(module(), ("model", 32), build) is builds[5] and kept_scorer(fed, ("model", 32), build) is scorer
    held.release()


def test_every_runner_keeps_its_models_in_a_held_loader():
    from dialeval.fed.runner import fed_scorer
    from dialeval.full.runner import full_scorer
    from dialeval.grade.encoder import load_encoder
    from dialeval.grade.scorer import grade_scorer, load_graph
    from dialeval.holistic.runner import consistency_scorer, likelihood_scorer
    from dialeval.multiref.meteor import shared_meteor
    from dialeval.ssrem.scorer import cached_scorer

    for loader in (fed_scorer, full_scorer, load_encoder, grade_scorer, load_graph, consistency_scorer,
                   likelihood_scorer, cached_scorer, shared_meteor):
        assert held.is_held(loader), loader.__name__


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs java")
def test_the_release_stops_the_meteor_jvm():
    from dialeval.multiref.meteor import shared_meteor

    jvm = shared_meteor()
    assert jvm._process.poll() is None
    held.release()
    assert jvm._process.poll() is not None and shared_meteor() is not jvm
    held.release()


# Fake runners over a held fake model: the sub-scores each returns (those the combined metric reads included)
SUBS = {"multiref": ("bleu2", "meteor", "rougeL", "greedy_matching", "embedding_average"),
        "fed": ("turn_overall",), "grade": ("grade",), "ssrem": ("ssrem", "ssrem_f", "ssrem_g"), "full": ("full",),
        "usl": ("usl", "usl_u", "usl_s", "usl_l")}


def test_examples_loads_each_metric_once_and_releases_it_before_the_next(monkeypatch, capsys, tmp_path, own_loaders):
    """Every metric's fake model is loaded once, though the combined metric reads every one of them
    (their runs scored beside their own jobs, then read from the score cache); when a metric's runner
    is first called no other metric's model is held; FED's example job and the run combined reads of it
    (``level="turn"``, FED's default) are one scoring; at the end nothing is held but a model loaded
    before the command."""
    from dialeval.scoring import runners

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    loads, calls = [], []

    @held.held(maxsize=4)
    def load(metric):
        loads.append(metric)
        return object()

    def fake(metric):
        def run(items, level="turn", aspects=None, reference_free=False):
            calls.append((metric, held.held_count()))
            load(metric)
            subs = aspects or SUBS[metric]
            return {s: [0.5 + 0.01 * i for i in range(len(items))] for s in subs}, f"metric:{metric}|model:fake|version:x"
        return run

    for metric in (*SUBS, "holistic"):
        monkeypatch.setitem(runners.RUNNERS, metric, fake(metric))
    held.release()
    load("before")
    assert main(["examples", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(loads) == sorted({"before", *SUBS, "holistic"})  # each once: combined reloaded none
    first_call = {}
    for metric, holding in calls:
        first_call.setdefault(metric, holding)
    assert first_call == {m: 1 for m in first_call}  # the metric before was released, "before" kept
    assert [m for m, _ in calls].count("fed") == 1 and [m for m, _ in calls].count("full") == 1
    assert held.held_count() == 1 and load("before") is not None and loads.count("before") == 1
    assert list(out) == ["multiref", "fed", "holistic", "grade", "ssrem", "combined", "full", "usl"]  # the table's order
    combined = out["combined"]
    assert len(combined["scores"]["combined"]) == 6 and "missing:" not in combined["signatures"][0]
    assert "holistic=fake" in combined["signatures"][0] and "ssrem-f=fake" in combined["signatures"][0]
    assert out["fed"]["scores"]["turn_overall"] == pytest.approx([0.5, 0.51, 0.52, 0.53, 0.54, 0.55], rel=ROUNDING)
