"""What ``dialeval score`` resumes and how it chunks (issue 30): an edited input line or another
input file is refused by line number instead of keeping stale scores, and chunks sit at fixed input
positions, so that two runs, a resumed run and merged shards write the same bytes."""

import json
import os
import subprocess
import sys

import pytest

from dialeval.scoring import runners
from dialeval.cli import main
from float_noise import SUM

ROWS = [{"id": f"r{i}", "context": ["how are you ?"], "response": f"fine {i}", "references": ["i am fine ."]}
        for i in range(7)]


def write_rows(path, rows=ROWS):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture()
def chunk_sensitive(monkeypatch):
    """A runner whose scores depend on the chunk an item is scored in (as a batched float32 model's
    last bits do): any change of chunk boundaries shows in the output."""
    seen = []

    def runner(items, **options):
        seen.append([it["id"] for it in items])
        return {"x": [len(items) + k / 10 for k in range(len(items))]}, "metric:chunky"

    monkeypatch.setitem(runners.RUNNERS, "multiref", runner)
    return seen


def score(source, output, *extra):
    return main(["score", "--metric", "multiref", "--input", str(source), "--output", str(output), *extra])


def test_an_edited_line_is_refused_by_its_number(tmp_path, capsys):
    source, out = write_rows(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    args = ["--option", 'metrics=["bleu2"]', "--chunk-size", "2"]
    assert score(source, out, *args) == 0
    before = out.read_text()
    write_rows(source, [ROWS[0], dict(ROWS[1], response="edited"), *ROWS[2:5], dict(ROWS[5], response="x"), ROWS[6]])
    assert score(source, out, *args) == 2
    err = capsys.readouterr().err
    assert f"{source}:2: this line changed since it was scored into {out} (and 1 more: lines 6)" in err
    assert "--overwrite" in err and out.read_text() == before
    assert score(source, out, *args, "--overwrite") == 0
    assert json.loads(out.read_text().splitlines()[1])["scores"] != json.loads(before.splitlines()[1])["scores"]


def test_a_reformatted_line_is_the_same_record(tmp_path, capsys):
    """The hash is of the record's canonical JSON: key order and spacing do not matter."""
    source, out = write_rows(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    assert score(source, out, "--option", 'metrics=["bleu2"]') == 0
    source.write_text("".join(json.dumps(dict(reversed(r.items())), indent=None, separators=(" , ", " : ")) + "\n"
                              for r in ROWS))
    assert score(source, out, "--option", 'metrics=["bleu2"]', "--json") == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["skipped"] == len(ROWS)


def test_another_input_file_is_refused_before_any_line_is_written(tmp_path, capsys):
    source, out = write_rows(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    assert score(source, out, "--option", 'metrics=["bleu2"]') == 0
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:4]))  # interrupted after 4 lines
    other = write_rows(tmp_path / "other.jsonl", [dict(r, context=["what now ?"]) for r in ROWS * 2])
    assert score(other, out, "--option", 'metrics=["bleu2"]') == 2
    assert f"{out}: none of its 4 scored lines matches a record of {other}: another input file?" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 4


def test_a_meta_file_without_hashes_is_refused(tmp_path, capsys):
    """An output of an older dialeval cannot say whether its input changed: start again."""
    source, out = write_rows(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    assert score(source, out, "--option", 'metrics=["bleu2"]') == 0
    meta_file = tmp_path / "out.jsonl.meta.json"
    meta = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({k: v for k, v in meta.items() if k not in ("item_sha256", "chunk_size")}))
    assert score(source, out, "--option", 'metrics=["bleu2"]') == 2
    err = capsys.readouterr().err
    assert "written by an older dialeval that kept no hash of its input lines" in err and "--overwrite" in err


def test_resume_with_another_chunk_size_is_refused(tmp_path, capsys, chunk_sensitive):
    source, out = write_rows(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    assert score(source, out, "--chunk-size", "3") == 0
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:3]))
    assert score(source, out, "--chunk-size", "2") == 2
    assert "scored in chunks of 3 items, this run asks for --chunk-size 2" in capsys.readouterr().err


