"""CLI user errors end in one line, never a traceback, and are caught before any scoring
(issue 23, items 4-5): output paths, Ctrl-C, strict JSON output with per-item flags."""

import json

import pytest

from dialeval.scoring import runners
from dialeval.cli import main

ITEMS = [{"context": ["Hi"], "response": "Hello there, nice to see you.", "references": ["Hi!"]},
         {"context": ["Hi"], "response": "", "references": ["Hi!"]}]


def write_items(path, items=ITEMS):
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    return path


@pytest.fixture()
def never_scored(monkeypatch):
    """A runner that fails the test if the CLI scores anything before refusing the output."""
    def runner(items, **options):
        raise AssertionError("scored before the output path was checked")
    monkeypatch.setitem(runners.RUNNERS, "multiref", runner)


@pytest.mark.parametrize("output, message", [
    ("{tmp}", "{tmp}: is a directory"),
    ("{tmp}/missing/out.jsonl", "{tmp}/missing/out.jsonl: the folder {tmp}/missing does not exist"),
])
def test_score_refuses_a_bad_output_before_scoring(tmp_path, capsys, never_scored, output, message):
    source = write_items(tmp_path / "in.jsonl")
    given = output.format(tmp=tmp_path)
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", given]) == 2
    err = capsys.readouterr().err
    assert err == f"dialeval: error: {message.format(tmp=tmp_path)}; " + err.split("; ", 1)[1]
    assert err.count("\n") == 1


@pytest.mark.parametrize("output", ["/dev/full", "/dev/stdout"])
def test_score_refuses_a_device_before_scoring(tmp_path, capsys, never_scored, output):
    """/dev/full, read back as the "existing output" to resume, never ends (it grew to 10 GB);
    /dev/stdout was written garbled and /dev/stdout.meta.json created."""
    source = write_items(tmp_path / "in.jsonl")
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", output]) == 2
    assert capsys.readouterr().err.startswith(f"dialeval: error: {output}: not a regular file")


def test_the_input_is_never_overwritten(tmp_path, capsys, never_scored):
    source = write_items(tmp_path / "in.jsonl")
    before = source.read_text()
    for flags in ([], ["--overwrite"]):
        assert main(["score", "--metric", "multiref", "--input", str(source), "--output", str(source), *flags]) == 2
        assert f"{source}: is the input file" in capsys.readouterr().err
    assert source.read_text() == before


def test_score_streams_to_standard_output(tmp_path, capsys, monkeypatch):
    """``--output -``: the lines a file would hold, on stdout; no meta file, nothing to resume."""
    monkeypatch.setitem(runners.RUNNERS, "multiref", lambda items, **o: ({"x": [0.5] * len(items)}, "metric:fake"))
    monkeypatch.chdir(tmp_path)
    source = write_items(tmp_path / "in.jsonl")
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", str(tmp_path / "f.jsonl")]) == 0
    capsys.readouterr()
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", "-"]) == 0
    streamed = capsys.readouterr()
    assert streamed.out == (tmp_path / "f.jsonl").read_text()
    assert "wrote 2 lines to standard output" in streamed.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.jsonl", "f.jsonl.meta.json", "in.jsonl"]
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", "-", "--num-shards", "2",
                 "--shard-index", "0"]) == 2
    assert "scores in one process" in capsys.readouterr().err


def test_every_output_location_is_checked_before_scoring(tmp_path, capsys, monkeypatch, never_scored):
    """benchmark --all --output-dir naming a file failed only after scoring the whole grid."""
    def no_grid(*args, **kwargs):
        raise AssertionError("scored before the output folder was checked")

    monkeypatch.setattr("dialeval.metaeval.grid.run_grid", no_grid)
    source = write_items(tmp_path / "in.jsonl")
    commands = {
        "benchmark --all": ["benchmark", "--all", "--output-dir", str(source)],
        "benchmark --save": ["benchmark", "--metric", "multiref", "--dataset", str(source), "--save", "/dev/full"],
        "compare --save": ["compare", "--metric", "multiref", str(source), str(source), "--save", str(source)],
        "compare --plot": ["compare", "--metric", "multiref", str(source), str(source), "--plot", "/dev/full"],
        "merge": ["merge", "--output", str(source), str(source)],
    }
    for name, argv in commands.items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("dialeval: error: ") and err.count("\n") == 1, (name, err)
        assert any(reason in err for reason in ("is a file, not a folder", "not a regular file", "is the input file")), err


