"""Every evaluate module's docstring example runs as a doctest, with its outputs pinned (evaluate's
``test_metric_common`` pattern): ``evaluate.load("dialeval/<name>")`` loads this checkout's script,
and ``_compute`` names its options (no ``**kwargs``). tests/test_wheel.py runs the same doctests
against the installed wheel, tests/test_widgets.py the same calls through each widget."""

import doctest
import importlib
import inspect

import evaluate
import pytest
from evaluate.loading import evaluation_module_factory, import_main_class

from dialeval import registry
from dialeval.modules import module_dir


LOAD = evaluate.load


def load_here(path: str, config_name: str | None = None, **kwargs):
    """``evaluate.load("dialeval/<name>", ...)`` of this checkout's script (evaluate's own load by path)."""
    return LOAD(str(module_dir(path.removeprefix("dialeval/"))), config_name, **kwargs)


@pytest.mark.parametrize("name", registry.METRICS)
def test_module_example_runs_as_a_doctest(name, monkeypatch, tmp_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))  # combined reads its components through the score cache
    script = importlib.import_module(evaluation_module_factory(str(module_dir(name))).module_path)
    parameters = inspect.signature(import_main_class(script.__name__)._compute).parameters.values()
    assert all(p.kind is not p.VAR_KEYWORD for p in parameters)
    monkeypatch.setattr(evaluate, "load", load_here)
    try:
        results = doctest.testmod(script, optionflags=doctest.ELLIPSIS, raise_on_error=True)
    except doctest.UnexpectedException as error:
        raise error.exc_info[1]
    assert results.failed == 0 and results.attempted > 1
