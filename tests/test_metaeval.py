"""Meta-evaluation: statistics (dialeval.stats.correlation), the per-item score cache and the grid."""

import math
import json

import numpy as np
import pytest
from scipy import stats

from dialeval.scoring import cache as score_cache
from dialeval.stats.correlation import bootstrap_interval, correlate, system_level, williams_spearman, williams_test


def test_kendall_and_williams_against_hand_computed_values():
    # x = 1..4, y = 1,3,2,4: 5 concordant pairs, 1 discordant -> tau = 4/6.
    assert correlate([1, 2, 3, 4], [1, 3, 2, 4]).kendall == pytest.approx(4 / 6, rel=1e-12)
    # r12=.5, r13=.3, r23=.4, n=100: K = 0.62, t = 0.2 sqrt(138.6) / sqrt(1.24 * 99/97 + 0.16 * 0.216) = 2.06499.
    t, p = williams_test(0.5, 0.3, 0.4, 100)
    assert t == pytest.approx(2.06499, abs=1e-5)
    assert p == pytest.approx(0.0208, abs=5e-4)  # one-sided, 97 degrees of freedom
    assert williams_test(0.4, 0.4, 0.2, 50)[0] == 0.0
    with pytest.raises(ValueError, match="more than 3"):
        williams_test(0.5, 0.3, 0.4, 3)



def test_williams_of_two_metrics_that_rank_alike_is_no_test():
    """A metric and a monotone function of it (holistic's coherence and coherence_pmi): r23 = 1, K = 0
    in exact arithmetic and -5.6e-17 in floats (0.2, 0.2, 1.0); no p-value, no math domain error."""
    t, p = williams_test(0.2, 0.2, 1.0, 50)
    assert math.isnan(t) and math.isnan(p)
    human = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]
    a = [0.3, 0.1, 0.5, 0.2, 0.4, 0.9, 0.35, 0.6]
    assert williams_spearman(a, [math.exp(3 * v) for v in a], human) is None
    assert williams_spearman(a, human, human) is not None  # a different ranking is tested

def test_bootstrap_interval_is_seeded_and_exact_for_a_monotone_relation():
    xs = [0.1 * i for i in range(30)]
    assert bootstrap_interval(xs, [x**3 for x in xs], "spearman", 200) == pytest.approx((1.0, 1.0), abs=1e-12)
    noisy = [x + (0.7 if i % 3 == 0 else -0.4) for i, x in enumerate(xs)]
    a = bootstrap_interval(xs, noisy, "pearson", 300, seed=1)
    assert a == bootstrap_interval(xs, noisy, "pearson", 300, seed=1)
    assert a != bootstrap_interval(xs, noisy, "pearson", 300, seed=2)
    assert a[0] < correlate(xs, noisy).pearson < a[1]


