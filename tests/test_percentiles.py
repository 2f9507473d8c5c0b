"""Scores a person can read (issue 32 item 4): a score's percentile among human replies, read from
the reference stored beside the bundled weights (dialeval.scoring.human_reference), in the evaluate
modules (percentiles=True), dialeval score --percentiles and dialeval compare --percentiles."""

import dataclasses
import json
import math

import pytest

from dialeval import registry
from dialeval.core.scales import Scale
from dialeval.core.spec import Behaviour, MetricSpec
from dialeval.models import hub
from dialeval.scoring import human_reference as hr

# -- the arithmetic, on a fake metric ------------------------------------------------------------


def run_fake(items, scale=1.0, device=None):
    raise AssertionError("the reference is stored by hand here, nothing is scored")


FAKE = MetricSpec(
    name="fake", summary="a fake metric", runner=run_fake,
    scales=lambda: {"up": Scale(0, 10, True, False, "higher is better"),
                    "down": Scale(0, 10, False, False, "lower is better")},
    bundled=("fake-folder",),
    behaviour=Behaviour({"up": ("echo_last",), "down": ("echo_last",)}),
)


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """The fake metric in the registry, its bundled folder under ``tmp_path``, its weights hash fixed."""
    real_spec = registry.spec
    monkeypatch.setattr(registry, "spec", lambda name: FAKE if name == "fake" else real_spec(name))
    monkeypatch.setenv("DIALEVAL_HUB", str(tmp_path))
    monkeypatch.setattr(hr, "weights_fingerprint", lambda metric: "a" * 64)
    (tmp_path / "fake-folder").mkdir()
    return tmp_path / "fake-folder" / hr.FILE


def store(scores, options=None, n=4):
    return hr.store_reference("fake", options, scores, {"source": "DailyDialog test", "n": n, "seed": 0}, "metric:fake")


def test_mid_rank_percentiles_by_hand(fake):
    # up (higher = better), humans [1, 2, 2, 3]: a 2 beats one human and ties two: (1 + 2/2) / 4 = 50 %
    # down (lower = better), humans [1, 2, 2, 3]: a 1 beats three (2, 2, 3) and ties one: (3 + 1/2) / 4 = 87.5 %
    assert store({"up": [2, 3, float("nan"), 1, 2], "down": [3, 2, 1, 2, None]}) == fake
    reference = hr.load_reference("fake")
    assert reference.scores == {"up": (1, 2, 2, 3), "down": (1, 2, 2, 3)}  # sorted, NaN and None dropped
    assert reference.read({"up": [2, 2.5, 0, 5, float("nan")], "down": [1, 3, 4], "other": [1.0]}) == {
        "up": [50.0, 75.0, 0.0, 100.0, None], "down": [87.5, 12.5, 0.0]}
    # a flagged reply is at exactly 0, where its value alone would read (0 + 1/2) / 4 = 12.5 % (up) or 87.5 % (down)
    assert reference.read({"up": [1, 1], "down": [1, 1]}, [[], ["empty"]]) == {"up": [12.5, 0.0], "down": [87.5, 0.0]}
    with pytest.raises(ValueError, match="1 flags for 2 up scores"):
        reference.read({"up": [1, 1]}, [[]])
    found, signature = hr.with_percentiles("fake", {"up": [3.0]})
    assert found == {"up_percentiles": [87.5]}  # (3 + 1/2) / 4
    assert signature == ("percentiles:fake|among:DailyDialog test human replies|n:4|seed:0|weights:aaaaaaaaaaaa"
                         f"|cache_format:{hr.CACHE_FORMAT}")
    with pytest.raises(ValueError, match=r"none of fake's scores \['x'\] has a human reference"):
        reference.read({"x": [1.0]})
    with pytest.raises(ValueError, match="empty reference"):
        hr.percentile(1.0, [])


def test_ordinal_reads_like_a_person():
    assert [hr.ordinal(v) for v in (62.4, 36.5, 1, 2, 3, 11, 12, 13, 21, 100, 0)] == [
        "62nd", "37th", "1st", "2nd", "3rd", "11th", "12th", "13th", "21st", "100th", "0th"]


def test_options_key_the_reference(fake):
    store({"up": [1, 2], "down": [1, 2]})
    # a runner default given explicitly, or a neutral option (device), is the reference left out
    assert hr.load_reference("fake", {"scale": 1.0, "device": "cpu"}).scores["up"] == (1, 2)
    with pytest.raises(hr.StaleReference, match=r"no human reference of fake with options \{'scale': 2\.0\}.*"
                                                 r"`dialeval behaviour --reference --metric fake --option scale=2\.0`"):
        hr.load_reference("fake", {"scale": 2.0})
    store({"up": [5, 6], "down": [5, 6]}, {"scale": 2.0})  # a second entry beside the first
    assert hr.load_reference("fake", {"scale": 2.0}).scores["up"] == (5, 6)
    assert hr.load_reference("fake").scores["up"] == (1, 2)
    assert len(json.loads(fake.read_text())["references"]) == 2


