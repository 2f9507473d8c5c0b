"""Generated blocks in hand-written Markdown: the text between an HTML-comment pair such as
``<!-- metaeval:start -->`` / ``<!-- metaeval:end -->`` is rewritten by a command (the grid's table
in the README, the behavioural suite's paragraphs in the metric cards), the rest is left alone."""

from __future__ import annotations

from pathlib import Path


def markers(name: str) -> tuple[str, str]:
    """The ``<!-- name:start -->`` and ``<!-- name:end -->`` comments of block ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def check_marked(path: str | Path, name: str) -> str:
    """The text of ``path``; ``FileNotFoundError`` when it is missing, ``ValueError`` when it lacks
    the block ``name``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    start, end = markers(name)
    if start not in text or end not in text:
        raise ValueError(f"{path}: no {start} ... {end} block to put the generated text in")
    return text


def write_marked(path: str | Path, name: str, content: str) -> Path:
    """Replace the block ``name`` of ``path`` by ``content`` (:func:`check_marked` first)."""
    path = Path(path)
    start, end = markers(name)
    head, rest = check_marked(path, name).split(start, 1)
    path.write_text(f"{head}{start}\n{content}\n{end}{rest.split(end, 1)[1]}", encoding="utf-8")
    return path