def test_ctrl_c_says_what_was_saved_in_one_line(tmp_path, capsys, monkeypatch):
    calls = []

    def interrupted_on_second_chunk(items, **options):
        calls.append(len(items))
        if len(calls) > 1:
            raise KeyboardInterrupt
        return {"x": [0.5] * len(items)}, "metric:fake"

    monkeypatch.setitem(runners.RUNNERS, "multiref", interrupted_on_second_chunk)
    source = write_items(tmp_path / "in.jsonl", ITEMS * 4)
    out = tmp_path / "out.jsonl"
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", str(out),
                 "--chunk-size", "4"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"dialeval: interrupted: 4 lines saved in {out}; rerun the same command to resume"
    assert len(out.read_text().splitlines()) == 4


def test_score_lines_are_strict_json_with_flags(tmp_path, monkeypatch):
    """A runner that returns a plain ``(per_item, signature)`` pair sets no flags of its own: the
    lines carry the checks every metric applies (``response_flags``)."""
    monkeypatch.setitem(runners.RUNNERS, "multiref", lambda items, **o: (
        {"x": [0.5, float("nan")]}, "metric:fake"))
    source = write_items(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert "NaN" not in out.read_text()
    records = [json.loads(line) for line in lines]
    assert [r["scores"]["x"] for r in records] == [0.5, None]
    assert [r["flags"] for r in records] == [[], ["empty"]]


def test_score_lines_carry_the_scorers_own_flags(tmp_path):
    """SSREM flags a response of unknown words (``unknown_words``, a check of the scorer, not of
    ``response_flags``); the CLI writes the scorer's flags, not a recomputation."""
    items = [{"context": ["Do you like books?"], "response": r, "references": ["I love reading novels."]}
             for r in ("Yes, mostly novels.", "asdf qwer zxcv")]
    out = tmp_path / "out.jsonl"
    assert main(["score", "--metric", "ssrem", "--input", str(write_items(tmp_path / "in.jsonl", items)),
                 "--output", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["flags"] for r in records] == [[], ["unknown_words"]]
    assert records[1]["scores"]["ssrem"] == 0.0


def test_an_os_error_on_a_user_path_is_one_line(tmp_path, capsys, monkeypatch):
    """A failure only the OS sees (a full disk, a read-only file system while writing): one line
    naming the path, no traceback."""
    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system", str(tmp_path / "out.jsonl"))

    source = write_items(tmp_path / "in.jsonl")
    monkeypatch.setattr("dialeval.cli.score.write_meta", read_only)
    assert main(["score", "--metric", "multiref", "--input", str(source), "--output", str(tmp_path / "out.jsonl")]) == 2
    assert capsys.readouterr().err == f"dialeval: error: {tmp_path / 'out.jsonl'}: Read-only file system\n"


def test_a_metric_subcommand_checks_its_output_like_every_command(tmp_path, capsys):
    """holistic's ``augment`` refuses its own input, a device and a folder as ``--output`` before any work."""
    from dialeval.cli import main

    src = tmp_path / "queries.jsonl"
    src.write_text(json.dumps({"context": ["Do you like books?"]}) + "\n", encoding="utf-8")
    for output, message in ((src, "input"), ("/dev/full", "regular file"), (tmp_path, "directory")):
        assert main(["augment", "--method", "ws", "--input", str(src), "--output", str(output)]) == 2
        assert message in capsys.readouterr().err
    assert src.read_text(encoding="utf-8").count("\n") == 1  # the input is untouched
