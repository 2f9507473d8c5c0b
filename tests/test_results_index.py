"""benchmarks/results/README.md names every results file, and each declared correlation run's files are
what its command writes.

The index's tables name files in their first column: backquoted paths relative to benchmarks/results/,
``{a,b}`` and ``*`` as in a shell. A declared run (``Benchmark.runs``, benchmarks/correlations.py)
writes ``NAME.json`` with ``--save`` and ``NAME.txt`` from what the command prints, the benchmark's
rendering of that JSON; a model the run's options name is the model its JSON records.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from dialeval import registry

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
INDEX = RESULTS / "README.md"


def expand(pattern: str) -> list[str]:
    """Shell brace expansion: ``a-{x,y}.{json,txt}`` -> four names."""
    found = re.search(r"\{([^{}]*)\}", pattern)
    if not found:
        return [pattern]
    return [name for alternative in found.group(1).split(",")
            for name in expand(pattern[:found.start()] + alternative + pattern[found.end():])]


def named_patterns(text: str) -> list[str]:
    """Every pattern named in the first column of the markdown tables of ``text``."""
    patterns = []
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            first = line.split("|")[1]
            patterns += [name for token in re.findall(r"`([^`]+)`", first) for name in expand(token)]
    return patterns


def results_files() -> set[str]:
    return {path.relative_to(RESULTS).as_posix() for path in RESULTS.rglob("*") if path.is_file()} - {"README.md"}


def matches(pattern: str) -> set[str]:
    return {path.relative_to(RESULTS).as_posix() for path in RESULTS.glob(pattern) if path.is_file()}


def test_expand_and_named_patterns():
    assert expand("a-{x,y}.{json,txt}") == ["a-x.json", "a-x.txt", "a-y.json", "a-y.txt"]
    table = ("| Files | What |\n|---|---|\n| `p/*.png`, `b.{md,json}` | `not/a/file.py` |\n"
             "text `c.md` outside a table\n")
    assert named_patterns(table) == ["p/*.png", "b.md", "b.json"]


def test_every_name_in_the_index_is_a_file():
    missing = [pattern for pattern in named_patterns(INDEX.read_text(encoding="utf-8")) if not matches(pattern)]
    assert not missing, f"benchmarks/results/README.md names files that do not exist: {missing}"


def test_every_results_file_is_in_the_index():
    named = set().union(*(matches(pattern) for pattern in named_patterns(INDEX.read_text(encoding="utf-8"))))
    unnamed = sorted(results_files() - named)
    assert not unnamed, f"add these to benchmarks/results/README.md: {unnamed}"


def correlations_script():
    """benchmarks/correlations.py as a module."""
    spec = importlib.util.spec_from_file_location("correlations", RESULTS.parent / "correlations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def declared_runs():
    return list(correlations_script().declared_runs())


@pytest.mark.parametrize("run", declared_runs(), ids=lambda run: run.name)
def test_declared_run_files_are_what_its_command_writes(run):
    benchmark = registry.benchmark_of(run.metric, run.dataset)
    result = json.loads((RESULTS / f"{run.name}.json").read_text(encoding="utf-8"))
    printed = (RESULTS / f"{run.name}.txt").read_text(encoding="utf-8")
    assert getattr(importlib.import_module(benchmark.module), benchmark.render)(result) == printed.rstrip("\n")
    for option in ("model", "nli"):
        if option in run.options:
            assert result["model"].split("@")[0] == run.options[option]


def test_list_prints_the_commands_of_full_and_combined_paper_runs(capsys):
    assert correlations_script().main(["--list", "--metrics", "full", "combined"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 8  # combined-loso-source since issue 57
    assert ("full-fed-turn: python -m dialeval.cli benchmark --metric full --dataset fed-turn --option "
            "model=dialeval/smollm2-dialogue --option variant=all --save benchmarks/results/full-fed-turn.json") in printed
    assert ("combined-loso: python -m dialeval.cli benchmark --metric combined --dataset combined-loso --save "
            "benchmarks/results/combined-loso.json") in printed
