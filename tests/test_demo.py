"""The Gradio demo (spaces/dialeval-demo), started headless on localhost and called with gradio_client."""

import importlib.util
import socket
import sys
from pathlib import Path

import pytest

gradio = pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")

import dialeval  # noqa: E402
from dialeval import registry  # noqa: E402
from dialeval.registry import describe  # noqa: E402

APP = Path(__file__).resolve().parents[1] / "spaces" / "dialeval-demo" / "app.py"
CONTEXT = ["Hi! How was your weekend?"]
RESPONSE = "Great, I went hiking in the mountains with my sister."
REFERENCES = ["It was lovely, I went for a long walk in the hills."]
COLUMNS = ("metric", "score", "value", "range", "direction", "refers to", "meaning")


def load_app():
    """The demo's module (registered in ``sys.modules``, where its dataclasses look up their types)."""
    spec = importlib.util.spec_from_file_location("dialeval_demo_app", APP)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def app():
    return load_app()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def client(app):
    port = free_port()
    demo = app.build_demo()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
    demo.close()


def label_of(app, metric: str) -> str:
    """The demo's (first) choice label of runner ``metric``."""
    return next(label for label, (name, _choice) in app.CHOICES.items() if name == metric)


def scored(client, app, metric: str, references: list[str] = REFERENCES) -> dict[str, dict]:
    """The demo's rows for ``metric`` on the test conversation, by score name, as column dicts."""
    out, _plot, _readings = client.predict("\n".join(CONTEXT + [RESPONSE]), "\n".join(references),
                                           [label_of(app, metric)], api_name="/score")
    assert out["headers"] == list(COLUMNS)
    return {row[1]: dict(zip(COLUMNS, row)) for row in out["data"]}


def test_demo_offers_every_registered_metric(app):
    """Each metric's declared choices, or one with the runner's defaults (combined declares none)."""
    assert list(dict.fromkeys(name for name, _choice in app.CHOICES.values())) == list(registry.METRICS)
    label = label_of(app, "combined")
    assert label.startswith("combined (the mean percentile among human replies")
    assert app.CHOICES[label][1].options == {}


def test_demo_reads_percentiles_and_flags(app):
    """GRADE's score as its percentile among the stored human replies (the chart's data and the line
    under it); a repetitive response flagged; a metric without a human reference left out of the chart."""
    from dialeval.scoring.human_reference import load_reference

    rows, plot, readings = app.score_conversation("\n".join(CONTEXT + [RESPONSE]), "\n".join(REFERENCES),
                                                  [label_of(app, "grade"), label_of(app, "multiref")])
    value = next(row[2] for row in rows if row[:2] == ["grade", "grade"])
    expected = load_reference("grade").percentiles("grade", [value])[0]
    assert list(plot.columns) == ["score", "percentile"]
    assert plot.values.tolist() == [["grade: grade", pytest.approx(expected, abs=0.5)]]  # the row shows 4 digits
    assert f"**grade: grade**: {app.ordinal(plot['percentile'][0])} percentile of human replies" in readings
    assert "Flagged" not in readings
    assert f"**grade**: flagged 0, grade_unflagged {value:.4g}, grade_percentile {expected:.4g}" in readings
    assert "**multiref**: flagged 0" in readings
    rows, plot, readings = app.score_conversation("Hi!\nyes yes yes yes yes yes", "", [label_of(app, "grade")])
    # a flagged reply: GRADE's 0 and the 0th percentile, read from its flag (tests/test_percentiles.py checks the
    # flag decides it where the value alone would tie floored human replies)
    assert plot.values.tolist() == [["grade: grade", 0.0]]
    assert "**Flagged as degenerate**: repetitive" in readings
    assert "**grade**: flagged 1, grade_unflagged -, grade_percentile 0" in readings


def test_the_chart_axis_is_0_to_100_in_every_update(app, monkeypatch):
    """Equal percentiles (every one 0 for a degenerate reply) are drawn on the whole 0-100 axis: the
    page's update carries the axis itself, not only the component it replaces."""
    import pandas as pd

    flat = pd.DataFrame([("grade: grade", 0.0), ("fed: turn_overall", 0.0)], columns=app.PLOT_COLUMNS)
    monkeypatch.setattr(app, "score_conversation", lambda *args: ([], flat, ""))
    _rows, update, _text = app.score_page("Hi!\n", "", ["x"])
    assert update.y_lim == [0, 100] and update.value["data"] == [["grade: grade", 0.0], ["fed: turn_overall", 0.0]]


def test_demo_scores_equal_the_evaluate_module(app, client):
    out, _plot, _readings = client.predict("Hi!\nHello, how is your day?", "fine, thanks.\nmy day is good",
                                           [label_of(app, "multiref")], api_name="/score")
    rows = {row[1]: dict(zip(COLUMNS, row)) for row in out["data"]}
    expected = dialeval.load("multiref").compute(
        predictions=["Hello, how is your day?"], references=[["fine, thanks.", "my day is good"]])
    for name in ("bleu1", "bleu2", "meteor", "rougeL", "greedy_matching"):
        assert rows[name]["value"] == round(expected[name], 4)
        assert rows[name]["refers to"] == "response vs. references"
    assert rows["bleu1"]["range"] == "0 to 1"
    assert rows["greedy_matching"]["range"] == "-1 to 1"