def test_rowwise_correlations_equal_scipy_row_by_row():
    """Every row as scipy computes it (Spearman with tied ranks); a constant row is NaN."""
    from dialeval.stats.correlation import rowwise

    x = np.array([[1.0, 2.0, 3.0, 5.0, 4.0], [2.0, 2.0, 1.0, 3.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    y = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 3.0, 2.0, 2.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
    assert rowwise("spearman", x, y)[0] == pytest.approx(0.9, rel=1e-12)  # one swapped pair: 1 - 6*2/120
    for b in range(2):
        assert rowwise("pearson", x, y)[b] == pytest.approx(stats.pearsonr(x[b], y[b])[0], rel=1e-12)
        assert rowwise("spearman", x, y)[b] == pytest.approx(stats.spearmanr(x[b], y[b])[0], rel=1e-12)
    assert np.isnan(rowwise("pearson", x, y)[2])
    with pytest.raises(ValueError, match="'pearson' or 'spearman'"):
        rowwise("kendall", x, y)


def test_system_level_correlates_per_system_means():
    metric = [1, 3, 2, 4, 10, 12]
    human = [5, 5, 1, 1, 3, 3]
    systems = ["a", "a", "b", "b", "c", "c"]  # means: a (2, 5), b (3, 1), c (11, 3)
    assert system_level(metric, human, systems).spearman == pytest.approx(-0.5, rel=1e-12)
    assert system_level(metric[:4], human[:4], systems[:4]) is None  # 2 systems only


def test_score_cache_rescores_only_when_something_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    calls = []

    def score():
        calls.append(1)
        return {"x": [1.0, 2.0]}, "metric:x|version:test"

    items = [{"context": ["a"], "response": "b", "references": ["c"]}, {"context": [], "response": "d", "references": []}]
    first = score_cache.cached_scores("m", {"k": 1}, items, score)
    again = score_cache.cached_scores("m", {"k": 1}, items, score)
    assert (first["from_cache"], again["from_cache"], len(calls)) == (False, True, 1)
    assert again["per_item"] == {"x": [1.0, 2.0]} and again["signature"] == "metric:x|version:test"
    score_cache.cached_scores("m", {"k": 2}, items, score)  # other options
    score_cache.cached_scores("m", {"k": 1}, items[:1], score)  # other inputs
    score_cache.cached_scores("m", {"k": 1}, items, score, refresh=True)
    assert len(calls) == 4


def test_retrained_weights_miss_the_cache_of_their_metric_only(tmp_path, monkeypatch):
    from dialeval.models import hub

    root = tmp_path / "hub"
    for name in ("grade-dailydialog", "smollm2-dialogue"):
        (root / name).mkdir(parents=True)
        (root / name / "model.safetensors").write_bytes(b"weights of " + name.encode())
    monkeypatch.setattr(hub, "hub_root", lambda: root)
    score_cache.weights_fingerprint.cache_clear()
    items = [{"context": ["a"], "response": "b"}]
    before = {m: score_cache.cache_key(m, {}, items) for m in ("grade", "fed", "multiref")}
    (root / "grade-dailydialog" / "model.safetensors").write_bytes(b"retrained")
    score_cache.weights_fingerprint.cache_clear()
    after = {m: score_cache.cache_key(m, {}, items) for m in ("grade", "fed", "multiref")}
    score_cache.weights_fingerprint.cache_clear()
    assert after["grade"] != before["grade"]
    assert after["fed"] == before["fed"] and after["multiref"] == before["multiref"]


def test_a_default_model_that_resolves_differently_misses_the_cache(monkeypatch):
    """holistic's NLI option omitted: the bundled stand-in and roberta-large-mnli (once it can be had)
    key different entries, for holistic and the combined metric that reads it; not for grade."""
    from dialeval.scoring import cache as score_cache
    from dialeval.holistic import spec as holistic_spec

    items = [{"context": ["a"], "response": "b"}]
    keys = {}
    for nli in ("dialeval/minilm-nli", "roberta-large-mnli"):
        monkeypatch.setattr(holistic_spec, "default_nli_model", lambda nli=nli: nli)
        keys[nli] = {m: score_cache.cache_key(m, {}, items) for m in ("holistic", "combined", "grade")}
    stand_in, published = keys.values()
    assert stand_in["holistic"] != published["holistic"]
    assert stand_in["combined"] != published["combined"]
    assert stand_in["grade"] == published["grade"]


def test_a_default_setting_keys_the_metric_only(monkeypatch):
    """holistic's pmi_weight omitted: another default setting (MetricSpec.default_settings) keys other
    entries for holistic, not for the combined metric, which runs holistic with pinned options."""
    import dataclasses

    from dialeval import registry
    from dialeval.scoring import cache as score_cache

    assert registry.resolved_defaults("holistic")["holistic"]["pmi_weight"] == "0.85"
    assert "pmi_weight" not in registry.resolved_defaults("combined")["holistic"]
    items = [{"context": ["a"], "response": "b"}]
    before = {m: score_cache.cache_key(m, {}, items) for m in ("holistic", "combined")}
    declared = registry.spec
    other = dataclasses.replace(declared("holistic"), default_settings={"pmi_weight": "0.5"})
    monkeypatch.setattr(registry, "spec", lambda name: other if name == "holistic" else declared(name))
    after = {m: score_cache.cache_key(m, {}, items) for m in ("holistic", "combined")}
    assert after["holistic"] != before["holistic"] and after["combined"] == before["combined"]


@pytest.fixture()
def rated_file(tmp_path):
    rows = [
        ("how are you ?", "i am fine , thanks .", ["i am fine , thank you .", "fine thanks ."], 5.0, "a"),
        ("what do you do ?", "i am a teacher .", ["i teach at a school .", "i am a teacher ."], 4.5, "b"),
        ("do you like tea ?", "the car is red .", ["yes , i love tea .", "i prefer coffee ."], 1.0, "c"),
        ("where do you live ?", "in a small town .", ["i live in paris .", "in a town near the sea ."], 4.0, "a"),
        ("any plans today ?", "no .", ["i will go hiking .", "just relaxing at home ."], 2.0, "b"),
        ("is it raining ?", "yes , it is raining hard .", ["yes , it is .", "it is raining a lot ."], 4.8, "c"),
    ]
    path = tmp_path / "rated.jsonl"
    path.write_text("".join(json.dumps({"context": [c], "response": r, "references": refs, "score": s,
                                        "system": sy}) + "\n" for c, r, refs, s, sy in rows))
    return path


def test_grid_cell_matches_the_plain_path_and_writes_outputs(rated_file, tmp_path, monkeypatch):
    from dialeval.metaeval import grid
    from dialeval.data import load_judgment_file
    from dialeval.multiref.runner import run_multiref

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    result = grid.run_grid(sets=[str(rated_file)], metrics=["multiref"], n_resamples=50, progress=False)
    (cell,) = result["cells"]
    assert cell["status"] == "ok" and not cell["from_cache"]
    judged = load_judgment_file(rated_file)
    per_item, signature = run_multiref([vars(it) for it in judged])
    assert cell["signature"] == signature
    plain = correlate(per_item["rougeL"], [it.score for it in judged])
    got = cell["correlations"]["rougeL"]
    assert (got["spearman"], got["pearson"], got["kendall"]) == (plain.spearman, plain.pearson, plain.kendall)
    assert got["system"]["n"] == 3
    # no Williams' test for the best one, nor for those that rank the items exactly as it does
    best = max(cell["correlations"], key=lambda sub: cell["correlations"][sub]["spearman"])
    alike = {sub for sub, values in per_item.items() if stats.spearmanr(values, per_item[best])[0] == 1.0}
    assert {sub for sub, c in cell["correlations"].items() if c.get("williams_p", 0) is None} == alike
    assert best in alike and len(alike) < len(cell["correlations"])
    paths = grid.write_outputs(result, tmp_path / "out")
    assert "multiref:rougeL" in paths["markdown"].read_text()
    assert "per_item" not in json.loads(paths["json"].read_text())["cells"][0]
    assert [p.name for p in (tmp_path / "out" / "plots").glob("*.png")] == ["rated.jsonl--multiref.png"]
    again = grid.run_grid(sets=[str(rated_file)], metrics=["multiref"], n_resamples=50, progress=False)
    assert again["cells"][0]["from_cache"]


def test_grid_reports_missing_weights_and_inapplicable_cells(rated_file, tmp_path, monkeypatch):
    from dialeval.metaeval import grid
    from dialeval.models import ModelNotFoundError

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))

    def no_weights(items, **options):
        raise ModelNotFoundError("fed model 'x' is not a local directory; build it with `python training/...`")

    from dialeval.scoring import runners

    monkeypatch.setitem(runners.RUNNERS, "fed", no_weights)
    (cell,) = grid.run_grid(sets=[str(rated_file)], metrics=["fed"], progress=False)["cells"]
    assert cell["status"] == "missing weights" and "training/" in cell["reason"]
    monkeypatch.undo()
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    (cell,) = grid.run_grid(sets=["holistic-fluency"], metrics=["multiref"], progress=False)["cells"]
    assert cell["status"] == "not applicable" and "references" in cell["reason"]


def test_published_values_come_from_the_papers_tables():
    from dialeval.metaeval.grid import published

    assert published("multiref-mturk", "multiref", "meteor")[0] == 0.2247
    assert published("fed-dialog", "fed", "dialog_depth")[0] == 0.476  # row "Topic Depth"
    assert published("fed-dialog", "fed", "dialog_understand")[0] == 0.306  # row "Understanding"
    value, source = published("fed-turn", "fed", "turn_overall")
    assert value == 0.209 and "Table 6" in source and "762M-ft" in source
    assert published("holistic-coherence", "holistic", "coherence")[0] == 0.76
    assert published("grade-convai2", "grade", "grade")[0] == 0.579
    assert published("holistic-fluency", "multiref", "bleu2") is None
    # USL-H's paper reports no shared set: Yeh et al. 2021's values, which the metric declares, stand beside it
    value, source = published("fed-turn", "usl", "usl")
    assert value == 0.189 and source.startswith("Yeh, Eskenazi & Mehri 2021")
    assert published("grade-convai2", "usl", "usl")[0] == 0.457
    assert published("grade-convai2", "usl", "usl_u") is None and published("holistic-fluency", "usl", "usl") is None


def test_cli_benchmark_all_writes_the_table_json_and_plots(rated_file, tmp_path, monkeypatch, capsys):
    from dialeval.cli import main

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "grid"
    assert main(["benchmark", "--all", "--output-dir", str(out), "--metrics", "multiref",
                 "--datasets", str(rated_file), "--resamples", "20"]) == 0
    assert "multiref:meteor" in capsys.readouterr().out
    assert {p.name for p in out.iterdir()} == {"metaeval.md", "metaeval.json", "plots"}
    assert main(["benchmark", "--all", "--metrics", "multiref"]) == 2
    assert "--output-dir" in capsys.readouterr().err
    assert main(["benchmark", "--dataset", "multiref-mturk"]) == 2
    assert "--metric" in capsys.readouterr().err


def test_cli_puts_the_summary_between_the_readme_markers(rated_file, tmp_path, monkeypatch):
    from dialeval.metaeval.grid import README_END, README_START
    from dialeval.cli import main

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{README_START}\nold table\n{README_END}\nafter\n")
    assert main(["benchmark", "--all", "--output-dir", str(tmp_path / "grid"), "--metrics", "multiref",
                 "--datasets", str(rated_file), "--resamples", "20", "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n") and text.endswith(f"{README_END}\nafter\n")
    assert "old table" not in text and "| multiref:rougeL |" in text and "Scoring time" in text
    result = json.loads((tmp_path / "grid" / "metaeval.json").read_text())
    (cell,) = result["cells"]
    assert f"| {cell['correlations']['rougeL']['spearman']:.3f}" in text
    readme.write_text("no markers\n")
    assert main(["benchmark", "--all", "--output-dir", str(tmp_path / "grid"), "--metrics", "multiref",
                 "--datasets", str(rated_file), "--resamples", "20", "--readme", str(readme)]) == 2


def test_cost_per_job_sums_the_seconds_of_scored_cells():
    from dialeval.metaeval.grid import cost_per_job

    cells = [{"job": "fed", "status": "ok", "seconds": 10.0}, {"job": "fed", "status": "ok", "seconds": 2.5},
             {"job": "grade", "status": "missing weights"}, {"job": "multiref", "status": "ok", "seconds": 1.0}]
    assert cost_per_job({"cells": cells}) == {"fed": 12.5, "multiref": 1.0}


def test_every_named_set_loads_as_a_dataset():
    from dialeval.registry import load_dataset

    sizes = {"fed-turn": 375, "fed-dialog": 125, "grade-convai2": 600, "grade-dailydialog": 300,
             "grade-empathetic": 300, "holistic-coherence": 200, "holistic-fluency": 200,
             "holistic-consistency": 200, "multiref-mturk": 500}
    for name, n in sizes.items():
        ds = load_dataset(name)
        assert ds.num_rows == n, name
        assert {"context", "response", "score", "references", "system"} <= set(ds.column_names)
    assert load_dataset("fed-turn")[0]["score"] == 2.6  # mean "Overall" rating of the first item


def test_grid_jobs_fit_each_set():
    from dialeval.metaeval.grid import JOBS
    from dialeval.registry import load_dataset

    holistic = next(j for j in JOBS if j.name == "holistic")
    fed = next(j for j in JOBS if j.name == "fed")
    no_context = [{"context": [], "response": "fine ."}]
    with_context = [{"context": ["hi"], "response": "fine ."}]
    assert holistic.options_on("holistic-fluency", no_context)["aspects"] == ["fluency"]  # no coherence
    assert holistic.options_on("x", with_context)["aspects"] == ["coherence", "fluency"]
    assert fed.options_on("fed-dialog", with_context)["level"] == "dialog"
    assert fed.options_on("grade-convai2", with_context)["level"] == "turn"
    # multiref-mturk carries the paper's five references (the Table 4 benchmark's), not the CSV's four
    assert {len(r) for r in load_dataset("multiref-mturk")["references"]} == {5}


def test_grid_adds_unpaired_system_agreement_on_sets_rated_on_different_contexts(rated_file, tmp_path, monkeypatch):
    from dialeval import compare
    from dialeval.metaeval import grid
    from dialeval.data import load_judgment_file

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    result = grid.run_grid(sets=[str(rated_file)], metrics=["multiref"], n_resamples=50, progress=False)
    info = result["sets"][str(rated_file)]
    assert info["pairing"] == {"paired": False, "shared_contexts": 0, "items_per_system": {"a": 2, "b": 2, "c": 2}}
    (cell,) = result["cells"]
    got = cell["correlations"]["rougeL"]["system_agreement"]
    judged = load_judgment_file(rated_file)
    by_system = {s: [i for i, it in enumerate(judged) if it.system == s] for s in ("a", "b", "c")}
    scores = cell["per_item"]["rougeL"]
    expected = compare.unpaired_agreement({s: [judged[i].score for i in idx] for s, idx in by_system.items()},
                                          {s: [scores[i] for i in idx] for s, idx in by_system.items()},
                                          n_resamples=50, n_permutations=grid.AGREEMENT_PERMUTATIONS, seed=0)
    assert got == {**{k: v for k, v in expected.to_dict().items() if k not in ("human", "metric")}, "paired": False}
    assert got["n_systems"] == 3 and got["n_pairs"] == 3
    # human means: a 4.5, b 3.25, c 2.9; Kendall over systems against the metric's means
    from scipy.stats import kendalltau

    assert got["kendall_tau"] == pytest.approx(kendalltau(
        [np.mean([scores[i] for i in idx]) for idx in by_system.values()], [4.5, 3.25, 2.9])[0], rel=1e-12)
    text = grid.markdown({**result, "seconds": 1.0})
    assert "System level (3 systems; unpaired: the systems were rated on different contexts" in text


def test_grid_system_agreement_is_paired_when_systems_share_contexts(tmp_path, monkeypatch):
    from dialeval.metaeval import grid
    from dialeval.stats.paired import human_agreement

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    contexts = ["how are you ?", "what do you do ?", "do you like tea ?", "where do you live ?", "is it raining ?"]
    refs = [["i am fine , thanks ."], ["i am a teacher ."], ["yes , i love tea ."], ["in paris ."], ["yes , it is ."]]
    answers = {"good": ["i am fine , thanks .", "i am a teacher .", "yes , i love tea .", "in paris .", "yes ."],
               "mid": ["fine .", "a teacher .", "tea is ok .", "in a town .", "it is ."],
               "bad": ["the car .", "no .", "red .", "what ?", "maybe ."]}
    human = {"good": [5, 5, 4, 5, 4], "mid": [3, 4, 3, 3, 3], "bad": [1, 1, 2, 1, 1]}
    path = tmp_path / "paired.jsonl"
    path.write_text("".join(json.dumps({"context": [c], "response": answers[s][i], "references": refs[i],
                                        "score": human[s][i], "system": s}) + "\n"
                            for s in answers for i, c in enumerate(contexts)))
    result = grid.run_grid(sets=[str(path)], metrics=["multiref"], n_resamples=50, progress=False)
    assert result["sets"][str(path)]["pairing"]["paired"] is True
    (cell,) = result["cells"]
    got = cell["correlations"]["rougeL"]["system_agreement"]
    scores = cell["per_item"]["rougeL"]
    metric = {s: scores[5 * k: 5 * k + 5] for k, s in enumerate(answers)}
    expected = human_agreement(human, metric, n_resamples=50, n_permutations=grid.AGREEMENT_PERMUTATIONS, seed=0)
    assert got == {**{k: v for k, v in expected.to_dict().items() if k not in ("human", "metric")}, "paired": True}
    assert got["kendall_tau"] == pytest.approx(1.0, rel=1e-12)  # rougeL orders good > mid > bad as the humans do


def test_an_interrupted_cell_resumes_at_its_last_saved_chunk_and_ends_as_an_uninterrupted_one(tmp_path, monkeypatch):
    """A Ctrl-C in the middle of a grid cell keeps its finished chunks; the next run scores only the
    rest, and the stored entry (scores, flags, signature) is the uninterrupted run's, byte for byte."""
    import json

    from dialeval.scoring import runners, cache as score_cache
    from dialeval.core.results import ItemScores

    calls = []

    def fake(items, **options):  # a score that depends on the chunk's other items, as padded batches can
        calls.append(len(items))
        if len(calls) == stop_at[0]:
            raise KeyboardInterrupt
        total = sum(len(it["response"]) for it in items)
        return ItemScores({"x": [len(it["response"]) / total for it in items]}, "metric:fake",
                          [["empty"] if not it["response"] else [] for it in items])

    monkeypatch.setitem(runners.RUNNERS, "multiref", fake)
    items = [{"context": [f"turn {i}"], "response": "" if i % 7 == 3 else "w" * (i + 1), "references": ["r"]}
             for i in range(40)]

    def run(folder: str) -> dict:
        monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / folder))
        return score_cache.scores_for("multiref", {}, items, progress=False, chunk_size=16)

    stop_at = [0]
    whole = run("uninterrupted")
    assert calls == [16, 16, 8]
    calls.clear()
    stop_at[0] = 3
    with pytest.raises(KeyboardInterrupt):
        run("interrupted")
    chunk_files = list((tmp_path / "interrupted" / "scores").glob(f"*.chunks-{score_cache.CACHE_FORMAT}-16.jsonl"))
    assert len(chunk_files) == 1 and len(chunk_files[0].read_text().splitlines()) == 2  # two chunks saved
    calls.clear()
    stop_at[0] = 0
    resumed = run("interrupted")
    assert calls == [8]  # only the unsaved chunk is scored again
    assert not chunk_files[0].exists()
    same = ("per_item", "signature", "flags", "format", "metric", "options")
    assert json.dumps({k: resumed[k] for k in same}) == json.dumps({k: whole[k] for k in same})
    again = run("interrupted")
    assert again["from_cache"] and calls == [8]


