"""Sharded scoring: two CPU processes over one file, merged, equal a single-process run item for item."""

import json
import os
import subprocess
import sys

import pytest

from dialeval.scoring.sharding import find_shards, launcher_shard, merge_shards, shard_path, shard_range

ROWS = [
    {"context": ["how are you ?"], "response": "i am fine , thanks .", "references": ["i am fine , thank you ."]},
    {"context": ["what do you do ?"], "response": "i teach .", "references": ["i am a teacher .", "i teach ."]},
    {"context": ["do you like tea ?"], "response": "", "references": ["yes , i love tea ."]},
    {"context": ["where do you live ?"], "response": "in a town .", "references": ["in a small town ."]},
    {"context": ["any plans ?"], "response": "no .", "references": ["i will go hiking ."]},
]


def test_shard_ranges_cover_the_input_once_in_order():
    for n in (0, 1, 5, 7, 100):
        for shards in (1, 2, 3, 8):
            ranges = [shard_range(n, shards, i) for i in range(shards)]
            assert [k for r in ranges for k in r] == list(range(n))
            assert max(map(len, ranges)) - min(map(len, ranges)) <= 1
    assert list(shard_range(7, 3, 2)) == [4, 5, 6]
    for n, shards, size in ((100, 3, 8), (7, 2, 3), (5, 4, 2), (64, 2, 64)):  # whole chunks of `size`
        ranges = [shard_range(n, shards, i, size) for i in range(shards)]
        assert [k for r in ranges for k in r] == list(range(n))
        assert all(r.start % size == 0 for r in ranges if r)
    assert [list(shard_range(7, 2, i, 3)) for i in (0, 1)] == [[0, 1, 2], [3, 4, 5, 6]]
    assert [len(shard_range(5, 4, i, 2)) for i in range(4)] == [0, 2, 2, 1]  # 3 chunks, 4 shards: one is empty
    for bad in ((5, 0, 0), (5, 2, 2), (5, 2, -1), (5, True, 0)):
        with pytest.raises(ValueError, match="shard"):
            shard_range(*bad)


def test_launcher_environment_picks_the_shard(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert launcher_shard() is None
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    assert launcher_shard() == (4, 3)


def _dialeval(*args, env=None):
    return subprocess.Popen([sys.executable, "-m", "dialeval.cli", *args], env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_merged_equal_one_process(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    single = tmp_path / "single.jsonl"
    sharded = tmp_path / "sharded.jsonl"
    common = ["score", "--metric", "multiref", "--input", str(source), "--option", 'metrics=["bleu2","rougeL"]',
              "--chunk-size", "2"]
    runs = [_dialeval(*common, "--output", str(single))]
    runs += [_dialeval(*common, "--output", str(sharded), "--num-shards", "2", "--shard-index", str(i)) for i in (0, 1)]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    assert find_shards(sharded) == [shard_path(sharded, 0, 2), shard_path(sharded, 1, 2)]
    assert len(shard_path(sharded, 0, 2).read_text().splitlines()) == 2  # items 0-1 of 5: the first of 3 chunks
    merge = _dialeval("merge", "--output", str(sharded))
    assert merge.wait(timeout=120) == 0, merge.stderr.read()
    assert sharded.read_text() == single.read_text()
    merged_meta = json.loads((tmp_path / "sharded.jsonl.meta.json").read_text())
    single_meta = json.loads((tmp_path / "single.jsonl.meta.json").read_text())
    assert merged_meta["signature"] == single_meta["signature"] and merged_meta["items"] == 5


def test_merge_refuses_missing_or_mixed_shards(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "out.jsonl"
    common = ["score", "--metric", "multiref", "--input", str(source), "--output", str(out), "--num-shards", "2",
              "--chunk-size", "2"]
    first = _dialeval(*common, "--shard-index", "0", "--option", 'metrics=["bleu2"]')
    assert first.wait(timeout=300) == 0, first.stderr.read()
    with pytest.raises(ValueError, match="every shard is needed"):
        merge_shards(out)
    second = _dialeval(*common, "--shard-index", "1", "--option", 'metrics=["rougeL"]')
    assert second.wait(timeout=300) == 0, second.stderr.read()
    with pytest.raises(ValueError, match="options"):
        merge_shards(out)
    with pytest.raises(FileNotFoundError, match="no shard files"):
        merge_shards(tmp_path / "nothing.jsonl")
