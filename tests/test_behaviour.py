"""The behavioural suite (issue 32, :mod:`dialeval.metaeval.behaviour`): the replies it builds (pinned), its
arithmetic on a fake metric (shares, Wilson intervals and control changes computed by hand), the
``dialeval behaviour`` command and every registered metric's declaration."""

import dataclasses
import json
import math

import pytest

from dialeval import registry
from dialeval.scoring import runners, cache as score_cache
from dialeval.metaeval.behaviour import checks, kinds, load_cases, markdown, run, to_json
from dialeval.metaeval.behaviour.cases import Case, dailydialog_cases, read_cases
from dialeval.metaeval.behaviour.suite import MetricResult
from dialeval.cli import main
from dialeval.core.results import ItemScores
from dialeval.core.scales import Scale
from dialeval.core.spec import BEHAVIOUR_CONTROLS, BEHAVIOUR_KINDS, Behaviour, MetricSpec

CASES = [
    Case(("Do you like books ?", "Yes , I do .", "What do you read ?"), "Mostly novels , and some history .", "Nice ."),
    Case(("Hello!",), "Hi, how are you?", None),
    Case(("Is it raining?", "No.", "Good, let's walk."), "OK.", "Great."),
]


def no_paraphraser(monkeypatch):
    monkeypatch.setattr(registry, "paraphraser", lambda: None)


def test_the_replies_are_pinned(monkeypatch):
    no_paraphraser(monkeypatch)
    built = kinds.build(CASES, seed=0)
    assert built == {
        "echo_last": ["What do you read ?", "Hello!", "Good, let's walk."],
        "echo_own": ["Yes , I do .", None, "No."],  # a one-turn context has no own turn
        "salad": ["like Yes I do books", "Hello! Hello! Hello! Hello!", "No."],  # the reply's length in words
        "generic": ["Thank you .", "Okay.", "Thank you."],  # spaced like the reply's punctuation
        "other_reply": ["OK.", "Mostly novels , and some history .", "Hi, how are you?"],
        "empty": ["", "", ""],
        "repeated": [" ".join(["Mostly novels , and some history ."] * 4), " ".join(["Hi, how are you?"] * 4),
                     "OK. OK. OK. OK."],
        "gibberish": ["azoaij fwzp nr qcn osclotj", "zhxbmb sidimeq upnl tk", "blzeys"],
        "punctuation": ["...", "...", "."],
        "lowercase": ["mostly novels and some history", "hi how are you", "ok"],
        "paraphrase": [None, None, None],  # no paraphraser
        "continuation": ["Mostly novels , and some history . Nice .", None, "OK. Great."],
    }
    assert list(built) == [*BEHAVIOUR_KINDS, *BEHAVIOUR_CONTROLS]
    assert kinds.build(CASES, seed=0) == built and kinds.build(CASES, seed=1) != built
    # a case's replies do not depend on the others (other_reply aside)
    assert kinds.build(CASES[:2], seed=0)["salad"] == built["salad"][:2]


def test_a_control_equal_to_the_reply_is_not_built(monkeypatch):
    monkeypatch.setattr(registry, "paraphraser", lambda: lambda text, seed: text.replace("OK", "Okay"))
    built = kinds.build([Case(("Hi",), "fine", None), Case(("Hi",), "OK.", None)], names=["lowercase", "paraphrase"])
    assert built == {"lowercase": [None, "ok"], "paraphrase": [None, "Okay."]}
    with pytest.raises(ValueError, match="unknown kind"):
        kinds.build(CASES, names=["echo"])


def test_the_derangement_keeps_no_case_in_place():
    for n in (2, 3, 10, 200):
        order = kinds.derangement(n, kinds.rng_for(0, "other_reply", 0))
        assert sorted(order) == list(range(n)) and all(order[i] != i for i in range(n))
    with pytest.raises(ValueError, match="at least 2"):
        kinds.derangement(1, kinds.rng_for(0, "other_reply", 0))


def test_dailydialog_cases_are_seeded_and_leave_a_turn_on_each_side():
    cases = dailydialog_cases(5, seed=3)
    assert cases == dailydialog_cases(5, seed=3) and cases != dailydialog_cases(5, seed=4)
    assert all(len(c.context) >= 2 and c.next_turn and "dailydialog test" in c.where for c in cases)
    assert dailydialog_cases(3, seed=3) == cases[:3]  # a smaller run is a prefix: its scores are cached
    with pytest.raises(ValueError, match="n must be"):
        dailydialog_cases(1)