def test_a_metric_that_reads_others_is_scored_in_one_chunk(monkeypatch, tmp_path):
    """The combined metric's components then score the whole set under their own grid cells' keys
    (cached), instead of every component again per chunk of 16 items (issue 34)."""
    from dialeval.scoring import cache

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    sizes = []

    def chunks(metric, items, options, start=0, chunk_size=cache.CHUNK_SIZE):
        sizes.append((metric, chunk_size))
        for first in range(start, len(items), chunk_size):
            part = list(items[first : first + chunk_size])
            yield first, part, ({metric: [0.5] * len(part)}, f"metric:{metric}"), f"metric:{metric}"

    monkeypatch.setattr("dialeval.scoring.chunks.score_chunks", chunks)
    items = [{"context": ["Hi there."], "response": f"Reply number {i}."} for i in range(40)]
    assert cache.scores_for("combined", {}, items, progress=False)["per_item"]["combined"] == [0.5] * 40
    assert cache.scores_for("grade", {}, items, progress=False)["per_item"]["grade"] == [0.5] * 40
    assert sizes == [("combined", 40), ("grade", cache.CHUNK_SIZE)]


def test_the_grid_runs_its_model_based_metrics_in_the_precision_asked(rated_file, tmp_path, monkeypatch):
    """``dialeval benchmark --all --precision P``: the jobs whose runner takes ``precision`` get it (and
    the score cache keys it as run: float32 asked reuses the default's entries, bfloat16 does not);
    the others (multiref) are scored as always."""
    from dialeval.cli import main
    from dialeval.core.results import ItemScores
    from dialeval.metaeval import grid
    from dialeval.scoring import runners

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    asked = []

    def grade(items, **options):
        asked.append(options.get("precision"))
        return ItemScores({"grade": [float(len(it["response"])) for it in items]}, "metric:grade", [[] for _ in items])

    monkeypatch.setitem(runners.RUNNERS, "grade", grade)
    sets, metrics = [str(rated_file)], ["grade", "multiref"]
    cells = grid.run_grid(sets=sets, metrics=metrics, n_resamples=20, progress=False, precision="bfloat16")["cells"]
    assert {c["job"]: c["options"].get("precision") for c in cells} == {"multiref": None, "grade": "bfloat16"}
    assert asked == ["bfloat16"]
    plain = grid.run_grid(sets=sets, metrics=metrics, n_resamples=20, progress=False)["cells"]
    assert asked == ["bfloat16", None] and [c["from_cache"] for c in plain] == [True, False]
    again = grid.run_grid(sets=sets, metrics=["grade"], n_resamples=20, progress=False, precision="float32")["cells"]
    assert again[0]["from_cache"] and asked == ["bfloat16", None]
    assert main(["benchmark", "--all", "--metrics", "grade", "--datasets", *sets, "--resamples", "20",
                 "--precision", "bfloat16", "--output-dir", str(tmp_path / "out")]) == 0
    assert asked == ["bfloat16", None]  # the CLI's run of the same cell: from the cache of the first
    with pytest.raises(SystemExit):
        main(["benchmark", "--all", "--metrics", "grade", "--precision", "half"])
