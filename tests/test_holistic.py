"""Holistic metrics (Pang et al. 2020): normalisation, LM scores vs. a plain loop, entropy, consistency."""

import json
import math

import numpy as np
import pytest
import torch

from dialeval.holistic.normalisation import CUTOFFS_FILE, normalise, percentile_cutoff
from dialeval.holistic.scorer import ConsistencyScorer, LikelihoodScorer, diversity, ngram_entropy, same_speaker_turns
from dialeval.models.shipped import CHECKOUT_ROOT
from float_noise import LOGPROB, SUM
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
    assert normalise([-1.0, -2.0, -4.0, -8.0, 0.0], cutoff=-4.0) == pytest.approx([0.75, 0.5, 0.0, 0.0, 1.0], rel=1e-12)
    raw = [-float(i) for i in range(1, 21)]
    assert percentile_cutoff(raw) == pytest.approx(-19.05, rel=1e-12)  # sorted -20..-1: -20 + 0.95 * 1
    scores = normalise(raw, percentile_cutoff(raw))
    assert min(scores) == 0.0 and max(scores) <= 1.0
    assert scores[-1] == 0.0 and scores[-2] == pytest.approx(1 - 19 / 19.05, rel=1e-12)  # -20 clips, -19 is just above
    with pytest.raises(ValueError, match="negative"):
        normalise([-1.0], cutoff=0.5)


@pytest.mark.parametrize("batch_size", [1, 8])
def test_coherence_and_fluency_equal_plain_loop(tiny, batch_size):
    path, model, tokenizer = tiny
    scorer = LikelihoodScorer(str(path), batch_size=batch_size)
    coherence = scorer.coherence_raw(QUERIES, RESPONSES)  # default: mean (the paper's Eq. 1)
    fluency = scorer.fluency_raw(RESPONSES, reduction="mean")
    assert scorer.fluency_raw(RESPONSES) == pytest.approx(  # default: sum
        [f * len(tokenizer.encode(r)) for f, r in zip(fluency, RESPONSES)], rel=SUM, abs=LOGPROB)
    for q, r, c, f in zip(QUERIES, RESPONSES, coherence, fluency):
        assert c == pytest.approx(plain_mean_logprob(model, tokenizer, q, r), rel=SUM, abs=LOGPROB)
        assert f == pytest.approx(plain_mean_logprob(model, tokenizer, None, r), rel=SUM, abs=LOGPROB)
    # a query given as turns is joined with spaces
    joined = scorer.coherence_raw([["Hi!", "How are you doing today?"]], [RESPONSES[0]])
    assert joined[0] == pytest.approx(coherence[0], rel=SUM, abs=LOGPROB)


def plain_token_logprobs(model, prefix, cont) -> list[float]:
    ids = torch.tensor([prefix + cont])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(ids).logits[0].double(), -1)
    return [logprobs[t - 1, ids[0, t]].item() for t in range(len(prefix), ids.shape[1])]


def test_sum_reduction_and_empty_response_as_eos(tiny):
    """reduction="sum" drops the 1/T_r (the authors' code); an empty response is the EOS token alone."""
    path, model, tokenizer = tiny
    scorer = LikelihoodScorer(str(path))
    eos = tokenizer.eos_token_id
    mean = scorer.coherence_raw(QUERIES, RESPONSES)
    total = scorer.coherence_raw(QUERIES, RESPONSES, reduction="sum")
    lengths = [len(tokenizer.encode(" " + r)) for r in RESPONSES]
    assert min(lengths) > 1
    assert total == pytest.approx([m * n for m, n in zip(mean, lengths)], rel=SUM, abs=LOGPROB)
    empty = scorer.coherence_raw([QUERIES[0], QUERIES[0]], ["", "  "])
    by_hand = plain_token_logprobs(model, [eos] + tokenizer.encode(QUERIES[0]), [eos])
    assert empty == pytest.approx(by_hand * 2, rel=SUM, abs=LOGPROB)
    fluent = scorer.fluency_raw(["", RESPONSES[2]], reduction="sum")
    assert fluent[0] == pytest.approx(plain_token_logprobs(model, [eos], [eos])[0], rel=SUM, abs=LOGPROB)
    assert fluent[1] == pytest.approx(sum(plain_token_logprobs(model, [eos], tokenizer.encode(RESPONSES[2]))),
                                      rel=SUM, abs=LOGPROB)
    with pytest.raises(ValueError, match="reduction must be one of"):
        scorer.fluency_raw(RESPONSES, reduction="max")


