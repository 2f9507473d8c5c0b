"""The examples in the evaluate modules' docstrings (the Examples of ``_KWARGS_DESCRIPTION`` in
``metrics/<name>/<name>.py``), read without importing the scripts: the calls they make, for the tests
that repeat them elsewhere (the installed wheel, the widgets) and compare the scores."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path
from typing import Any

METRICS_DIR = Path(__file__).resolve().parents[1] / "metrics"


def example_source(name: str) -> str:
    """The Python source of module ``name``'s docstring example (its doctest lines, prompts removed)."""
    tree = ast.parse((METRICS_DIR / name / f"{name}.py").read_text())
    text = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "_KWARGS_DESCRIPTION" for t in node.targets))
    return "".join(example.source for example in doctest.DocTestParser().get_examples(text))


def _is_call_of(node: ast.AST, method: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method


def loaded_configs(source: str) -> dict[str, str | None]:
    """Variable -> configuration (``None``: the default) of every ``var = evaluate.load("dialeval/<name>"
    [, "<config>"])`` in ``source``."""
    return {node.targets[0].id: ast.literal_eval(node.value.args[1]) if len(node.value.args) > 1 else None
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and _is_call_of(node.value, "load")}


def example_calls(name: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(configuration, keyword arguments) of every ``compute`` call of module ``name``'s example, in order."""
    source = example_source(name)
    configs = loaded_configs(source)
    return [(configs[node.func.value.id], {k.arg: ast.literal_eval(k.value) for k in node.keywords})
            for statement in ast.parse(source).body for node in ast.walk(statement)
            if _is_call_of(node, "compute") and isinstance(node.func.value, ast.Name) and node.func.value.id in configs]


def example_call(name: str, config: str | None = None) -> dict[str, Any]:
    """The keyword arguments of the first ``compute`` call of the example on configuration ``config``."""
    return next(kwargs for called, kwargs in example_calls(name) if called == config)


def app_config(name: str) -> str | None:
    """The configuration that ``metrics/<name>/app.py`` loads (``None``: the default)."""
    return next(iter(loaded_configs((METRICS_DIR / name / "app.py").read_text()).values()))
