"""Behaviour pinned across refactors (issue 17): the scores and signatures of ``dialeval examples``
(every metric's runner with the bundled weights), the CLI's commands and flags, and a paper
benchmark's output, as they were before the metrics moved into their sub-packages.

The files in ``tests/golden/`` were written by the commit before that move (``dialeval examples
--json``, ``dialeval <command> --help``, ``dialeval benchmark --metric multiref --dataset
multiref-mturk --json``); a retrained bundled folder rewrites the entries of the metrics that load
it, and only those (``examples.json``'s ``grade`` and ``combined`` after GRADE's mpnet retrain,
issue 18). Scores and correlations may differ by float32 noise between CPUs and library builds
(``tests/float_noise.py``: relative 1e-4 on summed log-likelihoods; absolute 2e-5 on scores near
zero and on correlations; a rank correlation also by two swaps of near-tied scores, ``rank_approx``),
never more; signatures and CLI text must be identical.
"""

import contextlib
import io
import json
from pathlib import Path

import pytest

from dialeval import registry
from dialeval.cli import main
from float_noise import RANK_STEP, approx, rank_approx

GOLDEN = Path(__file__).resolve().parent / "golden"
HELP_COMMANDS = ("", "score", "benchmark", "merge", "examples", "register", "augment", "publish", "compare",
                 "install-bases", "behaviour")


def cli_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def assert_close(found, expected, where: str = "") -> None:
    """Equal structure and strings; numbers within float32 noise (:func:`float_noise.approx`), a rank
    correlation and its p-value beside their ``n`` within a few swaps of near ties (:func:`float_noise.rank_approx`)."""
    if isinstance(expected, dict):
        assert isinstance(found, dict) and found.keys() == expected.keys(), where
        for key in expected:
            statistic = key.removesuffix("_p")
            if statistic in RANK_STEP and isinstance(expected.get("n"), int) and isinstance(expected[key], float):
                assert found[key] == rank_approx(expected[key], expected["n"], statistic, key.endswith("_p")), \
                    f"{where}.{key}"
                continue
            assert_close(found[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(found, list) and len(found) == len(expected), where
        for i, (a, b) in enumerate(zip(found, expected)):
            assert_close(a, b, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert found == approx(expected), where
    else:
        assert found == expected, where


def cli_help() -> str:
    """Every command's ``--help``, each under ``== dialeval <command>``: ``tests/golden/cli_help.txt``."""
    found = []
    for command in HELP_COMMANDS:
        found.append(f"== dialeval {command}")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
            main([command, "--help"] if command else ["--help"])
        assert done.value.code == 0
        found.append(out.getvalue().rstrip("\n"))
    return "\n".join(found) + "\n"


def test_cli_help_is_unchanged():
    """After a change of the CLI (a new metric's ``--metric`` choice): ``python tests/test_golden.py``
    (:func:`write_golden`)."""
    assert cli_help() == (GOLDEN / "cli_help.txt").read_text(encoding="utf-8")


@pytest.mark.slow
def test_examples_scores_and_signatures_are_unchanged(checkout_examples):
    """``dialeval examples --json`` (run once per session: tests/conftest.py) against the golden file."""
    assert_close(checkout_examples, json.loads((GOLDEN / "examples.json").read_text(encoding="utf-8")), "examples")


@pytest.mark.slow
def test_multiref_table4_benchmark_is_unchanged(capsys):
    found = cli_json(capsys, "benchmark", "--metric", "multiref", "--dataset", "multiref-mturk", "--json")
    assert_close(found, json.loads((GOLDEN / "benchmark-multiref-mturk.json").read_text(encoding="utf-8")), "mturk")


def test_the_comparison_catches_a_changed_score():
    with pytest.raises(AssertionError):
        assert_close({"a": [0.5, 0.25]}, {"a": [0.5, 0.2501]})
    with pytest.raises(AssertionError):  # a correlation that moved by 1e-4
        assert_close({"pearson": 0.16348680164587469}, {"pearson": 0.16338680164587469})
    with pytest.raises(AssertionError):  # a Spearman over 500 scores moved by more than two swaps of near ties
        assert_close({"spearman": 0.0901258, "n": 500}, {"spearman": 0.0899258, "n": 500})


def test_the_comparison_accepts_float32_noise_seen_between_cpus():
    """A multiref-mturk Pearson computed on another machine (issue 30), a FED score near zero (an
    AMD EPYC), a summed log-likelihood, a Spearman and its p-value one swap of near ties apart."""
    assert_close({"pearson": 0.16338777846939}, {"pearson": 0.16338680164587469})
    assert_close({"fed": [-0.0001234, -312.5 * (1 + 5e-5)]}, {"fed": [-0.0001284, -312.5]})
    # one swap of near-tied multiref-mturk scores on an AVX-512 EPYC (float_noise.rank_approx)
    assert_close({"spearman": 0.08996733656800783, "spearman_p": 0.044349241112767515, "n": 500},
                 {"spearman": 0.08992582882490847, "spearman_p": 0.04444776610382304, "n": 500})
    with pytest.raises(AssertionError):
        assert_close({"signature": "metric:x|version:1"}, {"signature": "metric:x|version:2"})


def write_golden() -> None:
    """After adding a metric: rewrites ``cli_help.txt`` and adds to ``examples.json`` the entries of
    the registered metrics it lacks (``dialeval examples --metrics <new> --json``), keeping the others
    as pinned; after ``dialeval examples --json`` gained a field (issue 54: ``flags``, ``percentiles``,
    ``summary``), adds that field to every pinned entry from a run, keeping the pinned fields.
    ``python tests/test_golden.py`` runs it."""
    (GOLDEN / "cli_help.txt").write_text(cli_help(), encoding="utf-8")
    path = GOLDEN / "examples.json"
    pinned = json.loads(path.read_text(encoding="utf-8"))
    fields = {key for entry in pinned.values() for key in entry}
    # a metric whose entry lacks a field of the current output is run again too (only its new fields are kept)
    probe = io.StringIO()
    with contextlib.redirect_stdout(probe):
        assert main(["examples", "--metrics", "multiref", "--json"]) == 0
    current = set(json.loads(probe.getvalue())["multiref"])
    stale = [metric for metric in registry.METRICS if metric not in pinned or current - set(pinned[metric])]
    if stale:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["examples", "--metrics", *stale, "--json"]) == 0
        for metric, entry in json.loads(out.getvalue()).items():
            kept = pinned.get(metric, {})
            pinned[metric] = {**entry, **{key: value for key, value in kept.items() if key in fields}}
        path.write_text(json.dumps(pinned, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_golden()