def test_score_result_cutoffs_and_signature(tiny):
    path, _, _ = tiny
    scorer = LikelihoodScorer(str(path))
    result = scorer.score("coherence", RESPONSES, QUERIES, cutoff="set", pmi_weight=0)  # 0: Pang et al.'s
    raw = result["coherence_raw_scores"]
    assert result["coherence_cutoff"] == pytest.approx(percentile_cutoff(raw), rel=1e-12)
    assert result["coherence_scores"] == pytest.approx(normalise(raw, percentile_cutoff(raw)), rel=1e-12)
    assert all(0.0 <= s <= 1.0 for s in result["coherence_scores"])
    assert "aspect:coherence" in result["signature"] and "|reduction:mean|cutoff:p5-of-set|" in result["signature"]
    fixed = scorer.score("fluency", RESPONSES, cutoff=-1000.0)
    assert fixed["fluency_scores"] == pytest.approx([1 - f / -1000.0 for f in fixed["fluency_raw_scores"]], rel=1e-12)
    assert "|reduction:sum|cutoff:-1000|" in fixed["signature"]
    with pytest.raises(ValueError, match="no stored 'coherence' cutoff .*cutoff='set'"):
        scorer.score("coherence", RESPONSES, QUERIES, pmi_weight=0)  # the default is the model's stored cutoff
    (path / CUTOFFS_FILE).write_text(json.dumps({"cutoffs": {"coherence": -50.0, "fluency_sum": -60.0,
                                                             "coherence_sum": -70.0}}))
    try:
        stored = LikelihoodScorer(str(path))
        one = stored.score("coherence", RESPONSES[:1], QUERIES[:1], pmi_weight=0)
        assert one["coherence_cutoff"] == -50.0 and "cutoff:stored" in one["signature"]
        assert one["coherence_scores"] == pytest.approx([1 - one["coherence_raw_scores"][0] / -50.0], rel=1e-12)
        assert stored.score("coherence", RESPONSES[:1], QUERIES[:1], reduction="sum",
                            pmi_weight=0)["coherence_cutoff"] == -70.0
        assert stored.score("fluency", RESPONSES[:1])["fluency_cutoff"] == -60.0
        with pytest.raises(ValueError, match="no stored 'fluency' cutoff"):
            stored.score("fluency", RESPONSES[:1], reduction="mean")
    finally:
        (path / CUTOFFS_FILE).unlink()


def test_weighted_pmi_by_hand():
    """p_raw = c_raw - lam * f_raw (each summed, or a mean over its own tokens); the logistic maps the
    quartiles to 0.25 and 0.75 and their midpoint to 0.5, keeping the order."""
    from dialeval.holistic.normalisation import check_pmi_weight, logistic, pmi_anchors, pmi_raw

    coherence, fluency = [(-10.0, 5), (-6.0, 3)], [(-20.0, 4), (-4.0, 4)]
    assert pmi_raw(coherence, fluency, 0.5, "sum") == pytest.approx([0.0, -4.0], rel=1e-12)  # -10 + 10, -6 + 2
    assert pmi_raw(coherence, fluency, 1.0, "mean") == pytest.approx([3.0, -1.0], rel=1e-12)  # -2 + 5, -2 + 1
    assert logistic([-3.0, 1.0, -1.0, math.nan], (-3.0, 1.0))[:3] == pytest.approx([0.25, 0.75, 0.5], rel=1e-12)
    assert math.isnan(logistic([math.nan], (-3.0, 1.0))[0])
    assert logistic([-1e9, 1e9], (-3.0, 1.0)) == pytest.approx([0.0, 1.0], abs=1e-12)  # no overflow
    # quartiles of 0, -1, ..., -4 (c = -i, f = 0): -3 and -1
    assert pmi_anchors([(-float(i), 1) for i in range(5)], [(0.0, 1)] * 5, 0.7, "sum") == pytest.approx((-3.0, -1.0),
                                                                                                       rel=1e-12)
    with pytest.raises(ValueError, match="quartiles are equal"):
        pmi_anchors([(-1.0, 1)] * 4, [(0.0, 1)] * 4, 1.0, "sum")
    assert check_pmi_weight("coherence", None) == 0.85 and check_pmi_weight("coherence", 0) is None  # 0: the paper's
    assert check_pmi_weight("fluency", None) is None
    assert check_pmi_weight("coherence", 1) == 1.0
    for bad in (1.5, -0.1, "1", True):
        with pytest.raises(ValueError, match="pmi_weight"):
            check_pmi_weight("coherence", bad)
    with pytest.raises(ValueError, match="coherence only"):
        check_pmi_weight("fluency", 0.5)


