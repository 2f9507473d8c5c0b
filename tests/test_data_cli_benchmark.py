"""Data loaders, the resumable `dialeval score`, and the multiref human-correlation benchmark."""

import json

import pytest

from dialeval.cli import main
from dialeval.data import load_judgment_file, load_multiref_mturk, load_multiref_test

EXAMPLE_ITEMS = [
    {"id": f"x{i}", "context": ["how are you ?"], "response": r, "references": ["i am fine .", "good , thanks ."]}
    for i, r in enumerate(["i am fine", "good", "not sure", "fine thanks", "great", "ok"])
]


def test_multiref_test_set():
    ds = load_multiref_test()
    assert ds.num_rows == 6740
    assert set(ds.column_names) == {"id", "context", "references"}
    assert all(len(r) == 5 for r in ds["references"][:100])
    assert ds[0]["context"] == ["Hey man , you wanna buy some weed ?"]


def test_mturk_ratings():
    multi, single = load_multiref_mturk(True), load_multiref_mturk(False)
    assert len(multi) == len(single) == 500
    assert {len(it.references) for it in multi} == {4} and {len(it.references) for it in single} == {1}
    assert all(s.references[0] in m.references for s, m in zip(single, multi))


def test_generic_judgment_file_errors(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"context": ["a"], "response": "b"}\n')
    with pytest.raises(ValueError, match="missing field"):
        load_judgment_file(path)
    path.write_text('{"context": ["a"], "response": "b", "score": "high"}\n')
    with pytest.raises(ValueError, match="'score' must be a number"):
        load_judgment_file(path)


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_score_resumes_after_interruption(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_jsonl(src, EXAMPLE_ITEMS)
    args = ["score", "--metric", "multiref", "--input", str(src), "--output", str(out),
            "--chunk-size", "2", "--option", 'metrics=["bleu1","rougeL"]']
    assert main(args) == 0
    full = out.read_text().splitlines()
    assert [json.loads(l)["line"] for l in full] == [1, 2, 3, 4, 5, 6]
    # simulate a crash: two finished lines and a half-written third
    out.write_text("\n".join(full[:2]) + "\n" + full[2][:15])
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["skipped"] == 2
    assert out.read_text().splitlines() == full


def test_score_rejects_bad_input(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    _write_jsonl(src, [{"context": ["hi"], "response": "", "references": ["x"]}])
    assert main(["score", "--metric", "multiref", "--input", str(src), "--output", str(tmp_path / "o")]) == 2
    assert "predictions[0] is an empty string" in capsys.readouterr().err


def test_generic_benchmark_file(tmp_path, capsys):
    src = tmp_path / "judged.jsonl"
    _write_jsonl(src, [dict(it, score=float(i % 3)) for i, it in enumerate(EXAMPLE_ITEMS)])
    assert main(["benchmark", "--metric", "multiref", "--dataset", str(src), "--json",
                 "--option", 'metrics=["bleu1"]']) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 6 and set(result["correlations"]) == {"bleu1"}


@pytest.mark.slow
def test_mturk_multi_reference_beats_single(capsys):
    """The paper's claim: more references, better agreement with humans (Spearman)."""
    assert main(["benchmark", "--metric", "multiref", "--dataset", "multiref-mturk", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for name in ("bleu1", "bleu2", "bleu3", "bleu4", "meteor", "rougeL"):
        assert result["multi"][name]["spearman"] > result["single"][name]["spearman"], name


def test_examples_runs_every_job_and_skips_missing_models(monkeypatch, capsys):
    """`dialeval examples`: one column set per metric; a job whose model is missing is skipped, not fatal."""
    from dialeval import runners
    from dialeval.models import ModelNotFoundError

    def fake_holistic(items, aspects):
        if aspects == ["consistency"]:
            raise ModelNotFoundError("NLI classifier 'roberta-large-mnli' ... build a local one with `python training/nli.py`")
        return {a: [0.5] * len(items) for a in aspects}, "metric:holistic|fake"

    monkeypatch.setitem(runners.RUNNERS, "holistic", fake_holistic)
    monkeypatch.setitem(runners.RUNNERS, "fed", lambda items, mode: ({"turn_overall": [1.0] * len(items)}, f"metric:fed|mode:{mode}"))
    assert main(["examples", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"multiref", "fed", "holistic"}
    assert set(out["holistic"]["scores"]) == {"coherence", "fluency", "diversity"}
    assert "training/nli.py" in out["holistic"]["skipped"][0]
    assert len(out["multiref"]["scores"]["bleu2"]) == 6
    assert main(["examples", "--metrics", "holistic"]) == 0
    table = capsys.readouterr().out
    assert "holistic:coherence" in table and "skipped:" in table and "multiref:" not in table
