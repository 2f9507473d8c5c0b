"""Data loaders, the resumable `dialeval score`, and the multiref human-correlation benchmark."""

import importlib.util
import json
import re
import time
from pathlib import Path

import pytest

from dialeval import registry
from dialeval.cli import main
from dialeval.data import load_judgment_file
from dialeval.multiref.data import load_multiref_mturk, load_multiref_test
from float_noise import LOGPROB, SUM

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

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


@pytest.mark.parametrize("row, message", [
    ({"context": ["hi", " "], "response": "x", "references": ["x"]}, "'context' turn 1 is empty"),
    ({"context": [], "response": "x", "references": ["x"]}, "'context' must be a non-empty list"),
    ({"context": ["hi"], "response": None, "references": ["x"]}, "'response' must be a string"),
    ({"context": ["hi"], "response": "x", "references": ["ok", ""]}, "'references' must be a list of non-empty"),
    ({"response": "x"}, r"missing field\(s\) \['context'\]"),
])
def test_score_input_error_names_the_file_line(tmp_path, capsys, row, message):
    """The line in the file (blank lines count), not the index inside a chunk."""
    src = tmp_path / "in.jsonl"
    good = json.dumps(EXAMPLE_ITEMS[0])
    src.write_text(f"{good}\n\n{good}\n{json.dumps(row)}\n")
    began = time.monotonic()
    assert main(["score", "--metric", "multiref", "--input", str(src), "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "in.jsonl:4: " in err and re.search(message, err), err
    assert time.monotonic() - began < 5


def test_score_runner_error_names_the_file_line(tmp_path, capsys, monkeypatch):
    """An error a runner raises about item k of a chunk is reported at that item's file line."""
    from dialeval.scoring import runners

    def picky(items):
        for k, item in enumerate(items):
            if item["response"] == "bad":
                raise ValueError(f"predictions[{k}] is not acceptable")
        return {"x": [1.0] * len(items)}, "metric:picky"

    monkeypatch.setitem(runners.RUNNERS, "multiref", picky)
    src = tmp_path / "in.jsonl"
    rows = [dict(EXAMPLE_ITEMS[0], response=r) for r in ("a", "b", "c", "d", "e", "bad")]
    src.write_text("\n".join(json.dumps(r) for r in rows[:3]) + "\n\n" + "\n".join(json.dumps(r) for r in rows[3:]) + "\n")
    assert main(["score", "--metric", "multiref", "--input", str(src), "--output", str(tmp_path / "o"),
                 "--chunk-size", "3"]) == 2
    assert "in.jsonl:7: predictions is not acceptable" in capsys.readouterr().err


def test_score_unknown_option_and_bad_chunk_size_are_named(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    _write_jsonl(src, EXAMPLE_ITEMS[:1])
    base = ["score", "--metric", "multiref", "--input", str(src), "--output", str(tmp_path / "o")]
    began = time.monotonic()
    assert main(base + ["--option", "mdoel=x"]) == 2
    assert "--option for multiref: unknown option(s) ['mdoel']" in capsys.readouterr().err
    assert main(base + ["--chunk-size", "0"]) == 2
    assert "--chunk-size must be >= 1" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["score", "--metric", "multiref", "--input", str(empty), "--output", str(tmp_path / "e")]) == 2
    assert "no records" in capsys.readouterr().err
    assert time.monotonic() - began < 5
    import torch  # noqa: F401  (imported before the clock starts: the check itself is instant)

    began = time.monotonic()
    assert main(["score", "--metric", "holistic", "--input", str(src), "--output", str(tmp_path / "h"),
                 "--option", "device=cuda", "--option", 'aspects=["diversity"]']) == 2
    assert "has no CUDA" in capsys.readouterr().err
    assert time.monotonic() - began < 5


def test_score_refuses_to_resume_with_other_settings(tmp_path, capsys):
    """The metric, options and signature are kept beside the output; a rerun that differs is refused."""
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_jsonl(src, EXAMPLE_ITEMS)
    base = ["score", "--metric", "multiref", "--input", str(src), "--output", str(out)]
    assert main(base + ["--option", 'metrics=["bleu1"]']) == 0
    meta = json.loads((tmp_path / "out.jsonl.meta.json").read_text())
    assert meta["metric"] == "multiref" and meta["options"] == {"metrics": ["bleu1"]} and "bleu" in meta["signature"]
    before = out.read_text()
    assert main(base + ["--option", 'metrics=["rougeL"]']) == 2
    err = capsys.readouterr().err
    assert "holds scores of options {'metrics': ['bleu1']}" in err and "--overwrite" in err
    assert out.read_text() == before
    assert main(base + ["--option", 'metrics=["rougeL"]', "--overwrite"]) == 0
    assert {tuple(json.loads(l)["scores"]) for l in out.read_text().splitlines()} == {("rougeL",)}
    (tmp_path / "out.jsonl.meta.json").unlink()
    assert main(base + ["--option", 'metrics=["rougeL"]']) == 2
    assert "no out.jsonl.meta.json saying how they were scored" in capsys.readouterr().err


def test_score_refuses_a_changed_signature(tmp_path, capsys, monkeypatch):
    """Same options, but the model or version behind them changed: the earlier lines are not mixed in."""
    from dialeval.scoring import runners

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_jsonl(src, EXAMPLE_ITEMS)
    version = {"v": "1"}
    monkeypatch.setitem(runners.RUNNERS, "multiref",
                        lambda items: ({"x": [1.0] * len(items)}, f"metric:fake|version:{version['v']}"))
    args = ["score", "--metric", "multiref", "--input", str(src), "--output", str(out)]
    assert main(args) == 0
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:3]))  # interrupted after 3 lines
    version["v"] = "2"
    assert main(args) == 2
    assert "scored as 'metric:fake|version:1'" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 3