def test_weighted_pmi_coherence_equals_plain_loop(tiny, tmp_path, monkeypatch):
    """pmi_weight: the log-probability given the query minus lam times the one alone, each from a
    plain forward pass and summed (reduction="sum") or, by default, a mean over its own tokens, with
    lam 0.85 unless given; the scores are the logistic through the set's (or the stored
    calibration's) quartiles; an echo of the query is flagged and gets the worst values."""
    from dialeval.holistic import normalisation as holistic
    from dialeval.holistic.scales import LOGPROB_FLOOR

    path, model, tokenizer = tiny
    eos = [tokenizer.eos_token_id]
    scorer = LikelihoodScorer(str(path), batch_size=2)
    given = [sum(plain_token_logprobs(model, eos + tokenizer.encode(q), tokenizer.encode(" " + r)))
             for q, r in zip(QUERIES, RESPONSES)]
    alone = [sum(plain_token_logprobs(model, eos, tokenizer.encode(r))) for r in RESPONSES]
    by_hand = [c - 0.4 * f for c, f in zip(given, alone)]
    lengths_given = [len(tokenizer.encode(" " + r)) for r in RESPONSES]
    lengths_alone = [len(tokenizer.encode(r)) for r in RESPONSES]
    default = scorer.score("coherence", RESPONSES, QUERIES, cutoff="set")  # lam 0.85, each term's mean
    assert default["coherence_pmi_scores"] == pytest.approx(
        [c / n - 0.85 * f / m for c, n, f, m in zip(given, lengths_given, alone, lengths_alone)], rel=SUM, abs=LOGPROB)
    assert "|reduction:mean|pmi:0.85|cutoff:q25-q75-of-set|" in default["signature"]
    result = scorer.score("coherence", RESPONSES, QUERIES, cutoff="set", pmi_weight=0.4, reduction="sum")
    assert result["coherence_pmi_scores"] == pytest.approx(by_hand, rel=SUM, abs=LOGPROB)
    assert result["coherence_raw_scores"] == pytest.approx(given, rel=SUM, abs=LOGPROB)
    anchors = (np.percentile(by_hand, 25), np.percentile(by_hand, 75))
    assert result["coherence_anchors"] == pytest.approx(anchors, rel=SUM, abs=LOGPROB)
    assert result["coherence_scores"] == pytest.approx(holistic.logistic(by_hand, anchors), abs=LOGPROB)
    assert "|reduction:sum|pmi:0.4|cutoff:q25-q75-of-set|" in result["signature"]
    pair = scorer.score("coherence", RESPONSES, QUERIES, cutoff=(-30.0, -10.0), pmi_weight=0.4, reduction="sum")
    assert pair["coherence_scores"] == pytest.approx(holistic.logistic(by_hand, (-30.0, -10.0)), abs=LOGPROB)
    assert "|cutoff:-30..-10|" in pair["signature"]
    plain = scorer.score("coherence", RESPONSES, QUERIES, cutoff="set", pmi_weight=0)  # 0: the paper's coherence
    assert "coherence_pmi_scores" not in plain and "pmi:" not in plain["signature"]
    echo = scorer.score("coherence", [QUERIES[0], RESPONSES[1]], [QUERIES[0], QUERIES[1]], cutoff=(-30.0, -10.0),
                        pmi_weight=1.0)
    assert echo["flags"][0] == ["echo"] and echo["coherence_scores"][0] == 0.0
    assert echo["coherence_pmi_scores"][0] == LOGPROB_FLOOR and echo["coherence_scores"][1] > 0.0
    with pytest.raises(ValueError, match="no stored calibration log-probabilities .*--logprobs --write-folder"):
        scorer.score("coherence", RESPONSES, QUERIES)  # the default cutoff: the stored calibration
    with pytest.raises(ValueError, match="quartiles are equal .* use cutoff='model'"):
        scorer.score("coherence", RESPONSES[:1], QUERIES[:1], cutoff="set", pmi_weight=0.4)  # one response: no scale
    for bad in (-5.0, (1.0, -1.0), "mean"):
        with pytest.raises(ValueError, match="takes cutoff 'model', 'set' or a pair"):
            scorer.score("coherence", RESPONSES, QUERIES, cutoff=bad, pmi_weight=0.4)
    with pytest.raises(ValueError, match="coherence only"):
        scorer.score("fluency", RESPONSES, pmi_weight=0.4)
    table = tmp_path / "calibration_logprobs.json"
    calibration = {"coherence": [[-float(i), 2] for i in range(9)], "fluency": [[-1.0, 2]] * 9}
    table.write_text(json.dumps({str(path): {"weights": scorer.model_name, "logprobs": calibration},
                                 "other": {"weights": "x", "logprobs": {}}}))
    monkeypatch.setattr(holistic, "CALIBRATION_LOGPROBS_FILE", table)
    stored = LikelihoodScorer(str(path)).score("coherence", RESPONSES, QUERIES, pmi_weight=0.5, reduction="sum")
    # -i + 0.5 over i = 0..8: quartiles -6 + .5, -2 + .5
    assert stored["coherence_anchors"] == pytest.approx([-5.5, -1.5], rel=1e-12)
    assert "|cutoff:stored-q25-q75|" in stored["signature"]
    assert holistic.stored_logprobs(str(path), "other-weights") is None


