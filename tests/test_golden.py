"""Behaviour pinned across refactors (issue 17): the scores and signatures of ``dialeval examples``
(every metric's runner with the bundled weights), the CLI's commands and flags, and a paper
benchmark's output, as they were before the metrics moved into their sub-packages.

The files in ``tests/golden/`` were written by the commit before that move (``dialeval examples
--json``, ``dialeval <command> --help``, ``dialeval benchmark --metric multiref --dataset
multiref-mturk --json``); a retrained bundled folder rewrites the entries of the metrics that load
it, and only those (``examples.json``'s ``grade`` and ``combined`` after GRADE's mpnet retrain,
issue 18). Scores may differ by float32 noise between CPUs and library builds
(relative 1e-4 on summed log-likelihoods; absolute 2e-5 on scores near zero that are differences
of log-likelihoods, FED's and holistic coherence's: 5e-6 seen between the CPU that wrote the files and
an AMD EPYC), never more; signatures and CLI text must be identical.
"""

import json
from pathlib import Path

import pytest

from dialeval.cli import main

GOLDEN = Path(__file__).resolve().parent / "golden"
RELATIVE, ABSOLUTE = 1e-4, 2e-5
HELP_COMMANDS = ("", "score", "benchmark", "merge", "examples", "register", "augment", "publish", "compare",
                 "install-bases", "behaviour")


def cli_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def assert_close(found, expected, where: str = "") -> None:
    """Equal structure and strings; numbers within the float32 noise of RELATIVE / ABSOLUTE."""
    if isinstance(expected, dict):
        assert isinstance(found, dict) and found.keys() == expected.keys(), where
        for key in expected:
            assert_close(found[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(found, list) and len(found) == len(expected), where
        for i, (a, b) in enumerate(zip(found, expected)):
            assert_close(a, b, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert found == pytest.approx(expected, rel=RELATIVE, abs=ABSOLUTE, nan_ok=True), where
    else:
        assert found == expected, where


def test_cli_help_is_unchanged(capsys):
    expected = (GOLDEN / "cli_help.txt").read_text(encoding="utf-8")
    found = []
    for command in HELP_COMMANDS:
        found.append(f"== dialeval {command}")
        with pytest.raises(SystemExit) as done:
            main([command, "--help"] if command else ["--help"])
        assert done.value.code == 0
        found.append(capsys.readouterr().out.rstrip("\n"))
    assert "\n".join(found) + "\n" == expected


@pytest.mark.slow
def test_examples_scores_and_signatures_are_unchanged(capsys):
    found = cli_json(capsys, "examples", "--json")
    assert_close(found, json.loads((GOLDEN / "examples.json").read_text(encoding="utf-8")), "examples")


@pytest.mark.slow
def test_multiref_table4_benchmark_is_unchanged(capsys):
    found = cli_json(capsys, "benchmark", "--metric", "multiref", "--dataset", "multiref-mturk", "--json")
    assert_close(found, json.loads((GOLDEN / "benchmark-multiref-mturk.json").read_text(encoding="utf-8")), "mturk")


def test_the_comparison_catches_a_changed_score():
    with pytest.raises(AssertionError):
        assert_close({"a": [0.5, 0.25]}, {"a": [0.5, 0.2501]})
    with pytest.raises(AssertionError):
        assert_close({"signature": "metric:x|version:1"}, {"signature": "metric:x|version:2"})
