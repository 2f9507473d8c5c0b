"""``dialeval compare`` and :mod:`dialeval.compare` end to end (issue 20): joining and validation,
the JSON pinned on a tiny hand example, a system against itself, a planted difference, the unpaired
tests against a plain loop and their size, the human-response pseudo-system, the report and plot."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dialeval import compare
from dialeval.cli import main
from dialeval.stats import paired as significance

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_A = ROOT / "examples" / "chatbot_a.jsonl"
EXAMPLE_B = ROOT / "examples" / "chatbot_b.jsonl"


def write_scored(path, per_item, metric="multiref", signature="metric:multiref|sig:1", ids=None, items=None):
    """A hand-made ``dialeval score`` output and its meta file."""
    n = len(next(iter(per_item.values())))
    ids = ids or [f"i{k}" for k in range(n)]
    with open(path, "w") as f:
        for k in range(n):
            scores = {sub: values[k] for sub, values in per_item.items()}
            f.write(json.dumps({"line": k + 1, "id": ids[k], "scores": scores, "signature": signature}) + "\n")
    meta = {"metric": metric, "options": {}, "input": "x.jsonl", "items": n if items is None else items,
            "signature": signature}
    Path(str(path) + ".meta.json").write_text(json.dumps(meta))
    return path


def write_responses(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return path


def cli_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------------------------------
# The JSON on a tiny hand example


def test_json_pinned_on_a_hand_computed_three_system_example(tmp_path, capsys):
    # A - B = [2, 3, 0, 3, 0], delta = 1.6. Exact AR (2**5 = 32 <= 10000 trials): the two zero
    # differences do not matter; of the 8 sign patterns of (2, 3, 3) only (+++) and (---) reach
    # |sum| >= 8, so p_ar = 2/8 = 0.25. C = A: every pattern ties -> p = 1. B - C mirrors A - B.
    # Holm over (0.25, 1, 0.25): sorted 0.25, 0.25, 1 -> 3 * 0.25 = 0.75, max(0.75, 2 * 0.25) = 0.75,
    # max(0.75, 1) = 1.
    a, b = [3, 5, 4, 6, 2], [1, 2, 4, 3, 2]
    files = [write_scored(tmp_path / f"{name}.jsonl", {"rougeL": values})
             for name, values in (("A", a), ("B", b), ("C", a))]
    out = cli_json(capsys, "compare", *map(str, files), "--json", "--quiet")
    assert out["systems"] == ["A", "B", "C"] and out["joined_on"] == "id" and out["input"] == "scored"
    block = out["metrics"]["multiref"]["scores"]["rougeL"]
    assert block["scale"]["range"] == "0 to 1" and block["scale"]["higher_is_better"] is True
    assert block["scale"]["direction"] == "higher = better"
    assert block["settings"]["ar_exact"] is True and block["n_items"] == 5
    means = {s["name"]: s["mean"] for s in block["systems"]}
    assert means == pytest.approx({"A": 4.0, "B": 2.4, "C": 4.0}, rel=1e-12)
    pairs = {(p["system_a"], p["system_b"]): p for p in block["pairs"]}
    assert list(pairs) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert pairs["A", "B"]["mean_diff"] == pytest.approx(1.6, rel=1e-12)
    assert pairs["B", "C"]["mean_diff"] == pytest.approx(-1.6, rel=1e-12)
    assert [pairs[k]["p_ar"] for k in pairs] == pytest.approx([0.25, 1.0, 0.25], rel=1e-12)
    assert [pairs[k]["p_ar_adjusted"] for k in pairs] == pytest.approx([0.75, 1.0, 0.75], rel=1e-12)
    assert pairs["A", "C"]["p_bootstrap"] == 1.0 and pairs["A", "C"]["diff_ci_low"] == 0.0
    assert not any(p["significant"] for p in pairs.values())
    assert block["warnings"] == ["no pair can be significant at alpha=0.05: the smallest attainable holm-corrected "
                                 "p-value of the ar test is 0.1875 (3 pair(s), 5 items; raise the number of "
                                 "permutations or items)"]  # 3 pairs x 2/32
    assert {s["name"]: s["rank"] for s in block["systems"]} == {"A": 1, "C": 1, "B": 1}

    # the bootstrap figures against a plain loop over the documented stream (seed 12345, 1000 resamples)
    rng = np.random.default_rng(np.random.SeedSequence(12345).spawn(2)[0])
    xa, xb = np.array(a, float), np.array(b, float)
    diffs, mean_a = [], []
    for _ in range(1000):
        idx = [min(int(u * 5), 4) for u in rng.random(5)]
        diffs.append(xa[idx].mean() - xb[idx].mean())
        mean_a.append(xa[idx].mean())
    diffs = np.array(diffs)
    p_loop = (1 + sum(abs(d - 1.6) >= 1.6 - 6e-9 for d in diffs)) / 1001
    assert pairs["A", "B"]["p_bootstrap"] == pytest.approx(p_loop, rel=1e-12)
    # Holm: p, p, 1 -> 3p, max(3p, 2p), 1
    assert pairs["A", "B"]["p_bootstrap_adjusted"] == pytest.approx(min(1.0, 3 * p_loop), rel=1e-12)
    assert (pairs["A", "B"]["diff_ci_low"], pairs["A", "B"]["diff_ci_high"]) == pytest.approx(
        tuple(np.quantile(diffs, [0.025, 0.975])), rel=1e-12)
    system_a = next(s for s in block["systems"] if s["name"] == "A")
    assert (system_a["ci_low"], system_a["ci_high"]) == pytest.approx(tuple(np.quantile(mean_a, [0.025, 0.975])),
                                                                      rel=1e-12)


def test_a_planted_difference_is_significant_and_ranked(tmp_path, capsys):
    rng = np.random.default_rng(7)
    base = rng.normal(0.5, 0.1, 60)
    better = base + 0.05 + rng.normal(0, 0.02, 60)
    files = [write_scored(tmp_path / "base.jsonl", {"rougeL": base.tolist()}),
             write_scored(tmp_path / "better.jsonl", {"rougeL": better.tolist()})]
    out = cli_json(capsys, "compare", *map(str, files), "--json", "--quiet")
    block = out["metrics"]["multiref"]["scores"]["rougeL"]
    (pair,) = block["pairs"]
    assert pair["significant"] and pair["p_ar"] < 0.001 and pair["p_bootstrap"] < 0.01
    assert pair["diff_ci_high"] < 0  # base - better
    assert [(s["name"], s["rank"]) for s in block["systems"]] == [("better", 1), ("base", 2)]


def test_join_on_id_reorders_and_line_order_does_not(tmp_path, capsys):
    a = write_scored(tmp_path / "a.jsonl", {"bleu2": [0.1, 0.2, 0.3, 0.9]}, ids=["w", "x", "y", "z"])
    b = write_scored(tmp_path / "b.jsonl", {"bleu2": [0.5, 0.1, 0.2, 0.3]}, ids=["z", "w", "x", "y"])
    by_id = cli_json(capsys, "compare", str(a), str(b), "--json", "--quiet")
    by_line = cli_json(capsys, "compare", str(a), str(b), "--json", "--quiet", "--join", "line")
    diff_id = by_id["metrics"]["multiref"]["scores"]["bleu2"]["pairs"][0]
    diff_line = by_line["metrics"]["multiref"]["scores"]["bleu2"]["pairs"][0]
    # on id, a - b = (0.1-0.1, 0.2-0.2, 0.3-0.3, 0.9-0.5): every swap pattern but (0.4) ties -> exact AR p = 1
    assert diff_id["mean_diff"] == pytest.approx(0.1, rel=1e-12) and diff_id["p_ar"] == pytest.approx(1.0, rel=1e-12)
    assert by_id["joined_on"] == "id" and by_line["joined_on"] == "line"
    assert diff_line["mean_diff"] == pytest.approx(0.1, rel=1e-12) and diff_line["p_ar"] < 1.0


@pytest.mark.parametrize("setup, message", [
    ("ids", "do not hold the same ids: only in .*a.jsonl: 'y'; only in .*b.jsonl: 'q'"),
    ("count", "as many records in every file"),
    ("signature", "scored with signature"),
    ("incomplete", "3 of 5 items scored"),
    ("duplicate", "id 'x' also on line 1"),
])
def test_mismatches_are_refused_with_a_clear_error(tmp_path, capsys, setup, message):
    a = write_scored(tmp_path / "a.jsonl", {"bleu2": [0.1, 0.2, 0.3]}, ids=["x", "w", "y"])
    b = {"ids": lambda: write_scored(tmp_path / "b.jsonl", {"bleu2": [0.1, 0.2, 0.3]}, ids=["x", "w", "q"]),
         "count": lambda: write_scored(tmp_path / "b.jsonl", {"bleu2": [0.1, 0.2]}),
         "signature": lambda: write_scored(tmp_path / "b.jsonl", {"bleu2": [0.1, 0.2, 0.3]}, ids=["x", "w", "y"],
                                           signature="metric:multiref|sig:2"),
         "incomplete": lambda: write_scored(tmp_path / "b.jsonl", {"bleu2": [0.1, 0.2, 0.3]}, ids=["x", "w", "y"],
                                            items=5),
         "duplicate": lambda: write_scored(tmp_path / "b.jsonl", {"bleu2": [0.1, 0.2, 0.3]}, ids=["x", "x", "y"]),
         }[setup]()
    join = ["--join", "line"] if setup == "count" else []
    assert main(["compare", str(a), str(b), "--quiet", *join]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_responses_must_share_contexts_and_references(tmp_path):
    rows = [{"id": "1", "context": ["hi"], "response": "hello", "references": ["hey"]},
            {"id": "2", "context": ["bye"], "response": "see you"}]
    a = write_responses(tmp_path / "a.jsonl", rows)
    b = write_responses(tmp_path / "b.jsonl", [rows[1], {**rows[0], "context": ["hi there"]}])
    with pytest.raises(ValueError, match=r"b.jsonl:2 and .*a.jsonl:1 are joined \(on id\) but have different contexts"):
        compare.read_systems([a, b])
    c = write_responses(tmp_path / "c.jsonl", [{**rows[0], "references": ["other"]}, rows[1]])
    with pytest.raises(ValueError, match="different references"):
        compare.read_systems([a, c])
    d = write_responses(tmp_path / "d.jsonl", [{**rows[0], "references": []}, rows[1]])
    joined = compare.read_systems([a, d])  # references of one file serve every system
    assert joined.items["d"][0]["references"] == ["hey"] and joined.items["d"][1]["references"] == []
    assert joined.human_items() is None  # item 2 has no reference: no human pseudo-system
    with pytest.raises(ValueError, match="only response files or only dialeval score outputs"):
        compare.read_systems([a, write_scored(tmp_path / "s.jsonl", {"bleu2": [0.1, 0.2]}, ids=["1", "2"])])
    with pytest.raises(ValueError, match="at least 2 system files"):
        compare.read_systems([a])


# ---------------------------------------------------------------------------------------------
# A real metric end to end (multiref on the README's example files)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DIALEVAL_CACHE", str(cache))
        result = compare.compare_files([EXAMPLE_A, EXAMPLE_B, EXAMPLE_A], ["multiref"], names=["A", "B", "A2"],
                                       scores=["bleu2", "rougeL"], progress=False)
        again = compare.compare_files([EXAMPLE_A, EXAMPLE_B, EXAMPLE_A], ["multiref"], names=["A", "B", "A2"],
                                      scores=["bleu2", "rougeL"], progress=False)
    return result, again


def test_examples_a_system_against_itself_is_never_significant_and_b_loses(example_run):
    result, again = example_run
    assert result == again  # seeded; the second run reads the score cache
    assert list(result["metrics"]["multiref"]["scores"]) == ["bleu2", "rougeL"]
    for sub, block in result["metrics"]["multiref"]["scores"].items():
        pairs = {(p["system_a"], p["system_b"]): p for p in block["pairs"]}
        same = pairs["A", "A2"]
        assert same["mean_diff"] == 0.0 and same["p_ar"] == 1.0 and same["p_bootstrap"] == 1.0
        assert not same["significant"]
        assert pairs["A", "B"]["significant"] and pairs["B", "A2"]["significant"]
        assert {s["name"]: s["rank"] for s in block["systems"]} == {"A": 1, "A2": 1, "B": 2}
        human = block["human_reference"]
        assert human["name"] == compare.HUMAN and human["ci_low"] <= human["mean"] <= human["ci_high"]


def test_the_human_pseudo_system_scores_the_first_reference_against_the_others(example_run, tmp_path, monkeypatch):
    from dialeval.multiref.runner import run_multiref

    result, _ = example_run
    rows = [json.loads(line) for line in EXAMPLE_A.read_text().splitlines()]
    per_item, _ = run_multiref([{"context": r["context"], "response": r["references"][0],
                                 "references": r["references"][1:]} for r in rows])
    human = result["metrics"]["multiref"]["scores"]["bleu2"]["human_reference"]
    assert human["mean"] == pytest.approx(np.mean(per_item["bleu2"]), rel=1e-12)


def test_report_and_plot_show_range_and_direction(example_run, tmp_path):
    result, _ = example_run
    text = compare.markdown(result)
    assert "### multiref: bleu2 (0 to 1, higher = better)" in text
    assert "| 1 | A |" in text and "| 2 | B |" in text and "*human responses*" in text
    assert "| A - B |" in text
    assert json.loads(compare.to_json(result)) == result
    path = compare.plot(result, tmp_path / "means.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------
# Unpaired tests (judgment sets whose systems answered different contexts)


def test_unpaired_against_a_plain_loop():
    a, b = [0.2, 0.9, 0.4, 0.7], [0.1, 0.3, 0.2]
    got = compare.compare_unpaired({"a": a, "b": b}, n_resamples=200, n_permutations=300, seed=3)
    rng_b, rng_p = (np.random.default_rng(s) for s in np.random.SeedSequence(3).spawn(2))
    xa, xb = np.array(a), np.array(b)
    boot_a = [xa[np.minimum((rng_b.random(4) * 4).astype(int), 3)].mean() for _ in range(200)]
    boot_b = [xb[np.minimum((rng_b.random(3) * 3).astype(int), 2)].mean() for _ in range(200)]
    delta = xa.mean() - xb.mean()
    threshold = delta - 1e-9 * 0.9
    diffs = np.array(boot_a) - np.array(boot_b)
    pooled = np.concatenate([xa, xb])
    count = 0
    for _ in range(300):
        shuffled = pooled[np.argsort(rng_p.random(7))]
        count += abs(shuffled[:4].mean() - shuffled[4:].mean()) >= threshold
    (pair,) = got.pairs
    assert pair.mean_diff == pytest.approx(delta, rel=1e-12)
    assert pair.p_bootstrap == pytest.approx((1 + np.sum(np.abs(diffs - delta) >= threshold)) / 201, rel=1e-12)
    assert pair.p_ar == pytest.approx((1 + count) / 301, rel=1e-12)
    assert (pair.diff_ci_low, pair.diff_ci_high) == pytest.approx(tuple(np.quantile(diffs, [0.025, 0.975])), rel=1e-12)
    assert (got.system("a").ci_low, got.system("a").ci_high) == pytest.approx(tuple(np.quantile(boot_a, [0.025, 0.975])),
                                                                              rel=1e-12)


def test_unpaired_tests_hold_their_size_and_find_a_planted_difference():
    rng = np.random.default_rng(11)
    scores = rng.normal(0, 1, 60)
    rejections = {"ar": 0, "bootstrap": 0}
    splits = 200
    for seed in range(splits):
        order = np.random.default_rng(1000 + seed).permutation(60)
        result = compare.compare_unpaired({"x": scores[order[:25]], "y": scores[order[25:]]}, n_resamples=499,
                                          n_permutations=499, seed=seed)
        rejections["ar"] += result.pairs[0].p_ar < 0.05
        rejections["bootstrap"] += result.pairs[0].p_bootstrap < 0.05
    assert 0.02 <= rejections["ar"] / splits <= 0.09, rejections
    assert 0.02 <= rejections["bootstrap"] / splits <= 0.10, rejections
    planted = compare.compare_unpaired({"x": scores[:30] + 1.0, "y": scores[30:]}, seed=0)
    assert planted.pairs[0].significant and planted.systems[0].name == "x"


def test_agreement_of_equals_the_core_human_agreement_on_paired_data():
    rng = np.random.default_rng(5)
    human = {s: (rng.normal(m, 1, 30)).tolist() for s, m in zip("abcd", (0, 0.2, 1.5, 3))}
    metric = {s: (np.array(v) * 0.5 + rng.normal(0, 0.3, 30)).tolist() for s, v in human.items()}
    core = significance.human_agreement(human, metric, seed=1, n_permutations=999)
    options = dict(seed=1, n_permutations=999)
    mine = compare.agreement_of(significance.compare(human, **options), significance.compare(metric, **options),
                                metric, "ar")
    assert mine.to_dict() == core.to_dict()


def test_pair_items_pairs_only_when_every_system_answered_the_same_contexts():
    contexts = [["a"], ["b"], ["b"], ["a"], ["b"], ["b"]]
    paired = compare.pair_items(contexts, ["s", "s", "s", "t", "t", "t"])
    assert paired == {"paired": True, "indices": {"s": [0, 1, 2], "t": [3, 4, 5]}, "shared": 3}
    unpaired = compare.pair_items([["a"], ["b"], ["a"], ["c"]], ["s", "s", "t", "t"])
    assert unpaired == {"paired": False, "indices": {"s": [0, 1], "t": [2, 3]}, "shared": 1}


def test_system_agreement_negates_a_lower_is_better_metric():
    contexts = [[str(i)] for i in range(4)] * 3
    systems = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    human = [1, 2, 1, 2, 3, 4, 3, 4, 5, 6, 5, 6]
    pairing = compare.pair_items(contexts, systems)
    metric = [-h for h in human]
    lower = compare.system_agreement(metric, human, pairing, higher_is_better=False, n_permutations=999)
    higher = compare.system_agreement(metric, human, pairing, higher_is_better=True, n_permutations=999)
    assert lower.kendall_tau == pytest.approx(1.0, rel=1e-12) and higher.kendall_tau == pytest.approx(-1.0, rel=1e-12)
    assert compare.system_agreement(metric[:8], human[:8], compare.pair_items(contexts[:8], systems[:8])) is None


def test_scored_outputs_compare_as_the_responses_do_and_carry_their_scales(example_run, tmp_path, capsys):
    outputs = []
    for name, source in (("A", EXAMPLE_A), ("B", EXAMPLE_B)):
        out = tmp_path / f"{name}.jsonl"
        inputs = source
        if name == "B":  # dialeval score needs the references in its own input
            refs = {json.loads(x)["id"]: json.loads(x)["references"] for x in EXAMPLE_A.read_text().splitlines()}
            rows = [json.loads(x) for x in EXAMPLE_B.read_text().splitlines()]
            inputs = write_responses(tmp_path / "b_in.jsonl", [{**r, "references": refs[r["id"]]} for r in rows])
        assert main(["score", "--metric", "multiref", "--input", str(inputs), "--output", str(out),
                     "--option", 'metrics=["bleu2"]', "--json"]) == 0
        outputs.append(out)
    capsys.readouterr()
    meta = json.loads(Path(str(outputs[0]) + ".meta.json").read_text())
    assert meta["scales"]["bleu2"]["range"] == "0 to 1" and meta["scales"]["bleu2"]["direction"] == "higher = better"
    assert meta["scales"]["greedy_matching"]["low"] == -1.0
    out = cli_json(capsys, "compare", *map(str, outputs), "--json", "--quiet")
    assert out["input"] == "scored" and out["metrics"]["multiref"]["options"] == {"metrics": ["bleu2"]}
    scored = out["metrics"]["multiref"]["scores"]["bleu2"]
    responses = example_run[0]["metrics"]["multiref"]["scores"]["bleu2"]
    assert {s["name"]: s["mean"] for s in scored["systems"]} == pytest.approx(
        {s["name"]: s["mean"] for s in responses["systems"] if s["name"] != "A2"}, rel=1e-12)
    assert "human_reference" not in scored  # scored outputs carry no references
    assert out["metrics"]["multiref"]["human_reference"] == "scored inputs carry no references"


def test_compare_options_go_to_the_one_metric_or_name_theirs():
    from dialeval.cli.common import metric_options

    assert metric_options(['metrics=["bleu2"]'], ["multiref"]) == {"multiref": {"metrics": ["bleu2"]}}
    assert metric_options(["fed:level=both", "multiref:rouge_beta=1.2"], ["multiref", "fed"]) == {
        "fed": {"level": "both"}, "multiref": {"rouge_beta": 1.2}}
    with pytest.raises(ValueError, match="METRIC:KEY=VALUE"):
        metric_options(["level=both"], ["multiref", "fed"])


def test_an_unknown_sub_score_is_refused(tmp_path, capsys):
    files = [write_scored(tmp_path / f"{n}.jsonl", {"bleu2": [0.1, 0.2, 0.3]}) for n in "ab"]
    assert main(["compare", *map(str, files), "--scores", "bleu9", "--quiet"]) == 2
    assert "no sub-score ['bleu9'] among the scores of ['multiref']: ['bleu2']" in capsys.readouterr().err