def test_reply_alone_pass_runs_once_for_coherence_and_fluency(tiny, monkeypatch):
    """Weighted PMI's second term and fluency are the same reply-alone log-likelihood: the runner
    scoring both runs each distinct reply alone through the model once (a repeated reply too), with the
    plain loop's values; a scorer call without a shared dict keeps nothing for the next."""
    from dialeval.holistic.runner import likelihood_scorer, run_holistic

    path, model, tokenizer = tiny
    scorer = likelihood_scorer(str(path), 16, None, "float32")
    fed: list[tuple[int, ...]] = []
    run = scorer.scorer.continuation_logprobs
    monkeypatch.setattr(scorer.scorer, "continuation_logprobs",
                        lambda prefix, conts: fed.extend(map(tuple, conts)) or run(prefix, conts))
    replies = RESPONSES + [RESPONSES[0]]
    items = [{"context": [q], "response": r} for q, r in zip(QUERIES + [QUERIES[1]], replies)]
    scores, _ = run_holistic(items, aspects=["coherence", "fluency"], model=str(path), cutoff="set",
                             pmi_weight=0.4, reduction="mean")
    assert sorted(fed) == sorted(tuple(tokenizer.encode(r)) for r in RESPONSES)  # each reply alone once
    assert scores["fluency_raw"] == pytest.approx(
        [plain_mean_logprob(model, tokenizer, None, r) for r in replies], rel=SUM, abs=LOGPROB)
    fed.clear()
    scorer.fluency_raw(RESPONSES[:1])
    scorer.fluency_raw(RESPONSES[:1])
    assert fed == [tuple(tokenizer.encode(RESPONSES[0]))] * 2


def test_calibration_written_into_a_model_folder_is_read_by_the_default_coherence(tiny, tmp_path):
    """`--write-folder` stores the pairs' log-probabilities (and cutoffs) in the folder's
    dialeval_holistic.json, which the scorer then reads before the shipped table; a name that is not a
    folder is refused."""
    import shutil

    from dialeval.holistic import calibration
    from dialeval.holistic.normalisation import pmi_anchors, read_cutoffs, read_logprobs

    path, _, _ = tiny
    folder = tmp_path / "my-lm"
    shutil.copytree(path, folder)
    with pytest.raises(ValueError, match="no stored calibration"):
        LikelihoodScorer(str(folder)).score("coherence", RESPONSES, QUERIES)
    cutoffs = calibration.main(["--model", str(folder), "--pairs", "6", "--write-folder"])
    logprobs = read_logprobs(folder)
    assert len(logprobs["coherence"]) == 6 and read_cutoffs(folder) == pytest.approx(cutoffs, rel=1e-12)
    result = LikelihoodScorer(str(folder)).score("coherence", RESPONSES, QUERIES)
    assert result["coherence_anchors"] == pytest.approx(pmi_anchors(logprobs["coherence"], logprobs["fluency"],
                                                                     0.85, "mean"), rel=1e-12)
    with pytest.raises(FileNotFoundError, match="not a local model folder"):
        calibration.main(["--model", "dialeval/no-such-lm", "--write-folder"])


def test_weighted_pmi_through_the_runner_takes_the_whole_inputs_quartiles(tiny):
    """A chunk scored with cutoff="set" and its whole input as population gets the input's quartiles."""
    from dialeval.holistic.runner import run_holistic

    path, _, _ = tiny
    items = [{"context": [q], "response": r} for q, r in zip(QUERIES, RESPONSES)]
    whole, _ = run_holistic(items, aspects=["coherence"], model=str(path), cutoff="set", pmi_weight=0.4)
    chunk, signature = run_holistic(items[:1], aspects=["coherence"], model=str(path), cutoff="set", pmi_weight=0.4,
                                    population=items)
    assert chunk["coherence"] == pytest.approx(whole["coherence"][:1], abs=LOGPROB)
    assert "|pmi:0.4|cutoff:q25-q75-of-input|" in signature
    both, _ = run_holistic(items[:1], aspects=["coherence", "fluency"], model=str(path), cutoff="set", pmi_weight=0.4,
                           population=items)  # fluency takes its own 5th percentile, no PMI
    assert both["coherence"] == pytest.approx(chunk["coherence"], abs=LOGPROB) and "fluency" in both
    with pytest.raises(ValueError, match="pmi_weight must be <= 1"):
        run_holistic(items, aspects=["coherence"], model=str(path), pmi_weight=2)


