"""The multi-reference metric: Eq. 1 max, Eq. 2 recall, diversity, bad inputs, evaluate loading."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dialeval.multiref import QUALITY_METRICS, MultiRefScorer

PRED = ["i am fine , thanks .", "sure , how much is it ?"]
REFS = [["fine , thank you .", "i am good .", "not bad at all"], ["how much ?", "no thanks ."]]


@pytest.fixture(scope="module")
def scorer():
    return MultiRefScorer()


def test_multi_reference_is_max_of_single_reference(scorer):
    multi = scorer.quality(PRED, REFS)
    singles = [scorer.quality(PRED, [r[k % len(r)] for r in REFS]) for k in range(3)]
    for name in QUALITY_METRICS:
        for i in range(len(PRED)):
            best = max(s[f"{name}_scores"][i] for s in singles)
            assert multi[f"{name}_scores"][i] == pytest.approx(best), name
        assert multi[name] == pytest.approx(sum(multi[f"{name}_scores"]) / len(PRED))
    assert "nrefs:var" in multi["signature"] and "tok:lower-regex" in multi["signature"]


def test_plain_reference_list_means_one_reference(scorer):
    a = scorer.quality(["hello there"], ["hello there !"])
    b = scorer.quality(["hello there"], [["hello there !"]])
    assert a == b


def test_recall_distinct_on_toy_group():
    scorer = MultiRefScorer(metrics=["rougeL"])
    out = scorer.diversity([["a b", "c d"]], [["a b", "c d", "e f"]])
    assert out["recall_rougeL"] == pytest.approx(2 / 3)  # references covered: 1, 1, 0
    assert out["distinct1"] == pytest.approx(1.0) and out["distinct2"] == pytest.approx(1.0)
    unref = scorer.diversity([["a b a", "a c"]])
    assert "recall_rougeL" not in unref
    assert unref["distinct1"] == pytest.approx(3 / 5)
    same = scorer.diversity([["the cat sat down"] * 3])
    assert same["self_bleu_diversity"] == pytest.approx(0.0)


@pytest.mark.parametrize(
    "predictions, references, message",
    [
        (["ok", ""], [["a"], ["b"]], r"predictions\[1\] is an empty string"),
        (["ok", "fine"], [["a"], []], r"references\[1\] is an empty list"),
        (["ok"], [["a"], ["b"]], "2 items but there are 1 predictions"),
        (["ok", 7], [["a"], ["b"]], r"predictions\[1\] must be a string"),
        (["ok", None], [["a"], ["b"]], r"predictions\[1\] is None"),
        (["ok"], [["a", None]], r"references\[0\]\[1\] is None"),
        ("ok", ["a"], "must be a list"),
    ],
)
def test_bad_inputs(scorer, predictions, references, message):
    with pytest.raises(ValueError, match=message):
        scorer.quality(predictions, references)


def test_bad_diversity_inputs(scorer):
    with pytest.raises(ValueError, match=r"predictions\[0\] has 1 hypothesis"):
        scorer.diversity([["only one"]])
    with pytest.raises(ValueError, match="1 items but there are 2 groups"):
        scorer.diversity([["a", "b"], ["c", "d"]], [["x"]])
    with pytest.raises(ValueError, match="unknown multiref sub-metric"):
        MultiRefScorer(metrics=["bleu5"])


def test_three_ways_to_load_offline(tmp_path):
    """evaluate.load('dialeval/multiref'), dialeval.load and evaluate.load('metrics/multiref')."""
    script = textwrap.dedent(
        """
        import json, evaluate, dialeval
        from dialeval.modules import register, METRICS_ROOT
        register()
        kwargs = dict(predictions=["hi there"], references=[["hi there !"]], metrics=["bleu1", "rougeL"])
        out = {}
        for how, load in [
            ("hub-id", lambda: evaluate.load("dialeval/multiref")),
            ("dialeval", lambda: dialeval.load("multiref")),
            ("checkout", lambda: evaluate.load(str(METRICS_ROOT / "multiref"))),
        ]:
            module = load()
            out[how] = [module.compute(**kwargs)["rougeL"], type(module).__module__]
        print(json.dumps(out))
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert [v[0] for v in out.values()] == pytest.approx([0.8] * 3)  # LCS 2, P = 1, R = 2/3
    assert "dialeval--multiref" in out["hub-id"][1]


def test_evaluate_module_caches_scorer_and_takes_both_feature_sets():
    import dialeval

    module = dialeval.load("multiref")
    a = module.compute(predictions=["hi there"], references=["hi there !"], metrics=["bleu1"])
    scorer = module._cached_scorer
    b = module.compute(predictions=["hi there"], references=[["hi there !", "yo"]], metrics=["bleu1"])
    assert module._cached_scorer is scorer
    assert a["bleu1"] == pytest.approx(b["bleu1"])
    diversity = dialeval.load("multiref", "diversity")
    out = diversity.compute(predictions=[["a b c", "a b d"]], references=[[]], metrics=["bleu1"])
    assert out["distinct1"] == pytest.approx(4 / 6)
