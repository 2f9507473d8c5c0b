"""benchmarks/results/README.md names every results file.

The index's tables name files in their first column: backquoted paths relative to benchmarks/results/,
``{a,b}`` and ``*`` as in a shell.
"""

from __future__ import annotations

import re
from pathlib import Path

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

