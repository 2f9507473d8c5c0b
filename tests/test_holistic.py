"""Holistic metrics (Pang et al. 2020): normalisation, LM scores vs. a plain loop, entropy, consistency."""

import json
import math

import numpy as np
import pytest
import torch

from dialeval.holistic import (
    CUTOFFS_FILE, ConsistencyScorer, LikelihoodScorer, diversity, ngram_entropy, normalise,
    percentile_cutoff, same_speaker_turns,
)
from tiny_lm import tiny_gpt2


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_gpt2")
    model, tokenizer = tiny_gpt2(path)
    return path, model, tokenizer


def plain_mean_logprob(model, tokenizer, prefix_text: str | None, response: str) -> float:
    """The straightforward loop: one forward pass over eos + query + " " + response."""
    eos = [tokenizer.eos_token_id]
    if prefix_text is None:
        prefix, cont = eos, tokenizer.encode(response, add_special_tokens=False)
    else:
        prefix = eos + tokenizer.encode(prefix_text, add_special_tokens=False)
        cont = tokenizer.encode(" " + response, add_special_tokens=False)
    ids = torch.tensor([prefix + cont])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(ids).logits[0].double(), -1)
    total = sum(logprobs[t - 1, ids[0, t]].item() for t in range(len(prefix), ids.shape[1]))
    return total / len(cont)


QUERIES = ["Hi! How are you doing today?", "Do you like to read books?", "What kind of music do you listen to?"]
RESPONSES = ["I'm doing well, thanks for asking.", "I mostly read science fiction.", "Jazz!"]


def test_normalisation_by_hand():
    assert normalise([-1.0, -2.0, -4.0, -8.0, 0.0], cutoff=-4.0) == pytest.approx([0.75, 0.5, 0.0, 0.0, 1.0])
    raw = [-float(i) for i in range(1, 21)]
    assert percentile_cutoff(raw) == pytest.approx(-19.05)  # sorted -20..-1: -20 + 0.95 * 1
    scores = normalise(raw, percentile_cutoff(raw))
    assert min(scores) == 0.0 and max(scores) <= 1.0
    assert scores[-1] == 0.0 and scores[-2] == pytest.approx(1 - 19 / 19.05)  # -20 clips, -19 is just above
    with pytest.raises(ValueError, match="negative"):
        normalise([-1.0], cutoff=0.5)


@pytest.mark.parametrize("batch_size", [1, 8])
def test_coherence_and_fluency_equal_plain_loop(tiny, batch_size):
    path, model, tokenizer = tiny
    scorer = LikelihoodScorer(str(path), batch_size=batch_size)
    coherence = scorer.coherence_raw(QUERIES, RESPONSES)
    fluency = scorer.fluency_raw(RESPONSES)
    for q, r, c, f in zip(QUERIES, RESPONSES, coherence, fluency):
        assert c == pytest.approx(plain_mean_logprob(model, tokenizer, q, r), abs=1e-5)
        assert f == pytest.approx(plain_mean_logprob(model, tokenizer, None, r), abs=1e-5)
    # a query given as turns is joined with spaces
    joined = scorer.coherence_raw([["Hi!", "How are you doing today?"]], [RESPONSES[0]])
    assert joined[0] == pytest.approx(coherence[0], abs=1e-6)


def test_score_result_cutoffs_and_signature(tiny):
    path, _, _ = tiny
    scorer = LikelihoodScorer(str(path))
    result = scorer.score("coherence", RESPONSES, QUERIES)
    raw = result["coherence_raw_scores"]
    assert result["coherence_cutoff"] == pytest.approx(percentile_cutoff(raw))
    assert result["coherence_scores"] == pytest.approx(normalise(raw, percentile_cutoff(raw)))
    assert all(0.0 <= s <= 1.0 for s in result["coherence_scores"])
    assert "aspect:coherence" in result["signature"] and "cutoff:p5-of-set" in result["signature"]
    fixed = scorer.score("fluency", RESPONSES, cutoff=-100.0)
    assert fixed["fluency_scores"] == pytest.approx([1 - f / -100.0 for f in fixed["fluency_raw_scores"]])
    with pytest.raises(ValueError, match="no stored coherence cutoff"):
        scorer.score("coherence", RESPONSES, QUERIES, cutoff="model")
    (path / CUTOFFS_FILE).write_text(json.dumps({"cutoffs": {"coherence": -50.0, "fluency": -60.0}}))
    stored = LikelihoodScorer(str(path)).score("coherence", RESPONSES[:1], QUERIES[:1], cutoff="model")
    assert stored["coherence_cutoff"] == -50.0 and "cutoff:stored" in stored["signature"]
    auto = LikelihoodScorer(str(path)).score("fluency", RESPONSES[:1], cutoff="auto")
    assert auto["fluency_cutoff"] == -60.0
    (path / CUTOFFS_FILE).unlink()


def test_likelihood_bad_inputs(tiny):
    path, _, _ = tiny
    scorer = LikelihoodScorer(str(path))
    with pytest.raises(ValueError, match="mismatched lengths"):
        scorer.coherence_raw(QUERIES, RESPONSES[:2])
    with pytest.raises(ValueError, match=r"responses\[1\] is an empty string"):
        scorer.fluency_raw(["fine", " "])
    with pytest.raises(ValueError, match=r"queries\[0\]"):
        scorer.coherence_raw([None], ["fine"])
    with pytest.raises(ValueError, match="needs queries"):
        scorer.score("coherence", RESPONSES)
    with pytest.raises(ValueError, match="cutoff must be"):
        scorer.score("fluency", RESPONSES, cutoff="p5")