def test_known_cutoffs_table(tmp_path, monkeypatch):
    """Models that cannot carry a file (the GGUF-built local SmolLM2) have their cutoffs in dialeval's table."""
    from dialeval.holistic import normalisation as holistic

    table = tmp_path / "cutoffs.json"
    table.write_text(json.dumps({"smollm2-135m-instruct": {"cutoffs": {"coherence": -4.5, "fluency_sum": -40.0},
                                                           "weights": "smollm2-135m-instruct@abc"}}))
    monkeypatch.setattr(holistic, "KNOWN_CUTOFFS_FILE", table)
    assert holistic.stored_cutoffs("smollm2-135m-instruct") == {"coherence": -4.5, "fluency_sum": -40.0}
    assert holistic.known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@abc")["coherence"] == -4.5
    assert holistic.known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@def") == {}  # other weights
    # an entry that also records the tensors' hash holds for other files with those tensors (a GGUF
    # built on another install), and the hash is computed only when the files' hash differs
    table.write_text(json.dumps({"smollm2-135m-instruct": {"cutoffs": {"coherence": -4.5}, "tensors": "t1",
                                                           "weights": "smollm2-135m-instruct@abc"}}))
    asked = []
    assert holistic.known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@abc",
                                  lambda: asked.append(1) or "t1") == {"coherence": -4.5} and not asked
    assert holistic.known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@def", lambda: "t1") == {"coherence": -4.5}
    assert holistic.known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@def", lambda: "t2") == {}
    table.write_text(json.dumps({"smollm2-135m-instruct": {"cutoffs": {"coherence": -4.5, "fluency_sum": -40.0},
                                                           "weights": "smollm2-135m-instruct@abc"}}))
    assert holistic.stored_cutoffs("some-other-model") == {}
    folder = tmp_path / "smollm2-135m-instruct"
    folder.mkdir()
    (folder / "config.json").write_text("{}")  # what makes a folder a model for resolve_model
    (folder / holistic.CUTOFFS_FILE).write_text(json.dumps({"cutoffs": {"coherence": -5.0}}))
    # the model's own file wins; the table completes what it lacks
    assert holistic.stored_cutoffs(str(folder)) == {"coherence": -5.0, "fluency_sum": -40.0}


def test_shipped_cutoffs_table():
    """dialeval/holistic/cutoffs.json (python -m dialeval.holistic.calibration): every aspect and reduction
    for the un-tuned local LM; the sums that dialeval/smollm2-dailydialog's own file lacks, pinned to
    its weights. Its means there equal the training run's (same 1,000 validation pairs)."""
    from dialeval.holistic.normalisation import known_cutoffs

    untuned = known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@a0d0efd9a644")
    # the tensors it was calibrated on: the base the bundled SmolLM2 adapter checks before loading
    base = json.loads((CHECKOUT_ROOT / "hub" / "smollm2-dailydialog" / "dialeval_base.json").read_text())
    assert known_cutoffs("smollm2-135m-instruct", "smollm2-135m-instruct@000000000000",
                         lambda: base["tensor_hash"]) == untuned
    assert untuned == pytest.approx({"coherence": -5.7928, "coherence_sum": -123.578,
                                     "fluency": -9.4906, "fluency_sum": -151.028}, abs=1e-3)
    tuned = known_cutoffs("dialeval/smollm2-dailydialog", "dialeval/smollm2-dailydialog@90b38745a64d")
    assert tuned == pytest.approx({"coherence": -4.55607, "coherence_sum": -103.562,
                                   "fluency": -5.88270, "fluency_sum": -117.005}, abs=1e-3)
    assert known_cutoffs("dialeval/smollm2-dailydialog", "dialeval/smollm2-dailydialog@000000000000") == {}


