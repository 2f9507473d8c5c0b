"""Fixtures shared by several test files: what costs minutes is computed once per session."""

import contextlib
import io
import json

import pytest


@pytest.fixture(scope="session")
def checkout_examples() -> dict:
    """``dialeval examples --json`` of this checkout (every metric with the bundled weights), run once per
    session in this process for the tests that compare it: the golden scores (tests/test_golden.py)
    and the installed wheel's (tests/test_wheel.py). Read it, never change it."""
    from dialeval.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["examples", "--json"]) == 0
    return json.loads(out.getvalue())