def test_chunks_do_not_follow_time_or_the_resume_point(tmp_path, chunk_sensitive):
    """Two runs are byte-identical; a run killed in the middle of a chunk resumes at the chunk's start
    and rewrites it whole: the same bytes as an uninterrupted run."""
    source = write_rows(tmp_path / "in.jsonl")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert score(source, first, "--chunk-size", "3") == 0 and score(source, second, "--chunk-size", "3") == 0
    assert first.read_bytes() == second.read_bytes()
    assert chunk_sensitive[:3] == [["r0", "r1", "r2"], ["r3", "r4", "r5"], ["r6"]]
    lines = first.read_text().splitlines(keepends=True)
    second.write_text("".join(lines[:4]) + lines[4][:9])  # killed while writing the second chunk
    chunk_sensitive.clear()
    assert score(source, second, "--chunk-size", "3") == 0
    assert chunk_sensitive == [["r3", "r4", "r5"], ["r6"]]
    assert second.read_bytes() == first.read_bytes()


def test_shards_are_whole_chunks_and_merge_to_the_single_file(tmp_path, chunk_sensitive):
    """Shards + merge: the output and its meta file byte for byte as one process writes them."""
    source = write_rows(tmp_path / "in.jsonl")
    single, sharded = tmp_path / "single.jsonl", tmp_path / "sharded.jsonl"
    assert score(source, single, "--chunk-size", "2") == 0
    for index in (0, 1):
        assert score(source, sharded, "--chunk-size", "2", "--num-shards", "2", "--shard-index", str(index)) == 0
    assert main(["merge", "--output", str(sharded)]) == 0
    assert sharded.read_bytes() == single.read_bytes()
    assert (tmp_path / "sharded.jsonl.meta.json").read_bytes() == (tmp_path / "single.jsonl.meta.json").read_bytes()


def test_merge_refuses_shards_of_different_inputs(tmp_path, capsys, chunk_sensitive):
    source, out = write_rows(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    shard = ["--chunk-size", "2", "--num-shards", "2", "--shard-index"]
    assert score(source, out, *shard, "0") == 0
    write_rows(source, [dict(r, response="changed") for r in ROWS])  # the input changed between the shards
    assert score(source, out, *shard, "1") == 0
    assert main(["merge", "--output", str(out)]) == 2
    assert "was scored with input_sha256" in capsys.readouterr().err
    assert not out.exists()


def _run(*args):
    result = subprocess.run([sys.executable, "-m", "dialeval.cli", *map(str, args)], capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.slow
def test_grade_outputs_are_byte_reproducible_across_processes_and_shards(tmp_path):
    """GRADE scores a chunk in padded float32 batches: with fixed chunks, two processes and two
    shards + merge write the same bytes. Another --chunk-size may change the last float32 bits only."""
    from dialeval.scoring.sharding import shard_path

    texts = ["I love hiking in the hills.", "No.", "My dog is called Rex and he likes long walks.",
             "What do you mean?", "Pizza, always pizza, with extra cheese.", "I work as a nurse at night."]
    source = write_rows(tmp_path / "in.jsonl", [{"context": ["Hi! What do you like to do?"], "response": t}
                                                for t in texts])
    common = ["score", "--metric", "grade", "--input", source, "--chunk-size", "4"]
    for name in ("a", "b"):
        _run(*common, "--output", tmp_path / f"{name}.jsonl")
    sharded = tmp_path / "sharded.jsonl"
    for index in (0, 1):
        _run(*common, "--output", sharded, "--num-shards", 2, "--shard-index", index)
    assert len(shard_path(sharded, 0, 2).read_text().splitlines()) == 4  # one whole chunk each
    _run("merge", "--output", sharded)
    expected = (tmp_path / "a.jsonl").read_bytes()
    assert (tmp_path / "b.jsonl").read_bytes() == expected
    assert sharded.read_bytes() == expected
    _run(*common[:-1], "6", "--output", tmp_path / "c.jsonl")
    one_chunk = [json.loads(line)["scores"]["grade"] for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    chunked = [json.loads(line)["scores"]["grade"] for line in expected.decode().splitlines()]
    assert one_chunk == pytest.approx(chunked, rel=SUM, abs=SUM)