def test_shipped_calibration_logprobs_are_the_bundled_models_and_reproduce_their_cutoffs():
    """dialeval/holistic/calibration_logprobs.json (python -m dialeval.holistic.calibration --logprobs
    --write): for the bundled Gemma adapter (the default), the bundled SmolLM2 adapter and the
    un-tuned SmolLM2 (the fallback), each recorded for the weights in hub/ (the un-tuned one for the
    tensors its cutoffs were taken from), over the same 1,000 pairs as the cutoffs stored for those
    weights, which its 5th percentiles reproduce (sums kept to 4 decimals); the default's quartiles
    (lam 0.85, each term a mean) and lam 0.95's summed ones pinned."""
    from dialeval.holistic.defaults import DEFAULT_LM
    from dialeval.holistic.normalisation import (
        CALIBRATION_LOGPROBS_FILE, KNOWN_CUTOFFS_FILE, REDUCTIONS, cutoff_key, known_cutoffs, pmi_anchors,
        read_cutoffs, reduce_logprobs,
    )
    from dialeval.models.hub import bundled_dir, weights_id

    table = json.loads(CALIBRATION_LOGPROBS_FILE.read_text(encoding="utf-8"))
    assert set(table) == {DEFAULT_LM, "dialeval/smollm2-dailydialog", "smollm2-135m-instruct"}
    for name, entry in table.items():
        folder = bundled_dir(name)
        if folder is not None:  # retrained weights need a new calibration
            assert entry["weights"] == weights_id(name, folder), name
        else:  # built from a GGUF on first use: the tensors of the shipped cutoffs
            assert entry["tensors"] == json.loads(KNOWN_CUTOFFS_FILE.read_text(encoding="utf-8"))[name]["tensors"]
        cutoffs = {**known_cutoffs(name), **(read_cutoffs(folder) if folder is not None else {})}
        for aspect in ("coherence", "fluency"):
            pairs = entry["logprobs"][aspect]
            assert len(pairs) == 1000
            for reduction in REDUCTIONS:
                assert percentile_cutoff(reduce_logprobs(pairs, reduction)) == pytest.approx(
                    cutoffs[cutoff_key(aspect, reduction)], abs=1e-3), (name, aspect, reduction)
    default = table[DEFAULT_LM]["logprobs"]
    assert pmi_anchors(default["coherence"], default["fluency"], 0.85, "mean") == pytest.approx(
        (-0.38081, 0.07552), abs=1e-4)
    assert pmi_anchors(default["coherence"], default["fluency"], 0.95, "sum") == pytest.approx(
        (-0.98031, 4.33509), abs=1e-3)


def test_likelihood_bad_inputs(tiny):
    path, _, _ = tiny
    scorer = LikelihoodScorer(str(path))
    with pytest.raises(ValueError, match="mismatched lengths"):
        scorer.coherence_raw(QUERIES, RESPONSES[:2])
    with pytest.raises(ValueError, match=r"responses\[1\] is None"):
        scorer.fluency_raw(["fine", None])
    with pytest.raises(ValueError, match=r"queries\[0\]"):
        scorer.coherence_raw([None], ["fine"])
    with pytest.raises(ValueError, match="needs queries"):
        scorer.score("coherence", RESPONSES)
    with pytest.raises(ValueError, match="cutoff must be"):
        scorer.score("fluency", RESPONSES, cutoff="p5")
    with pytest.raises(ValueError, match="cutoff must be"):
        scorer.score("fluency", RESPONSES, cutoff=2.0)  # a cutoff is a negative log-likelihood
    with pytest.raises(ValueError, match="has no CUDA"):
        LikelihoodScorer(str(path), device="cuda")


def test_ngram_entropy_by_hand():
    group = ["a b", "a c"]
    assert ngram_entropy(group, 1) == pytest.approx(1.5 * math.log(2), rel=1e-12)  # a: 1/2, b: 1/4, c: 1/4
    assert ngram_entropy(group, 2) == pytest.approx(math.log(2), rel=1e-12)  # (a b), (a c): no n-gram across texts
    assert ngram_entropy(group, 3) == 0.0
    result = diversity([group, ["same", "same"]])
    assert result["entropy1_scores"] == pytest.approx([1.5 * math.log(2), 0.0], rel=1e-12)
    assert result["diversity_scores"][0] == pytest.approx((1.5 * math.log(2) + math.log(2)) / 3, rel=1e-12)
    assert result["diversity"] == pytest.approx(np.mean(result["diversity_scores"]), rel=1e-12)


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
    assert result["consistency_scores"] == pytest.approx([0.5, 1.0, 1.0], rel=1e-12)  # 1 - mean(0.8, 0.2); none to contradict
    assert result["consistency_pairs_scores"] == [2.0, 0.0, 0.0]
    assert nli.calls == [[("A1", "reply"), ("A2", "reply")]]
    assert "nli:stub" in result["signature"]
    tagged = ConsistencyScorer(nli).score(
        [["A1", "B1", "A2"]], ["r"], speakers=[["a", "b", "a"]], response_speakers=["b"]
    )
    assert tagged["consistency_scores"] == pytest.approx([1 - 0.9], rel=1e-12)


