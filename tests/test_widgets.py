"""dialeval.modules.widget: the parsing of its input boxes, and every metrics/<name>/app.py started headless in
a subprocess and called with gradio_client, its scores equal to the evaluate module's."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

gradio = pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")

import datasets  # noqa: E402

import dialeval  # noqa: E402
from dialeval import registry  # noqa: E402
from dialeval.modules.inputs import STRING  # noqa: E402
from dialeval.modules.inputs import STRINGS  # noqa: E402
from dialeval.modules.inputs import feature_kind  # noqa: E402
from dialeval.modules.inputs import input_kinds  # noqa: E402
from dialeval.modules.widget import build_widget  # noqa: E402
from dialeval.modules.widget import card_example  # noqa: E402
from dialeval.modules.widget import parse_inputs  # noqa: E402
from dialeval.modules.widget import parse_options  # noqa: E402
from float_noise import approx  # noqa: E402
from module_examples import app_config  # noqa: E402
from module_examples import example_call  # noqa: E402

METRICS = Path(__file__).resolve().parents[1] / "metrics"
START_TIMEOUT = 180  # seconds for an app to import gradio, torch and evaluate and open its port

_TEXT = datasets.Value("string")
_TEXTS = datasets.Sequence(datasets.Value("string"))
MULTIREF_KINDS = input_kinds([
    datasets.Features({"predictions": _TEXT, "references": _TEXTS}),
    datasets.Features({"predictions": _TEXT, "references": _TEXT}),
])

def test_input_kinds_come_from_every_alternative_of_the_features():
    assert MULTIREF_KINDS == {"predictions": [STRING], "references": [STRINGS, STRING]}
    assert input_kinds(datasets.Features({"conversations": _TEXTS})) == {"conversations": [STRINGS]}
    with pytest.raises(TypeError, match="string and list-of-string features"):
        feature_kind(datasets.Value("float32"))


def test_parse_inputs_gives_the_types_compute_takes():
    texts = ['["i am fine .", "ok"]', '[["fine , thanks .", "good ."], "not bad ."]']
    assert parse_inputs(MULTIREF_KINDS, texts) == {
        "predictions": ["i am fine .", "ok"],
        "references": [["fine , thanks .", "good ."], "not bad ."],
    }
    assert parse_options("", ["predictions"]) == {}
    assert parse_options(' {"tooling": "dialeval", "rouge_beta": 1.0} ', ["predictions"]) == {
        "tooling": "dialeval", "rouge_beta": 1.0}


@pytest.mark.parametrize("texts, message", [
    (["['i am fine .']", '["fine ."]'], r"predictions is not valid JSON \(Expecting value"),
    (["  ", '["fine ."]'], "predictions is empty"),
    (['"i am fine ."', '["fine ."]'], "predictions must be a non-empty JSON list, one entry per item, each a string"),
    (["[]", "[]"], "predictions must be a non-empty JSON list"),
    (['["a", "b"]', '["fine .", 7]'], "references: item 1 must be a list of strings or a string, not 7"),
    (['["a"]', '[["fine .", null]]'],
     r'references: item 0 must be a list of strings or a string, not \["fine \.", null\]'),
    (['["a", "b"]', '["fine ."]'],
     r"every input needs the same number of items, not \{'predictions': 2, 'references': 1\}"),
])
def test_parse_inputs_names_the_problem(texts, message):
    with pytest.raises(ValueError, match=message):
        parse_inputs(MULTIREF_KINDS, texts)


@pytest.mark.parametrize("text, message", [
    ('["tooling"]', "options must be a JSON object of compute"),
    ("{tooling: 1}", "options is not valid JSON"),
    ('{"references": ["x"]}', "options: give references in its own box"),
])
def test_parse_options_names_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_options(text, ["predictions", "references"])


CARD = '''
Text, then code that is not Python: `m.compute(predictions=["no"])`.
```python
import evaluate
quality = evaluate.load("dialeval/multiref")
quality.compute(predictions=vars, references=[["x"]])          # not literal: skipped
print(quality.compute(predictions=["a ."], references=[["b .", "c ."]], tooling="dialeval", word_vectors=path))
diversity = evaluate.load("dialeval/multiref", config_name="diversity")
diversity.compute(predictions=[["a .", "b ."]], references=[["c ."]])
```
'''


def test_card_example_is_the_first_literal_compute_call_of_the_configuration():
    assert card_example(CARD, "default", ["predictions", "references"]) == {
        "predictions": ["a ."], "references": [["b .", "c ."]], "tooling": "dialeval"}
    assert card_example(CARD, "diversity", ["predictions", "references"]) == {
        "predictions": [["a .", "b ."]], "references": [["c ."]]}
    assert card_example(CARD, "coherence", ["queries", "responses"]) == {}
    assert card_example("no code here", "default", ["predictions"]) == {}


def boxes_of(widget: gradio.Blocks) -> dict:
    return {block.label: block.value for block in widget.blocks.values() if isinstance(block, gradio.Textbox)}


def test_widget_shows_the_card_title_and_prefills_its_example():
    fluency = build_widget(dialeval.load("holistic", "fluency"))
    assert fluency.title == "Holistic dialogue evaluation: fluency"
    assert boxes_of(fluency) == {"responses": '["Yes, mostly science fiction.", ""]', "options": ""}
    fed = build_widget(dialeval.load("fed"))
    assert fed.title == "FED"
    assert boxes_of(fed) == {
        "conversations": '[["Hi!", "Hello, how is your day?", "Pretty good, I played some tennis."]]',
        "options": '{"level": "both", "model": "dialeval/gemma3-dialogue"}',
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(process: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the app exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"the app did not open port {port} within {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def modules_cache(tmp_path_factory) -> Path:
    """evaluate's module cache with this checkout's scripts registered (``dialeval register``), so the
    apps load the current modules, never a copy an earlier install left in the user's cache. In a
    process of its own: evaluate imports its module cache as a package, one per process."""
    cache = tmp_path_factory.mktemp("hf_modules")
    subprocess.run([sys.executable, "-m", "dialeval.cli", "register"], check=True, capture_output=True,
                   env={**os.environ, "HF_MODULES_CACHE": str(cache)})
    return cache


@contextmanager
def started_app(name: str, workdir: Path, modules: Path):
    """Start metrics/<name>/app.py in its own process group; yield (process, port, log); kill the
    group (the app and any child, e.g. METEOR's JVM) on exit."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_SERVER_NAME": "127.0.0.1", "HF_MODULES_CACHE": str(modules),
           "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    log = workdir / f"{name}.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, str(METRICS / name / "app.py")], cwd=workdir, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process, port, log
    finally:
        if process.poll() is None:  # an app that failed to start has exited already
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize("name", registry.METRICS)
def test_app_scores_equal_the_evaluate_module(name, tmp_path, modules_cache):
    """The module's docstring example (tests/module_examples.py) on the configuration its app loads."""
    config = app_config(name)
    module = dialeval.load(name, config)
    example = example_call(name, config)
    inputs = {key: value for key, value in example.items() if key in input_kinds(module.features)}
    options = {key: value for key, value in example.items() if key not in inputs}
    boxes = {input_name: json.dumps(value) for input_name, value in inputs.items()}
    with started_app(name, tmp_path, modules_cache) as (process, port, log):
        # Scored here while the app starts: the two overlap on the machine's cores.
        expected = module.compute(**inputs, **options)
        wait_for_port(process, port, log)
        client = gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
        result = client.predict(**boxes, options=json.dumps(options), api_name="/compute")
        first = next(iter(inputs))
        with pytest.raises(gradio_client.exceptions.AppError, match=f"{first} is not valid JSON"):
            client.predict(**{**boxes, first: "[\"unclosed"}, options="", api_name="/compute")
        with pytest.raises(gradio_client.exceptions.AppError, match="no_such_option"):
            client.predict(**boxes, options='{"no_such_option": 1}', api_name="/compute")
    # the same scores, up to float32 noise (two processes may sum in another order); strings equal
    assert result.keys() == expected.keys()
    for key, value in expected.items():
        numeric = isinstance(value, float) or (isinstance(value, list) and value and isinstance(value[0], float))
        assert result[key] == (approx(value) if numeric else value), key


def test_module_card_falls_back_to_the_shipped_card_when_the_copied_module_lost_its_origin(tmp_path, monkeypatch):
    """evaluate reuses a cached copy by content hash; its origin (a removed checkout) may be gone."""
    import importlib.util

    from dialeval.modules.widget import module_card

    script = tmp_path / "holistic.py"
    script.write_text("class Module:\n    pass\n")
    (tmp_path / "holistic.json").write_text(json.dumps({"original file path": str(tmp_path / "gone" / "holistic.py")}))
    spec = importlib.util.spec_from_file_location("cached_holistic", script)
    cached = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "cached_holistic", cached)
    spec.loader.exec_module(cached)
    card = module_card(cached.Module())
    assert card == Path(dialeval.__file__).resolve().parents[1] / "metrics" / "holistic" / "README.md"
    assert card.read_text(encoding="utf-8").startswith("---\ntitle: Holistic dialogue evaluation\n")
