"""CLI outputs: paths checked before scoring, strict JSON lines (issue 23, items 4-5)."""

import json
import os

import pytest

from dialeval.cli.outputs import check_output_dir, check_output_path, json_line


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


@pytest.mark.parametrize("given", ["/dev/full", "/dev/stdout", "/dev/null", "/proc/self/fd/1"])
def test_devices_and_descriptors_are_refused(given):
    """Read back to resume, /dev/full never ends (it grew to 10 GB); /dev/stdout is not the file written."""
    with pytest.raises(ValueError, match=f"^{given}: not a regular file"):
        check_output_path(given)


def test_a_pipe_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ValueError, match="pipe: not a regular file"):
        check_output_path(tmp_path / "pipe")


def test_standard_output_is_refused_where_a_command_cannot_stream():
    with pytest.raises(ValueError, match="^-: standard output is not an output here"):
        check_output_path("-")


def test_an_input_is_never_an_output(tmp_path):
    """Also through a symbolic or a hard link (``--overwrite`` would have destroyed the input)."""
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(source)
    os.link(source, tmp_path / "hard.jsonl")
    for given in (source, tmp_path / "link.jsonl", tmp_path / "hard.jsonl", tmp_path / "sub" / ".." / "in.jsonl"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(ValueError, match=f"^{given}: is the input file {source}"):
            check_output_path(given, [source])
    assert check_output_path(tmp_path / "out.jsonl", [source]) == tmp_path / "out.jsonl"
    assert check_output_path(tmp_path / "multiref-mturk", ["multiref-mturk"])  # a set's name is no file


def test_an_output_folder_must_be_a_folder(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="file: is a file, not a folder"):
        check_output_dir(tmp_path / "file")
    with pytest.raises(ValueError, match=f"{tmp_path / 'file'} is a file, not a folder"):
        check_output_dir(tmp_path / "file" / "sub")
    assert check_output_dir(tmp_path / "new" / "deeper", ["metaeval.json"]) == tmp_path / "new" / "deeper"
    (tmp_path / "metaeval.json").mkdir()
    with pytest.raises(ValueError, match="metaeval.json: is a directory"):
        check_output_dir(tmp_path, ["metaeval.json"])