def test_empty_response_is_not_rewarded_for_asserting_nothing():
    """Degenerate-response policy: an empty response is not asked (no NLI call), but gets the worst
    consistency (0) and its flag, where it used to get a perfect 1."""
    nli = StubNLI({"A1": 0.8, "A2": 0.2})
    result = ConsistencyScorer(nli).score([["A1", "B1", "A2", "B2"]] * 2, ["", "reply"])
    assert result["consistency_scores"] == pytest.approx([0.0, 0.5], rel=1e-12)
    assert result["consistency_pairs_scores"] == [0.0, 2.0]
    assert result["flags"] == [["empty"], []]
    assert nli.calls == [[("A1", "reply"), ("A2", "reply")]]


@pytest.mark.parametrize("histories, responses, message", [
    ([["a"]], ["x", "y"], "mismatched lengths"),
    ([["a", ""]], ["x"], r"histories\[0\]\[1\] is an empty string"),
    ([["a"]], [None], r"responses\[0\] is None"),
    ("ab", ["x"], "must be lists"),
])
def test_consistency_bad_inputs(histories, responses, message):
    with pytest.raises(ValueError, match=message):
        ConsistencyScorer(StubNLI({})).score(histories, responses)


def test_holistic_judgment_sets_load():
    from dialeval.stats.correlation import inter_rater
    from dialeval.holistic.data import load_holistic

    coherence, fluency, consistency = (load_holistic(a) for a in ("coherence", "fluency", "consistency"))
    assert len(coherence) == 200 and all(len(it["ratings"]) == 10 and it["query"] for it in coherence)
    assert len(fluency) == 200 and all(len(it["ratings"]) == 10 for it in fluency)
    assert len(consistency) == 200 and {it["source"] for it in consistency} == {"CTG", "WS"}
    assert all(it["history"] and it["response"] and len(it["ratings"]) == 1 for it in consistency)
    coherent = inter_rater([it["ratings"] for it in coherence])
    fluent = inter_rater([it["ratings"] for it in fluency])
    # leave-one-rater-out agreement (paper, Tables 3-4: 0.57 / 0.87 and 0.70 / 0.85 Spearman)
    assert coherent["raters"] == 10
    assert (coherent["spearman_mean"], coherent["spearman_max"]) == pytest.approx((0.574, 0.870), abs=5e-4)
    assert (coherent["pearson_mean"], coherent["pearson_max"]) == pytest.approx((0.607, 0.909), abs=5e-4)
    assert (fluent["spearman_mean"], fluent["spearman_max"]) == pytest.approx((0.698, 0.852), abs=5e-4)
    assert (fluent["pearson_mean"], fluent["pearson_max"]) == pytest.approx((0.697, 0.877), abs=5e-4)


def test_benchmark_prints_published_values_beside_measured_rows():
    """Table 3 / 4 / 8 values come from paper_tables.json and sit on the rows they compare with."""
    from dialeval.holistic.benchmark import format_holistic, published_rows

    coherence = published_rows("coherence", ["coherence", "coherence_raw", "inter-rater (mean)", "inter-rater (max)"])
    assert coherence["coherence"] == {"GPT-2 w/o Fine-tune": [0.59, 0.65], "GPT-2 w/ Fine-tune": [0.67, 0.76]}
    assert coherence["inter-rater (max)"] == {"Inter-Rater Max": [0.91, 0.87]}
    assert published_rows("fluency", ["fluency"])["fluency"]["GPT-2 w/ Fine-tune"] == [0.82, 0.81]
    consistency = published_rows("consistency", ["consistency", "consistency (CTG)", "consistency (WS)"])
    assert consistency == {"consistency": {}, "consistency (CTG)": {"CTG Dataset": [0.65, 0.66]},
                           "consistency (WS)": {"WS Dataset": [0.59, 0.64]}}
    from dialeval.data import paper

    c = {"spearman": 0.5, "spearman_p": 0.01, "pearson": 0.4, "pearson_p": 0.02, "n": 100}
    text = format_holistic({
        "aspect": "consistency", "dataset": "holistic-consistency", "n": 200, "raters": 1, "model": "m",
        "signature": "sig", "inter_rater": None, "correlations": dict.fromkeys(consistency, c),
        "published": consistency, "paper": paper.table("pang2020_holistic", "table8"),
        "paper_source": "Pang et al. 2020, ACL, Table 8",
    })
    ctg_row = next(line for line in text.splitlines() if line.startswith("consistency (CTG)"))
    assert ctg_row.split()[-3:] == ["Dataset", "0.650", "0.660"]
    # the rated items are the augmented CTG / WS sets: the un-augmented baseline row (0.27) is never compared
    assert "0.27" not in text and "'Baseline Dataset' has no released data" in text and "not transcribed" not in text
    assert "WS Dataset 0.59 / 0.64; CTG Dataset 0.65 / 0.66" in text
    pooled = next(line for line in text.splitlines() if line.startswith("consistency "))
    assert pooled.split()[-1] == "100" and "Baseline" not in pooled  # no paper cell for the pooled set
    from dialeval.holistic.spec import published

    assert published("holistic-consistency", "holistic", "consistency") is None  # the grid shows no 0.27
    assert published("holistic-coherence", "holistic", "coherence") == (
        "pang2020_holistic", "table3", "GPT-2 w/ Fine-tune", "turn_spearman")