def test_a_runner_option_added_with_a_none_default_keeps_the_references(fake, monkeypatch):
    """An option left at None is the metric's own default and no part of the key: a runner that gains
    one (holistic's pmi_weight) reads the references stored before it, and those stored with it."""
    def run_fake_later(items, scale=1.0, weight=None, device=None):
        raise AssertionError("nothing is scored")

    store({"up": [1, 2], "down": [1, 2]})
    monkeypatch.setattr(registry, "spec", lambda name: dataclasses.replace(FAKE, runner=run_fake_later))
    assert hr.load_reference("fake").scores["up"] == (1, 2)
    assert hr.load_reference("fake", {"weight": None}).scores["up"] == (1, 2)
    with pytest.raises(hr.StaleReference, match=r"with options \{'scale': 1\.0, 'weight': 0\.5\}"):
        hr.load_reference("fake", {"weight": 0.5})
    stored = json.loads(fake.read_text())
    stored["references"][0]["key"]["options"]["weight"] = None  # as written by a dialeval that keyed Nones
    fake.write_text(json.dumps(stored))
    assert hr.load_reference("fake").scores["up"] == (1, 2)
    store({"up": [3, 4], "down": [3, 4]})  # rebuilt: replaces that entry, not stored beside it
    assert [e["scores"]["up"] for e in json.loads(fake.read_text())["references"]] == [[3, 4]]


def test_a_stale_reference_is_refused(fake, monkeypatch):
    store({"up": [1, 2], "down": [1, 2]})
    monkeypatch.setattr(hr, "weights_fingerprint", lambda metric: "b" * 64)  # retrained weights
    with pytest.raises(hr.StaleReference, match=r"the human reference of fake in .* is stale \(weights: stored 'a+', "
                                                 r"now 'b+'\); rebuild it with `dialeval behaviour --reference "
                                                 r"--metric fake`"):
        hr.load_reference("fake")
    monkeypatch.setattr(hr, "weights_fingerprint", lambda metric: "a" * 64)
    monkeypatch.setattr(hr, "CACHE_FORMAT", hr.CACHE_FORMAT + 1)  # another scoring policy of flagged replies
    with pytest.raises(hr.StaleReference, match="stale \\(cache_format: stored"):
        hr.load_reference("fake")
    store({"up": [1, 2], "down": [1, 2]})  # rebuilt: read again
    assert hr.load_reference("fake").key["cache_format"] == hr.CACHE_FORMAT


def test_a_metric_reading_references_is_read_only_for_items_like_its_reference(fake, monkeypatch):
    reading = MetricSpec(name="fake", summary="", runner=run_fake, scales=FAKE.scales, bundled=FAKE.bundled,
                         behaviour=Behaviour({"up": ("echo_last",)}, reads_references=True))
    monkeypatch.setattr(registry, "spec", lambda name: reading)
    store({"up": [1, 2]})
    assert hr.load_reference("fake", references=False).scores["up"] == (1, 2)
    with pytest.raises(ValueError, match="scored on items without references.*read only for items without"):
        hr.load_reference("fake", references=True)


def test_a_metric_without_a_reference_says_why():
    with pytest.raises(ValueError, match="multiref has no human reference: not run: reference-based"):
        hr.load_reference("multiref")


def test_the_percentiles_file_is_no_weight_file(tmp_path):
    """Storing a reference must not change the folder's content hash (the signatures, the cache keys)."""
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    before = hub.content_hash(tmp_path)
    (tmp_path / hr.FILE).write_text("{}")
    assert hub.content_hash(tmp_path) == before


# -- the stored references of the bundled defaults ---------------------------------------------


@pytest.mark.parametrize("metric", [m for m in registry.METRICS if registry.spec(m).behaviour.scores])
def test_every_judged_metric_has_a_current_reference_of_its_judged_scores(metric):
    reference = hr.load_reference(metric)  # stale -> StaleReference naming the rebuild command
    assert set(reference.scores) == set(registry.spec(metric).behaviour.scores)
    assert reference.cases["source"] == "DailyDialog test" and reference.cases["n"] >= 100
    assert all(len(v) >= 0.95 * reference.cases["n"] for v in reference.scores.values())
    assert all(list(v) == sorted(v) for v in reference.scores.values())


def by_hand(value, stored):
    """The mid-rank percentile counted directly over the stored list (higher = better)."""
    return 100 * (sum(v < value for v in stored) + sum(v == value for v in stored) / 2) / len(stored)


CONTEXTS = [["do you like dogs ?"], ["how was your weekend ?"]]
RESPONSES = ["yes , i have two dogs .", "the the the the the"]