def test_demo_grade_equals_the_evaluate_module(app, client):
    rows = scored(client, app, "grade")
    expected = dialeval.load("grade").compute(contexts=[CONTEXT], responses=[RESPONSE])
    assert list(rows) == ["grade"]
    assert rows["grade"]["value"] == round(expected["grade"], 4)
    assert (rows["grade"]["range"], rows["grade"]["direction"]) == ("0 to 1", "higher = better")


def test_demo_ssrem_equals_the_evaluate_module_with_stored_scaling(app, client):
    """The model's stored min-max: a one-item set's own min-max maps any response to 0.5."""
    rows = scored(client, app, "ssrem")
    ssrem = dialeval.load("ssrem")
    expected = ssrem.compute(contexts=[CONTEXT], responses=[RESPONSE], references=[REFERENCES], scaling="model")
    one_item_set = ssrem.compute(contexts=[CONTEXT], responses=[RESPONSE], references=[REFERENCES], scaling="set")
    assert app.CHOICES[label_of(app, "ssrem")][1].options == {"scaling": "model"}
    assert one_item_set["ssrem"] == 0.5
    assert list(rows) == ["ssrem", "ssrem_f", "ssrem_g"]
    for name in rows:
        assert rows[name]["value"] == round(expected[name], 4)
    assert rows["ssrem_f"]["range"] == "-1000 or more (clipped at the floor -1000), raw"  # v(c)^T M v(r), no tanh
    assert rows["ssrem_g"]["refers to"] == "response vs. references"


def test_demo_says_ssrem_needs_references(app, client):
    rows = scored(client, app, "ssrem", references=[])
    assert list(rows) == ["-"]
    assert rows["-"]["meaning"] == "not scored: ssrem needs reference responses (paste at least one)"


def test_demo_offers_ssrem_without_references(app):
    """SSREM's context fit ssrem_f alone (reference_free=True): no references needed, the evaluate
    module's value, and its percentile among the stored human replies."""
    from dialeval.scoring.human_reference import load_reference

    label = next(label for label, (name, choice) in app.CHOICES.items()
                 if name == "ssrem" and choice.options.get("reference_free"))
    assert app.CHOICES[label][1].needs == ("context",)
    rows, plot, readings = app.score_conversation("\n".join(CONTEXT + [RESPONSE]), "", [label])
    expected = dialeval.load("ssrem").compute(contexts=[CONTEXT], responses=[RESPONSE], reference_free=True)
    assert [row[:3] for row in rows] == [["ssrem", "ssrem_f", round(expected["ssrem_f"], 4)]]
    assert rows[0][5] == "response given the context"
    percentile = load_reference("ssrem", {"reference_free": True}).percentiles("ssrem_f", [expected["ssrem_f"]])[0]
    assert plot.values.tolist() == [["ssrem: ssrem_f", pytest.approx(percentile, abs=1e-9)]]
    assert f"**ssrem: ssrem_f**: {app.ordinal(percentile)} percentile of human replies" in readings
    rows, _plot, _readings = app.score_conversation(RESPONSE, "", [label])  # no context
    assert rows[0][6] == "not scored: ssrem needs a context turn (at least two lines: the context, then the response)"


@pytest.mark.slow
def test_every_row_shows_range_direction_and_meaning_from_scales(app):
    """All choices at once (FED, FULL and holistic load their LMs here); raw FED values say so."""
    item = "\n".join(CONTEXT + [RESPONSE])
    rows, _plot, _readings = app.score_conversation(item, "\n".join(REFERENCES), list(app.CHOICES))
    by_metric = {row[0] for row in rows}
    assert by_metric == set(registry.METRICS)
    for metric, score, _value, shown_range, direction, _refers, meaning in rows:
        scale = describe(metric, score)
        assert shown_range == (f"{scale.range_text()}, raw" if scale.raw else scale.range_text())
        assert direction == scale.direction_text()
        assert meaning == scale.meaning
    named = {row[1]: row for row in rows}
    assert named["turn_interesting"][3] == "-1000 or more (clipped at the floor -1000), raw"
    assert named["dialog_overall"][4] == "higher = better"
    assert named["fluency"][5] == "response alone (no context)"
    assert "without the context" in named["fluency"][6]


def test_demo_names_what_is_missing(app):
    with pytest.raises(gradio.Error, match="Paste a conversation"):
        app.score_conversation("  \n ", "", list(app.CHOICES)[:1])
    with pytest.raises(gradio.Error, match="at least one metric"):
        app.score_conversation("Hi!\nHello", "", [])
    rows, _plot, _readings = app.score_conversation("Hi!\nHello", "", [label_of(app, "multiref")])  # no references
    assert rows[0][1] == "-"
    assert rows[0][6] == "not scored: multiref needs reference responses (paste at least one)"
    rows, _plot, _readings = app.score_conversation("Hello", "", [label_of(app, "ssrem")])  # no context, no references
    assert rows[0][6] == ("not scored: ssrem needs a context turn (at least two lines: the context, then the "
                          "response) and reference responses (paste at least one)")