def wilson_by_hand(wins: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_kind_shares_wilson_intervals_and_nan_as_worst():
    real = [3.0, 2.0, math.nan, 5.0, 1.0]
    other = [1.0, 2.0, 0.0, math.nan, None]  # a tie, a NaN real reply, a NaN kind, a reply not built
    found = checks.check_kind("salad", real, other, declared=True)
    assert (found.n, found.wins, found.ties) == (4, 2, 1)
    assert found.share == 0.5 and found.passed is False
    assert (found.ci_low, found.ci_high) == pytest.approx(wilson_by_hand(2, 4), rel=1e-12)
    assert found.mean_change == pytest.approx(((1 - 3) + (2 - 2)) / 2, rel=1e-12)  # finite pairs only
    lower = checks.check_kind("salad", [1.0, 1.0], [2.0, 1.0], higher_is_better=False)
    assert (lower.wins, lower.ties, lower.passed) == (1, 1, None)  # not declared: no verdict
    assert checks.check_kind("echo_own", [1.0], [None]).share is None


@pytest.mark.parametrize("wins, n, verdict", [
    (9, 10, "not enough contexts"),  # share 0.90, Wilson [0.5958, 0.9821]: issue 54's "pass" on 10 contexts
    (10, 10, "not enough contexts"),  # 1.00 but [0.7225, 1]
    (18, 20, "not enough contexts"),  # [0.6990, 0.9721]
    (20, 20, "pass"),  # [0.8389, 1]
    (90, 100, "pass"),  # the bar is inclusive: 0.90, [0.8256, 0.9448]
    (89, 100, "FAIL"),  # under the bar, whatever the interval
    (8, 10, "FAIL"),
])
def test_a_declared_kind_passes_at_the_bar_on_enough_contexts(wins, n, verdict):
    found = checks.check_kind("echo_last", [1.0] * n, [0.0] * wins + [1.0] * (n - wins), declared=True)
    assert found.share == wins / n and found.verdict == verdict and found.passed == (verdict == "pass")
    assert (found.ci_low, found.ci_high) == pytest.approx(wilson_by_hand(wins, n), abs=1e-12)
    assert checks.check_kind("echo_last", [1.0] * n, [0.0] * wins + [1.0] * (n - wins)).verdict is None


def test_control_change_is_standardized_by_the_real_replies_spread():
    real = [1.0, 2.0, 3.0, 4.0]
    found = checks.check_control("lowercase", real, [1.5, 2.5, None, 4.5], declared=True)
    sd = math.sqrt(sum((x - 2.5) ** 2 for x in real) / 3)  # all real replies, ddof 1
    assert found.n == 3 and found.mean_change == pytest.approx(0.5, rel=1e-12)
    assert found.standardized == pytest.approx(0.5 / sd, rel=1e-12) and found.passed  # 0.387 <= 0.5
    # every difference 0.5
    assert found.ci_low == pytest.approx(0.5, rel=1e-12) and found.ci_high == pytest.approx(0.5, rel=1e-12)
    far = checks.check_control("continuation", real, [0.0, 0.0, 0.0, 0.0], declared=True)
    assert far.mean_change == pytest.approx(-2.5, rel=1e-12) and far.passed is False
    flat = checks.check_control("lowercase", [1.0, 1.0], [2.0, 2.0], declared=True)
    assert flat.standardized is None and flat.passed is False  # no spread: no scale, and JSON has no inf


# ---------------------------------------------------------------------------------------------- fake metric

FAKE = MetricSpec(
    name="fake", summary="words in the reply", runner=lambda items: None,
    scales=lambda: {"length": Scale(0.0, None, True, False, "words")},
    behaviour=Behaviour({"length": ("echo_last", "empty")}, {"length": ("lowercase",)}, note="a test"))
CALLS: list[int] = []


def fake_runner(items, bonus: float = 0.0) -> ItemScores:
    CALLS.append(len(items))
    return ItemScores({"length": [len(kinds.words(it["response"])) + bonus for it in items]}, "metric:fake",
                      [[] for _ in items])


@pytest.fixture
def fake(monkeypatch, tmp_path):
    real_spec = registry.spec
    monkeypatch.setattr(registry, "spec", lambda name: FAKE if name == "fake" else real_spec(name))
    monkeypatch.setitem(runners.RUNNERS, "fake", fake_runner)
    monkeypatch.setattr(score_cache, "weights_fingerprint", lambda metric: "none")
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    no_paraphraser(monkeypatch)
    CALLS.clear()
    return tmp_path


def test_the_suite_on_a_fake_metric(fake):
    result = run("fake", CASES, "three cases", progress=False)
    (score,) = result.scores
    by_kind = {c.kind: c for c in score.kinds}
    # real lengths 5, 4, 1; echo_last lengths 4, 1, 3: the real reply wins twice
    assert (by_kind["echo_last"].wins, by_kind["echo_last"].n) == (2, 3)
    assert (by_kind["echo_last"].ci_low, by_kind["echo_last"].ci_high) == pytest.approx(wilson_by_hand(2, 3), rel=1e-12)
    assert by_kind["empty"].share == 1.0 and by_kind["empty"].verdict == "not enough contexts"  # 3 of 3: [0.44, 1]
    assert by_kind["echo_own"].n == 2 and by_kind["echo_own"].passed is None  # reported, not declared
    assert by_kind["salad"].ties == 3  # as long as the reply
    controls = {c.control: c for c in score.controls}
    assert controls["lowercase"].mean_change == 0.0 and controls["lowercase"].passed  # same words
    assert controls["paraphrase"].n == 0 and controls["paraphrase"].declared is False
    assert result.failures == ["length:echo_last"] and result.undecided == ["length:empty"] and not result.passed
    assert result.real_scores == {"length": [5.0, 4.0, 1.0]}
    first = sum(CALLS)
    again = run("fake", CASES, "three cases", progress=False)  # from the score cache
    assert sum(CALLS) == first and again.scores == result.scores
    run("fake", CASES, "three cases", options={"bonus": 1.0}, progress=False)  # other options: scored again
    assert sum(CALLS) == 2 * first
    data = json.loads(to_json([result]))
    assert data["metrics"][0]["failures"] == ["length:echo_last"] and data["bar"] == 0.9
    report = markdown([result])
    assert "| fake: length | 3 | 0.67 FAIL |" in report and "Failing: fake." in report
    assert "| 1.00 not enough contexts |" in report and "Not enough contexts:" not in report  # it fails anyway
    back = MetricResult.from_dict(data["metrics"][0])  # what benchmarks/behaviour.py --keep reads
    assert back == result and markdown([back]) == report
    assert "note" not in data
    noted = json.loads(to_json([result], note="Run on a fake metric."))  # --keep reads the note back too
    assert noted["note"] == "Run on a fake metric." and noted["metrics"] == data["metrics"]


def test_a_report_read_back_from_json_gets_the_current_verdict(fake):
    """``--keep`` rewrites a report from its JSON: a kind stored with the verdict of the time (``passed``)
    is judged again from its share and interval, so a file can be rewritten without rescoring (issue 54)."""
    from dialeval.metaeval.behaviour.report import card_section

    cases = CASES * 4  # 12 cases: every declared kind's share is 1.00 or below the bar
    result = run("fake", cases, "twelve cases", progress=False)
    stored = json.loads(to_json([result]))["metrics"][0]
    kinds = stored["scores"][0]["kinds"]
    empty = next(k for k in kinds if k["kind"] == "empty")
    assert (empty["share"], empty["verdict"], empty["passed"]) == (1.0, "not enough contexts", False)  # [0.76, 1]
    empty["passed"] = True  # as the bar alone judged it before
    back = MetricResult.from_dict(stored)
    assert back == result and back.undecided == ["length:empty"]
    only_empty = dataclasses.replace(result, scores=tuple(dataclasses.replace(
        s, kinds=tuple(k for k in s.kinds if k.kind != "echo_last")) for s in result.scores))
    report = markdown([only_empty])
    row = next(line for line in report.splitlines() if line.startswith("| fake: length | 12 |"))
    assert "| 1.00 not enough contexts |" in row and row.endswith("| not enough contexts |")
    assert "Failing: none. Not enough contexts: fake." in report
    assert "**Not enough contexts** to pass on empty" in card_section(only_empty)


def test_a_score_at_the_floor_is_the_worst_value_and_stays_out_of_means_and_the_spread(monkeypatch):
    """A floored score (a flagged reply on an unbounded scale) counts as NaN: it loses and ties as
    the floor would, and neither the real replies' mean, a kind's mean change nor a control's
    standardized change sees it (one real reply at -1000 would otherwise set the spread)."""
    from dialeval.metaeval.behaviour.suite import REAL, check_scores

    floored = dataclasses.replace(FAKE, scales=lambda: {"length": Scale(None, None, True, False, "words", floor=-1000.0)})
    real_spec = registry.spec
    monkeypatch.setattr(registry, "spec", lambda name: floored if name == "fake" else real_spec(name))
    scored = {REAL: {"length": [1.0, 2.0, 3.0, -1000.0]},
              "echo_last": {"length": [-1000.0, 1.0, -1000.0, -1000.0]},
              "lowercase": {"length": [1.5, 2.5, 3.5, 2.0]}}
    (score,) = check_scores("fake", scored)
    assert score.real_mean == pytest.approx(2.0, rel=1e-12)
    (echo,) = score.kinds
    # case 2 only
    assert (echo.wins, echo.ties, echo.n) == (3, 1, 4) and echo.mean_change == pytest.approx(-1.0, rel=1e-12)
    (lower,) = score.controls
    assert lower.n == 3 and lower.mean_change == pytest.approx(0.5, rel=1e-12)
    assert lower.standardized == pytest.approx(0.5 / 1.0, rel=1e-12) and lower.passed  # SD of 1, 2, 3 is 1


def test_a_kind_built_for_no_case_is_reported_empty(fake):
    one_turn = [Case(("Hi!",), "Hello there.", None), Case(("How are you?",), "Fine, thanks.", None)]
    result = run("fake", one_turn, "one-turn contexts", progress=False)
    by_kind = {c.kind: c for c in result.scores[0].kinds}
    assert by_kind["echo_own"].n == 0 and by_kind["echo_own"].share is None
    assert "| fake: length | 2 |" in markdown([result])


def test_options_that_leave_a_judged_score_out_judge_the_rest(monkeypatch):
    """holistic with aspects=["coherence"] produces no fluency: the suite judges coherence alone, and
    refuses a run that produced none of the judged scores."""
    from dialeval.metaeval.behaviour.suite import REAL, check_scores

    two = MetricSpec(name="two", summary="two scores", runner=lambda items: None,
                     scales=lambda: {"length": Scale(0.0, None, True, False, "words"),
                                     "chars": Scale(0.0, None, True, False, "characters")},
                     behaviour=Behaviour({"length": ("echo_last",), "chars": ("echo_last",)}, {}, note="a test"))
    monkeypatch.setattr(registry, "spec", lambda name: two)
    scored = {REAL: {"length": [3.0, 2.0]}, "echo_last": {"length": [1.0, 5.0]}}
    (result,) = check_scores("two", scored)
    assert result.score == "length" and {c.kind: c.wins for c in result.kinds}["echo_last"] == 1
    with pytest.raises(ValueError, match=r"none of the scores the suite judges \(length, chars\) was scored"):
        check_scores("two", {REAL: {"other": [1.0]}})


def test_a_metric_that_declares_nothing_is_refused_with_its_reason():
    silent = [s for s in registry.specs() if not s.behaviour.must_catch]
    for spec in silent:
        with pytest.raises(ValueError, match="does not run"):
            run(spec.name, CASES, "three cases", progress=False)


def test_the_command_line(fake, capsys):
    data = fake / "mine.jsonl"
    data.write_text("\n".join(json.dumps({"context": list(c.context), "response": c.reply, "next_turn": c.next_turn})
                              for c in CASES) + "\n", encoding="utf-8")
    out = fake / "out.json"
    assert main(["behaviour", "--metric", "fake", "--dataset", str(data), "--quiet", "--save", str(out),
                 "--markdown", str(fake / "out.md")]) == 0
    assert "| fake: length | 3 |" in capsys.readouterr().out
    assert json.loads(out.read_text())["metrics"][0]["source"] == str(data)
    assert (fake / "out.md").read_text().startswith("# Behavioural suite")
    assert main(["behaviour", "--metric", "fake", "--dataset", str(data), "--n", "2", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"][0]["n_cases"] == 2

    bad = fake / "bad.jsonl"
    for line, message in [('{"context": ["Hi"], "response": ""}', "'response' is empty"),
                          ('{"context": [], "response": "x"}', "'context' must be a non-empty list"),
                          ('{"context": ["Hi"], "response": "x", "next_turn": 3}', "'next_turn' must be"),
                          ("[1]", "expected a JSON object"), ("{oops", "not valid JSON")]:
        bad.write_text('{"context": ["Hi"], "response": "Hello"}\n' + line + "\n", encoding="utf-8")
        assert main(["behaviour", "--metric", "fake", "--dataset", str(bad), "--quiet"]) == 2
        error = capsys.readouterr().err
        assert f"{bad}:2:" in error and message in error, error
    bad.write_text('{"context": ["Hi"], "response": "Hello"}\n', encoding="utf-8")
    assert main(["behaviour", "--metric", "fake", "--dataset", str(bad), "--quiet"]) == 2
    assert "at least 2" in capsys.readouterr().err
    calls = sum(CALLS)
    assert main(["behaviour", "--metric", "fake", "--dataset", str(data), "--quiet", "--markdown", str(fake)]) == 2
    assert "is a directory" in capsys.readouterr().err and sum(CALLS) == calls  # checked before any scoring


def test_read_cases_and_load_cases(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"context": "Hi", "response": "Hello", "id": 1}\n\n{"context": ["A", "B"], "response": "C"}\n')
    assert read_cases(path) == [Case(("Hi",), "Hello", None, f"{path}:1"), Case(("A", "B"), "C", None, f"{path}:3")]
    assert load_cases(path)[1] == str(path)


# ---------------------------------------------------------------------------------------------- declarations

@pytest.mark.parametrize("name", registry.METRICS)
def test_every_metric_declares_what_it_must_catch(name):
    spec = registry.spec(name)
    behaviour = spec.behaviour
    assert behaviour.note, f"{name}: say why these sub-scores are judged (or why none is)"
    scales = spec.scales()
    for score, declared in behaviour.must_catch.items():
        assert score in scales and scales[score].higher_is_better is not None, (name, score)
        assert declared and set(declared) <= set(BEHAVIOUR_KINDS), (name, score)
    assert set(behaviour.controls) <= set(behaviour.must_catch)
    if behaviour.options:
        from dialeval.scoring import check_options

        check_options(name, dict(behaviour.options))


def test_a_declaration_with_an_unknown_kind_or_control_is_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        Behaviour({"x": ("echo",)})
    with pytest.raises(ValueError, match="unknown control"):
        Behaviour({"x": ("salad",)}, {"x": ("shout",)})
    with pytest.raises(ValueError, match="not a judged sub-score"):
        Behaviour({"x": ("salad",)}, {"y": ("lowercase",)})


# ---------------------------------------------------------------------------------------------- percentiles

def test_percentile_is_the_mid_rank_among_human_replies():
    from dialeval.scoring.human_reference import percentile

    reference = [1.0, 2.0, 3.0, 4.0]
    assert percentile(2.5, reference) == 50.0
    assert percentile(2.0, reference) == 37.5  # one below, one equal
    assert percentile(0.0, reference) == 0.0 and percentile(9.0, reference) == 100.0
    assert percentile(1.0, reference, higher_is_better=False) == 87.5  # three worse (higher), one equal
    assert percentile(math.nan, reference) is None
    with pytest.raises(ValueError, match="empty"):
        percentile(1.0, [])


def test_the_human_reference_is_built_from_the_suites_real_replies_through_the_cache(fake, monkeypatch):
    from dialeval.metaeval.behaviour.reference import build_reference
    from dialeval.scoring import human_reference

    bundled = dataclasses.replace(FAKE, bundled=("fake-folder",))
    monkeypatch.setattr(registry, "spec", lambda name: bundled)
    monkeypatch.setattr(human_reference, "weights_fingerprint", lambda metric: "none")
    monkeypatch.setenv("DIALEVAL_HUB", str(fake / "hub"))
    (fake / "hub" / "fake-folder").mkdir(parents=True)
    cases = dailydialog_cases(4)
    run("fake", cases, "the suite's cases", progress=False)
    calls = sum(CALLS)
    path = build_reference("fake", n=4, progress=False)
    assert sum(CALLS) == calls  # the suite scored the real replies: read from the score cache
    assert path == fake / "hub" / "fake-folder" / human_reference.FILE
    reference = human_reference.load_reference("fake")
    assert reference.scores == {"length": tuple(sorted(float(len(kinds.words(c.reply))) for c in cases))}
    assert reference.cases["n"] == 4 and json.loads(path.read_text())["references"][0]["note"] == (
        "n = 4, fewer than the default 200")
    lowest = reference.scores["length"][0]
    assert reference.percentiles("length", [0.0, lowest, 1000.0]) == [
        0.0, 100.0 * reference.scores["length"].count(lowest) / 2 / 4, 100.0]  # the lowest: half its ties


def test_the_registry_offers_a_seeded_close_paraphraser():
    paraphrase = registry.paraphraser()
    assert paraphrase is not None  # holistic's WordNet substitution
    text = "They want the government to reduce the price of the gasoline ."
    found = paraphrase(text, 0)
    assert found == paraphrase(text, 0) and found != text and "_" not in found
    assert len(found.split()) >= len(text.split())  # words replaced, none dropped


def test_the_card_section_and_its_place_in_a_card(fake, tmp_path):
    """The card's paragraphs name each declared kind's share and interval and the verdict; the
    script puts them between the card's markers, in place of an earlier run's paragraphs."""
    from dialeval.metaeval.behaviour.report import card_section
    from dialeval.metaeval.marked import markers, write_marked

    result = run("fake", CASES, "three cases", progress=False)
    section = card_section(result)
    low, high = wilson_by_hand(2, 3)
    assert section.startswith("`dialeval behaviour --metric fake` (3 contexts from three cases, seed 0;")
    assert f"echo_last 0.67 [{low:.2f}, {high:.2f}]" in section
    assert "echo_own" not in section  # reported in the results file, not declared
    assert "**Fails** its declared checks on echo_last" in section
    start, end = markers("behaviour")
    card = tmp_path / "README.md"
    card.write_text(f"# Card\n\n## Behavioural suite\n\n{start}\n`dialeval behaviour --metric fake` (old run).\n\n"
                    f"`length`: share of contexts where the real reply scores strictly higher than old.\n{end}\n\n"
                    "A paragraph of prose that stays.\n\n## Limitations\n", encoding="utf-8")
    write_marked(card, "behaviour", section)
    once = card.read_text(encoding="utf-8")
    assert "old" not in once and "A paragraph of prose that stays." in once and once.count(section) == 1
    write_marked(card, "behaviour", section)
    assert card.read_text(encoding="utf-8") == once
    card.write_text("# Card without the block\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no <!-- behaviour:start --> ... <!-- behaviour:end --> block"):
        write_marked(card, "behaviour", section)


def test_a_behaviour_lists_what_it_declares_in_the_suites_order():
    declared = Behaviour({"x": ("other_reply", "echo_last"), "y": ("salad",)}, {"x": ("paraphrase",)}).declared
    assert declared == ("echo_last", "salad", "other_reply", "paraphrase")


def test_the_suite_prefers_the_candidate_with_the_best_worst_kind_among_those_whose_controls_pass():
    def found(shares, control_passes):  # on 100 contexts a share of 0.90 or more passes
        kinds = [checks.KindCheck(f"k{i}", 100, round(s * 100), 0, s, *wilson_by_hand(round(s * 100), 100), None, True)
                 for i, s in enumerate(shares)]
        controls = [checks.ControlCheck("lowercase", 10, 0.0, None, None, 0.0, True, control_passes)]
        return {"kinds": kinds, "controls": controls}

    # "b" has the best worst kind (0.7) but fails a control; of the rest "c" (0.6) beats "a" (0.5)
    candidates = {"a": found([0.5, 1.0], True), "b": found([0.7, 0.8], False), "c": found([0.9, 0.6], True)}
    assert checks.best_by_worst_kind(candidates) == "c"
    # no candidate keeps its controls: all compete, and a tie goes to the earlier one
    candidates = {"a": found([0.7], False), "b": found([0.7], False), "c": found([0.4], False)}
    assert checks.best_by_worst_kind(candidates) == "a"
    with pytest.raises(ValueError, match="no candidate"):
        checks.best_by_worst_kind({})
    # the first candidate whose every kind passes, controls aside; none when none does
    candidates = {"a": found([0.5, 1.0], True), "b": found([0.9, 0.95], False), "c": found([0.99, 0.99], True)}
    assert checks.first_passing(candidates) == "b"
    assert checks.first_passing({"a": found([0.89], True)}) is None


def test_the_readme_behaviour_table_is_the_stored_results_table():
    """README.md's summary table is generated (``benchmarks/behaviour.py --keep --readme README.md``)
    from benchmarks/results/behaviour.json, so it cannot drift from the stored results."""
    from pathlib import Path

    from dialeval.metaeval.behaviour.report import summary_table
    from dialeval.metaeval.marked import markers

    root = Path(__file__).resolve().parents[1]
    stored = json.loads((root / "benchmarks/results/behaviour.json").read_text(encoding="utf-8"))
    table = summary_table([MetricResult.from_dict(m) for m in stored["metrics"]])
    start, end = markers("behaviour-table")
    block = (root / "README.md").read_text(encoding="utf-8").split(start, 1)[1].split(end, 1)[0]
    assert block == f"\n{table}\n"
