"""CLI outputs: paths checked before scoring, strict JSON lines (issue 23, items 4-5)."""

import json
import os

import pytest

from dialeval.outputs import check_output_path, json_line


def test_a_writable_path_passes(tmp_path):
    assert check_output_path(tmp_path / "out.jsonl") == tmp_path / "out.jsonl"


def test_a_directory_is_refused_by_the_name_given(tmp_path):
    with pytest.raises(ValueError, match=f"^{tmp_path}: is a directory"):
        check_output_path(str(tmp_path))


def test_a_missing_folder_is_named(tmp_path):
    given = str(tmp_path / "nope" / "out.jsonl")
    with pytest.raises(ValueError, match=f"^{given}: the folder {tmp_path / 'nope'} does not exist"):
        check_output_path(given)


def test_a_folder_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    """As root (CI) every folder is writable, so the OS's answer is replaced by a refusal."""
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    given = str(tmp_path / "out.jsonl")
    with pytest.raises(ValueError, match=f"^{given}: the folder {tmp_path} cannot be written"):
        check_output_path(given)


def test_json_lines_are_strict():
    line = json_line({"scores": {"diversity": float("nan"), "x": float("inf"), "ok": 0.5}, "id": None})
    assert line == '{"scores": {"diversity": null, "x": null, "ok": 0.5}, "id": null}'
    assert json.loads(line)["scores"]["ok"] == 0.5