def test_ngram_entropy_by_hand():
    group = ["a b", "a c"]
    assert ngram_entropy(group, 1) == pytest.approx(1.5 * math.log(2))  # a: 1/2, b: 1/4, c: 1/4
    assert ngram_entropy(group, 2) == pytest.approx(math.log(2))  # (a b), (a c): no n-gram across texts
    assert ngram_entropy(group, 3) == 0.0
    result = diversity([group, ["same", "same"]])
    assert result["entropy1_scores"] == pytest.approx([1.5 * math.log(2), 0.0])
    assert result["diversity_scores"][0] == pytest.approx((1.5 * math.log(2) + math.log(2)) / 3)
    assert result["diversity"] == pytest.approx(np.mean(result["diversity_scores"]))


@pytest.mark.parametrize("groups, message", [
    ([], "non-empty list"),
    ([[]], r"response_groups\[0\] is empty"),
    ([["only one"]], "at least 2"),
    ([["a", None]], r"response_groups\[0\]\[1\] is None"),
    ("a b", "non-empty list"),
])
def test_diversity_bad_groups(groups, message):
    with pytest.raises(ValueError, match=message):
        diversity(groups)


class StubNLI:
    """Contradiction probability looked up by premise (the hypothesis is the response)."""

    model_name = "stub"

    def __init__(self, table):
        self.table = table
        self.calls = []

    def contradiction_probs(self, premises, hypotheses):
        self.calls.append(list(zip(premises, hypotheses)))
        return [self.table[p] for p in premises]


def test_same_speaker_turns():
    assert same_speaker_turns(["A1", "B1", "A2", "B2"], None, None) == ["A1", "A2"]
    assert same_speaker_turns(["B0", "A1", "B1", "A2", "B2"], None, None) == ["A1", "A2"]
    assert same_speaker_turns(["A1"], None, None) == []
    assert same_speaker_turns(["x", "y", "z"], ["bot", "user", "bot"], "user") == ["y"]
    assert same_speaker_turns(["x", "y", "z"], ["bot", "user", "bot"], None) == ["y"]  # speaker of [-2]
    with pytest.raises(ValueError, match="2 speakers for 3 turns"):
        same_speaker_turns(["x", "y", "z"], ["a", "b"], None)


def test_consistency_with_stub_nli():
    nli = StubNLI({"A1": 0.8, "A2": 0.2, "B1": 0.9, "B2": 0.9})
    result = ConsistencyScorer(nli).score(
        [["A1", "B1", "A2", "B2"], ["hello"], []], ["reply", "hi", "first words"]
    )
    assert result["consistency_scores"] == pytest.approx([0.5, 1.0, 1.0])  # 1 - mean(0.8, 0.2); none to contradict
    assert result["consistency_pairs_scores"] == [2.0, 0.0, 0.0]
    assert nli.calls == [[("A1", "reply"), ("A2", "reply")]]
    assert "nli:stub" in result["signature"]
    tagged = ConsistencyScorer(nli).score(
        [["A1", "B1", "A2"]], ["r"], speakers=[["a", "b", "a"]], response_speakers=["b"]
    )
    assert tagged["consistency_scores"] == pytest.approx([1 - 0.9])


@pytest.mark.parametrize("histories, responses, message", [
    ([["a"]], ["x", "y"], "mismatched lengths"),
    ([["a", ""]], ["x"], r"histories\[0\]\[1\] is an empty string"),
    ([["a"]], [""], r"responses\[0\] is an empty string"),
    ("ab", ["x"], "must be lists"),
])
def test_consistency_bad_inputs(histories, responses, message):
    with pytest.raises(ValueError, match=message):
        ConsistencyScorer(StubNLI({})).score(histories, responses)


def test_holistic_judgment_sets_load():
    from dialeval.correlation import inter_rater
    from dialeval.data import load_holistic

    coherence, fluency, consistency = (load_holistic(a) for a in ("coherence", "fluency", "consistency"))
    assert len(coherence) == 200 and all(len(it["ratings"]) == 10 and it["query"] for it in coherence)
    assert len(fluency) == 200 and all(len(it["ratings"]) == 10 for it in fluency)
    assert len(consistency) == 200 and {it["source"] for it in consistency} == {"CTG", "WS"}
    assert all(it["history"] and it["response"] and len(it["ratings"]) == 1 for it in consistency)
    agreement = inter_rater([it["ratings"] for it in coherence])
    assert agreement["raters"] == 10 and -1 <= agreement["spearman_mean"] <= agreement["spearman_max"] <= 1


def test_inter_rater_by_hand():
    from dialeval.correlation import inter_rater

    same = inter_rater([[1, 1], [2, 2], [3, 3], [5, 5]])
    assert same["spearman_mean"] == pytest.approx(1.0) and same["pearson_max"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match=">= 2"):
        inter_rater([[1], [2], [3]])


def test_evaluate_module_configurations(tiny):
    import dialeval

    path, _, _ = tiny
    div = dialeval.load("holistic", "diversity")
    assert div.compute(response_groups=[["a b", "a c"]])["entropy2"] == pytest.approx(math.log(2))
    coherence = dialeval.load("holistic", "coherence")
    a = coherence.compute(queries=QUERIES, responses=RESPONSES, model=str(path))
    scorer = coherence._cached_scorer
    b = coherence.compute(queries=[[q] for q in QUERIES], responses=RESPONSES, model=str(path))
    assert coherence._cached_scorer is scorer  # nothing reloaded
    assert a["coherence_raw_scores"] == pytest.approx(b["coherence_raw_scores"])
    fluency = dialeval.load("holistic", "fluency")
    assert len(fluency.compute(responses=RESPONSES, model=str(path), cutoff=-100.0)["fluency_scores"]) == 3
    with pytest.raises(ValueError, match="choose an aspect"):
        dialeval.load("holistic")
