"""The Gradio demo (spaces/dialeval-demo), started headless on localhost and called with gradio_client."""

import importlib.util
import socket
from pathlib import Path

import pytest

gradio = pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")

import dialeval  # noqa: E402

APP = Path(__file__).resolve().parents[1] / "spaces" / "dialeval-demo" / "app.py"


@pytest.fixture(scope="module")
def app():
    spec = importlib.util.spec_from_file_location("dialeval_demo_app", APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def client(app):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = app.build_demo()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
    demo.close()


def test_demo_scores_equal_the_evaluate_module(app, client):
    multiref_label = next(label for label in app.CHOICES if label.startswith("multiref"))
    out = client.predict("Hi!\nHello, how is your day?", "fine, thanks.\nmy day is good",
                         [multiref_label], api_name="/score")
    rows = {row[1]: row for row in out["data"]}
    expected = dialeval.load("multiref").compute(
        predictions=["Hello, how is your day?"], references=[["fine, thanks.", "my day is good"]])
    for name in ("bleu1", "bleu2", "meteor", "rougeL", "greedy_matching"):
        assert rows[name][2] == round(expected[name], 4)
        assert rows[name][3] == "response vs. references"
        assert rows[name][4]  # every score has its one-line meaning


def test_demo_names_what_is_missing(app):
    with pytest.raises(gradio.Error, match="Paste a conversation"):
        app.score_conversation("  \n ", "", list(app.CHOICES)[:1])
    with pytest.raises(gradio.Error, match="at least one metric"):
        app.score_conversation("Hi!\nHello", "", [])
    rows = app.score_conversation("Hi!\nHello", "", [next(iter(app.CHOICES))])  # multiref without references
    assert rows[0][1] == "-" and "references" in rows[0][4]