def test_inter_rater_by_hand():
    from dialeval.stats.correlation import inter_rater

    same = inter_rater([[1, 1], [2, 2], [3, 3], [5, 5]])
    assert same["spearman_mean"] == pytest.approx(1.0, rel=1e-12) and same["pearson_max"] == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match=">= 2"):
        inter_rater([[1], [2], [3]])


def test_evaluate_module_configurations(tiny):
    import dialeval

    path, _, _ = tiny
    div = dialeval.load("holistic", "diversity")
    assert div.compute(response_groups=[["a b", "a c"]])["entropy2"] == pytest.approx(math.log(2), rel=1e-12)
    coherence = dialeval.load("holistic", "coherence")
    a = coherence.compute(queries=QUERIES, responses=RESPONSES, model=str(path), cutoff="set")
    scorer = coherence._cached_scorer
    with pytest.raises(ValueError, match=r"takes cutoff 'model', 'set' or a pair .*-9\.0; .*pass pmi_weight=0"):
        coherence.compute(queries=QUERIES, responses=RESPONSES, model=str(path), cutoff=-9.0)
    b = coherence.compute(queries=[[q] for q in QUERIES], responses=RESPONSES, model=str(path), cutoff=-9.0,
                          pmi_weight=0)
    assert coherence._cached_scorer is scorer  # nothing reloaded
    assert a["coherence_raw_scores"] == pytest.approx(b["coherence_raw_scores"], rel=SUM, abs=LOGPROB)
    pmi = coherence.compute(queries=QUERIES, responses=RESPONSES, model=str(path), cutoff="set", pmi_weight=0.5)
    assert pmi["coherence_pmi_scores"] == pytest.approx(
        [c - 0.5 * f for c, f in zip(scorer.coherence_raw(QUERIES, RESPONSES, reduction="mean"),
                                     scorer.fluency_raw(RESPONSES, reduction="mean"))], rel=SUM, abs=LOGPROB)
    fluency = dialeval.load("holistic", "fluency")
    assert len(fluency.compute(responses=RESPONSES, model=str(path), cutoff=-100.0)["fluency_scores"]) == 3
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['pmi_weight'\]"):
        fluency.compute(responses=RESPONSES, model=str(path), pmi_weight=0.5)
    with pytest.raises(ValueError, match="choose an aspect"):
        dialeval.load("holistic")
    assert div.compute(response_groups=[["", "a b"]])["entropy1"] == pytest.approx(math.log(2), rel=1e-12)  # "" adds no n-gram


@pytest.mark.parametrize("aspect, kwargs, message", [
    ("coherence", {"responses": ["fine"]}, r"needs queries=\[\.\.\.\]"),
    ("coherence", {"queries": [], "responses": []}, "queries must be a non-empty list"),
    ("fluency", {"responses": []}, "responses must be a non-empty list"),
    ("fluency", {"responses": ["a"], "mdoel": "x"}, r"unknown option\(s\) \['mdoel'\]"),
    ("fluency", {"responses": ["a"], "device": "cuda"}, "has no CUDA"),
    ("fluency", {"predictions": ["a"]}, r"takes responses, not predictions="),
    ("coherence", {"queries": ["q", "r"], "responses": ["a"]}, "mismatched lengths"),
    ("consistency", {"histories": [["a"]], "responses": ["b"], "model": "minilm-nli"}, "nli='...'"),
    ("consistency", {"histories": [["a"]]}, r"needs responses=\[\.\.\.\]"),
    ("diversity", {"response_groups": [["a", "b"]], "model": "x"}, r"unknown option\(s\) \['model'\]"),
    ("diversity", {}, r"needs response_groups"),
])
def test_evaluate_module_bad_input_names_the_cause(aspect, kwargs, message):
    import time

    import dialeval

    module = dialeval.load("holistic", aspect)
    began = time.monotonic()
    with pytest.raises(ValueError, match=message):
        module.compute(**kwargs)
    assert time.monotonic() - began < 5