def test_chunks_sit_at_fixed_input_positions(monkeypatch):
    """Chunks are the items k * chunk_size to (k + 1) * chunk_size, whatever the first item scored and
    however long a chunk takes (they grew with elapsed time, so two runs scored different chunks)."""
    from dialeval.scoring import runners
    from dialeval.scoring import chunk_ranges, score_chunks

    assert [(r.start, r.stop) for r in chunk_ranges(70, 200, 64)] == [(70, 128), (128, 192), (192, 200)]
    assert list(chunk_ranges(5, 5, 4)) == []

    def slow(items):
        time.sleep(0.02 * len(items))
        return {"x": [1.0] * len(items)}, "metric:slow"

    monkeypatch.setitem(runners.RUNNERS, "multiref", slow)
    starts = [(start, len(chunk)) for start, chunk, _, _ in score_chunks("multiref", [{}] * 12, {}, start=5, chunk_size=4)]
    assert starts == [(5, 3), (8, 4)]


def test_save_every_is_deprecated_and_changes_nothing(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_jsonl(src, EXAMPLE_ITEMS)
    assert main(["score", "--metric", "multiref", "--input", str(src), "--output", str(out), "--save-every", "0.001",
                 "--option", 'metrics=["bleu1"]']) == 0
    assert "--save-every is deprecated and ignored" in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    (b'{"context": ["hi"], "response": "ok"}\n\n{"context": ["caf\xe9"], "response": "ok"}\n',
     r"in.jsonl:3: not valid UTF-8 \(byte 0xe9 at column 18\)"),
    (b'{"context": ["hi"], "response": "ok"}\n{"context": ["hi", "a\\ud800b"], "response": "ok"}\n',
     r"in.jsonl:2: 'context'\[1\] holds a lone surrogate escape"),
    (b'{"context": ["hi"], "response": "\\udc80", "references": ["x"]}\n', "in.jsonl:1: 'response' holds a lone surrogate"),
])
def test_undecodable_input_names_the_file_line(tmp_path, capsys, content, message):
    """Bytes that are not UTF-8 and lone surrogate escapes (not text: they failed later with a
    UnicodeEncodeError) are refused naming the line and, for a surrogate, the field."""
    src = tmp_path / "in.jsonl"
    src.write_bytes(content)
    assert main(["score", "--metric", "multiref", "--input", str(src), "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_a_byte_order_mark_is_accepted(tmp_path, capsys):
    """Files saved by some editors start with a UTF-8 byte-order mark (json refused it: 'decode using utf-8-sig')."""
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(it) + "\n" for it in EXAMPLE_ITEMS).encode("utf-8"))
    assert main(["score", "--metric", "multiref", "--input", str(src), "--output", str(out),
                 "--option", 'metrics=["bleu1"]']) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [it["id"] for it in EXAMPLE_ITEMS]


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