def stored_grade():
    path = hub.hub_root() / registry.spec("grade").bundled[0] / hr.FILE
    return json.loads(path.read_text())["references"][0]["scores"]["grade"]


def test_the_grade_module_adds_percentiles_on_request():
    import dialeval

    grade = dialeval.load("grade")
    plain = grade.compute(contexts=CONTEXTS, responses=RESPONSES)
    # without percentiles: the mean, the flagged count and the mean over unflagged replies (results.summarize)
    assert sorted(plain) == ["flagged", "flags", "grade", "grade_scores", "grade_unflagged", "signature"]
    assert plain["flagged"] == 1 and plain["grade_unflagged"] == plain["grade_scores"][0]
    result = grade.compute(contexts=CONTEXTS, responses=RESPONSES, percentiles=True)
    assert result["grade_scores"] == plain["grade_scores"]
    stored = stored_grade()
    # flagged (repetitive): scored 0 and exactly at the 0th percentile, never the mid-rank of a tie with
    # human replies that are themselves flagged (0.25 before issue 54)
    assert result["flags"][1] == ["repetitive"]
    assert result["grade_percentiles"] == [by_hand(plain["grade_scores"][0], stored), 0.0]
    assert result["grade_percentile"] == pytest.approx(result["grade_percentiles"][0] / 2, rel=1e-12)
    assert result["percentiles_signature"].startswith("percentiles:grade|among:DailyDialog test human replies|n:200")
    with pytest.raises(ValueError, match=r"no human reference of grade with options .*'graph': False.*"
                                         r"--option graph=false"):
        grade.compute(contexts=CONTEXTS, responses=RESPONSES, graph=False, percentiles=True)


def dialeval_grade(rows):
    import dialeval

    return dialeval.load("grade").compute(contexts=[r["context"] for r in rows], responses=[r["response"] for r in rows])


def test_score_and_compare_report_percentiles(tmp_path, capsys):
    from dialeval.cli import main

    rows = [{"id": str(i), "context": c, "response": r} for i, (c, r) in enumerate(zip(CONTEXTS, RESPONSES))]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out.jsonl"
    assert main(["score", "--metric", "grade", "--input", str(source), "--output", str(out), "--percentiles"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    stored = stored_grade()
    assert [line["percentiles"] for line in lines] == [{"grade": 0.0 if line["flags"] else by_hand(line["scores"]["grade"], stored)}
                                                       for line in lines]
    assert lines[1]["flags"] == ["repetitive"] and lines[1]["percentiles"] == {"grade": 0.0}  # 0.25 as a mid-rank
    assert lines[0]["percentiles_signature"].startswith("percentiles:grade|")
    capsys.readouterr()
    assert main(["score", "--metric", "grade", "--input", str(source), "--output", str(out)]) == 2  # no flag: refused
    assert "holds lines with percentiles 'percentiles:grade|" in capsys.readouterr().err

    echo = tmp_path / "echo.jsonl"
    echo.write_text("".join(json.dumps({**row, "response": row["context"][-1]}) + "\n" for row in rows))
    capsys.readouterr()
    assert main(["compare", str(source), str(echo), "--metric", "grade", "--percentiles", "--json", "--quiet",
                 "--resamples", "50", "--permutations", "50"]) == 0
    result = json.loads(capsys.readouterr().out)
    entry = result["metrics"]["grade"]
    assert entry["percentiles"]["among"] == "human replies on DailyDialog test (n=200, seed 0)"
    scored = {name: [json.loads(line) for line in path.read_text().splitlines()]
              for name, path in (("in", source), ("echo", echo))}
    for system in entry["scores"]["grade"]["systems"]:
        # the mean of the items' percentiles (the echoes flagged: at 0), not the percentile of the mean
        grade = dialeval_grade(scored[system["name"]])
        expected = [0.0 if f else by_hand(v, stored) for v, f in zip(grade["grade_scores"], grade["flags"])]
        assert system["percentile"] == pytest.approx(sum(expected) / len(expected), rel=1e-12)
        assert system["flagged"] == sum(map(bool, grade["flags"]))
        assert system["unflagged"] == (None if all(grade["flags"]) else pytest.approx(grade["grade_unflagged"], rel=1e-12))
    assert {s["name"]: s["flagged"] for s in entry["scores"]["grade"]["systems"]} == {"in": 1, "echo": 2}
    assert main(["compare", str(source), str(echo), "--metric", "grade", "--percentiles", "--quiet",
                 "--resamples", "50", "--permutations", "50"]) == 0
    report = capsys.readouterr().out
    assert "| rank | system | mean | 95 % interval | flagged | mean unflagged | mean percentile |" in report
    assert "| echo | 0 | [0, 0] | 2 | - | 0 |" in report
    assert math.isfinite(entry["scores"]["grade"]["systems"][0]["percentile"])