def test_examples_runs_every_job_and_skips_missing_models(monkeypatch, capsys, tmp_path):
    """`dialeval examples`: one column set per metric; a job whose model is missing is skipped, not fatal."""
    from dialeval.scoring import runners
    from dialeval.models import ModelNotFoundError

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))  # combined reads its components through the score cache

    coherence_weights = []

    def fake_holistic(items, aspects, pmi_weight=None):
        coherence_weights.append(pmi_weight)
        if aspects == ["consistency"]:
            raise ModelNotFoundError("NLI classifier 'roberta-large-mnli' ... build a local one with `python training/nli.py`")
        return {a: [0.5] * len(items) for a in aspects}, "metric:holistic|model:fake|version:x"

    monkeypatch.setitem(runners.RUNNERS, "holistic", fake_holistic)
    monkeypatch.setitem(runners.RUNNERS, "fed", lambda items, mode="conditional", level=None: (
        {"turn_overall": [1.0] * len(items)}, f"metric:fed|mode:{mode}|version:x"))
    monkeypatch.setitem(runners.RUNNERS, "full", lambda items, level="turn": ({"full": [2.0] * len(items)}, "metric:full|model:fake|version:x"))
    assert main(["examples", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == set(registry.METRICS)
    # (the fakes' signatures are well formed: dialeval.core.signature parses them)
    # combined scores with the fake holistic coherence, the real GRADE and SSREM; since issue 57 it reads no FED nor NLI
    assert len(out["combined"]["scores"]["combined"]) == 6 and "|features:coherence+grade+ssrem_f|" in out["combined"]["signatures"][0]
    assert len(out["grade"]["scores"]["grade"]) == 6 and "|pair:cross|lora:yes|" in out["grade"]["signatures"][0]  # the default cross-encoder
    assert set(out["holistic"]["scores"]) == {"coherence", "fluency", "diversity"}
    assert "training/nli.py" in out["holistic"]["skipped"][0]
    assert len(out["multiref"]["scores"]["bleu2"]) == 6
    # holistic's examples and combined's both with holistic's default coherence (combined is trained on it)
    assert coherence_weights and set(coherence_weights) == {None}
    assert main(["examples", "--metrics", "holistic"]) == 0
    table = capsys.readouterr().out
    assert "holistic:coherence" in table and "skipped:" in table and "multiref:" not in table
    assert main(["examples", "--metrics", "fed"]) == 0  # the fake FED signature names no DialoGPT-large
    assert "fed: the paper's microsoft/DialoGPT-large cannot be had here" in capsys.readouterr().out


def test_the_declared_correlation_runs_are_benchmarks_of_their_metric_with_results_files():
    """benchmarks/correlations.py runs what the metrics declare (Benchmark.runs): each on a paper
    benchmark of its own metric, under a name of its own, its result files in benchmarks/results."""
    spec = importlib.util.spec_from_file_location("correlations", BENCHMARKS / "correlations.py")
    correlations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(correlations)
    runs = list(correlations.declared_runs())
    assert runs and len({run.name for run in runs}) == len(runs)
    for run in runs:
        assert registry.benchmark_of(run.metric, run.dataset) is not None, run
        for suffix in (".json", ".txt"):
            assert (BENCHMARKS / "results" / f"{run.name}{suffix}").is_file(), run.name
    command = correlations.command(runs[0], Path("out"))
    assert command[command.index("--save") + 1] == str(Path("out") / f"{runs[0].name}.json")


HOLISTIC_ITEMS = [
    {"id": "a1", "context": ["Do you like to read books?"], "response": "I mostly read science fiction.", "group": "q1"},
    {"id": "a2", "context": ["Do you enjoy reading books?"], "response": "Yes, history books.", "group": "q1"},
    {"id": "b1", "context": ["What kind of music do you listen to?"], "response": "", "group": "q2"},
    {"id": "b2", "context": ["Which music do you like?"], "response": "Jazz and rock!", "group": "q2"},
    {"id": "c1", "context": ["Hi! How are you doing today?"], "response": "I'm doing well, thanks."},
]


@pytest.fixture(scope="module")
def tiny_with_cutoffs(tmp_path_factory):
    from dialeval.holistic.normalisation import CUTOFFS_FILE
    from tiny_lm import tiny_gpt2

    path = tmp_path_factory.mktemp("tiny_gpt2_cutoffs")
    tiny_gpt2(path)
    (path / CUTOFFS_FILE).write_text(json.dumps({"cutoffs": {"coherence": -7.0, "fluency_sum": -60.0}}))
    return path


@pytest.mark.parametrize("cutoff", [None, "set"])
def test_holistic_scores_do_not_depend_on_chunking(tmp_path, tiny_with_cutoffs, cutoff, monkeypatch):
    """One chunk, chunks of 1 and chunks of 2: identical output lines (stored cutoffs and, for weighted
    PMI coherence, stored calibration quartiles by default; the set's percentile and quartiles, on
    request, are taken over the whole file; diversity groups by `group`)."""
    from dialeval.holistic import normalisation

    calibration = tmp_path / "calibration_logprobs.json"  # an entry without weights holds for any
    calibration.write_text(json.dumps({str(tiny_with_cutoffs): {"logprobs": {
        "coherence": [[-float(i), 2] for i in range(9)], "fluency": [[-10.0 - i, 3] for i in range(9)]}}}))
    monkeypatch.setattr(normalisation, "CALIBRATION_LOGPROBS_FILE", calibration)
    src = tmp_path / "in.jsonl"
    _write_jsonl(src, HOLISTIC_ITEMS)
    options = ["--option", f"model={tiny_with_cutoffs}", "--option", 'aspects=["coherence","fluency","diversity"]']
    if cutoff:
        options += ["--option", f"cutoff={cutoff}"]
    outputs = []
    for size in ("64", "1", "2"):
        out = tmp_path / f"out{size}.jsonl"
        assert main(["score", "--metric", "holistic", "--input", str(src), "--output", str(out),
                     "--chunk-size", size] + options) == 0
        outputs.append([json.loads(line) for line in out.read_text().splitlines()])
    records = outputs[0]
    # identical, up to float32 rounding of the LM's batched log-probabilities: 1e-5 relative to a sum,
    # and absolute on weighted PMI, a difference of two of them (-0.87 from terms near -5)
    for other in outputs[1:]:
        assert [{k: v for k, v in r.items() if k != "scores"} for r in other] == \
            [{k: v for k, v in r.items() if k != "scores"} for r in records]
        for mine, theirs in zip(records, other):
            assert theirs["scores"].keys() == mine["scores"].keys()
            for name, value in mine["scores"].items():  # strict JSON: NaN is written as null
                assert theirs["scores"][name] == (None if value is None else pytest.approx(value, rel=SUM, abs=LOGPROB))
    assert [r["line"] for r in records] == [1, 2, 3, 4, 5]
    diversity = [r["scores"]["diversity"] for r in records]
    assert diversity[0] == diversity[1] > 0.0
    assert diversity[2] == 0.0 and diversity[3] is None  # b1 is empty: 0; b2 the only real reply of its group
    assert diversity[4] is None  # alone in its group: NaN, written as JSON null
    assert all(0.0 <= r["scores"]["coherence"] <= 1.0 for r in records)
    signature = records[0]["signature"]
    assert ("|pmi:0.85|cutoff:q25-q75-of-input|" if cutoff else "|pmi:0.85|cutoff:stored-q25-q75|") in signature
    assert ("p5-of-input" if cutoff else "cutoff:stored|") in signature  # fluency
    if cutoff:
        assert min(r["scores"]["fluency"] for r in records) == 0.0  # the whole file's 5th percentile


def test_holistic_default_aspects_skip_a_missing_model(recwarn):
    from dialeval.models import ModelNotFoundError
    from dialeval.holistic.runner import run_holistic

    items = [dict(it, references=[]) for it in HOLISTIC_ITEMS]
    per_item, signature = run_holistic(items, model="./no-such-lm", nli="./no-such-nli")
    assert set(per_item) == {"diversity"} and "aspect:diversity" in signature
    assert sum("skipped" in str(w.message) for w in recwarn.list) == 3  # coherence, fluency, consistency
    with pytest.raises(ModelNotFoundError):
        run_holistic(items, aspects=["consistency"], nli="./no-such-nli")


def test_generic_benchmark_scores_in_chunks_like_one_call(tmp_path, monkeypatch):
    from dialeval.multiref.runner import run_multiref
    from dialeval.scoring.cache import scores_for

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    items = [dict(it, score=float(i)) for i, it in enumerate(EXAMPLE_ITEMS * 3)]
    whole, signature = run_multiref(items, metrics=["bleu1"])
    entry = scores_for("multiref", {"metrics": ["bleu1"]}, items, progress=False, chunk_size=4)
    chunked, chunk_signature = entry["per_item"], entry["signature"]
    assert chunked == whole and chunk_signature == signature


def test_generic_judgment_file_group_field(tmp_path):
    path = tmp_path / "judged.jsonl"
    _write_jsonl(path, [dict(HOLISTIC_ITEMS[0], score=3), dict(HOLISTIC_ITEMS[4], score=1, group=7)])
    items = load_judgment_file(path)
    assert [it.group for it in items] == ["q1", "7"]
