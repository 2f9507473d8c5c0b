"""SSREM (Bak & Oh 2020): negative pools, fallback, f / g / h formulas, training, save/load, bad inputs."""

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from dialeval.ssrem import scorer as ssrem
from dialeval.data.corpora import Turn
from dialeval.core.resources import WordVectors
from float_noise import ABSOLUTE, RELATIVE, ROUNDING, SUM
from training_scripts import script

ssrem_training = script("ssrem")  # training/ssrem.py: options, then dialeval.ssrem.training.train

# 3 speakers, 4 conversations. C speaks once, in one conversation, to A only.
CORPUS = [
    [Turn("A", "a0 hello there"), Turn("B", "b0 hi"), Turn("A", "a1 how are you"), Turn("B", "b1 fine thanks")],
    [Turn("A", "a2 good morning"), Turn("B", "b2 morning")],
    [Turn("A", "a3 hey stranger"), Turn("C", "c0 who are you"), Turn("A", "a4 a friend")],
    [Turn("B", "b3 back again"), Turn("A", "a5 welcome back")],
]


def uid(sampler, text_prefix):
    return next(i for i, u in enumerate(sampler.utterances) if u.text.startswith(text_prefix + " "))


def texts(sampler, ids):
    return sorted(sampler.utterances[i].text.split()[0] for i in ids)


@pytest.fixture()
def sampler():
    return ssrem.NegativeSampler(CORPUS)


def test_each_negative_type_comes_from_its_own_pool(sampler):
    a1 = uid(sampler, "a1")
    assert texts(sampler, sampler.pool("SC", a1)) == ["a0"]
    assert texts(sampler, sampler.pool("SP", a1)) == ["a2", "a5"]  # A with B, other conversations
    assert texts(sampler, sampler.pool("SS", a1)) == ["a3", "a4"]  # A with another partner (C)
    assert texts(sampler, sampler.pool("RN", a1)) == ["b0", "b1", "b2", "b3", "c0"]  # anyone but A
    rng = random.Random(0)
    for kind, pool in (("SC", {"a0"}), ("SP", {"a2", "a5"}), ("SS", {"a3", "a4"}), ("RN", {"b0", "b1", "b2", "b3", "c0"})):
        drawn = {sampler.utterances[sampler.draw(kind, a1, rng, set())[0]].text.split()[0] for _ in range(40)}
        assert drawn == pool  # every member reachable, nothing outside


def test_empty_pools_fall_back_to_the_next_wider_one(sampler):
    rng = random.Random(1)
    b1 = uid(sampler, "b1")  # B talks only to A: no same-speaker-other-partner utterance
    assert sampler.pool("SS", b1) == []
    assert all(sampler.draw("SS", b1, rng, set())[1] == "RN" for _ in range(10))
    c0 = uid(sampler, "c0")  # C: one utterance, one conversation -> SC, SP, SS empty -> RN
    for kind in ("SC", "SP", "SS"):
        i, drawn = sampler.draw(kind, c0, rng, set())
        assert drawn == "RN" and sampler.utterances[i].speaker != "C"
    ids, types = sampler.candidates(c0, 1, "speaker", rng)
    assert ids[0] == c0 and types == ["GT", "RN", "RN", "RN", "RN"] and len(set(ids)) == 5


def test_candidates_avoid_duplicates_and_random_mode_draws_only_random(sampler):
    rng = random.Random(2)
    a1 = uid(sampler, "a1")
    ids, types = sampler.candidates(a1, 1, "speaker", rng)
    assert types == ["GT", "SC", "SP", "SS", "RN"]
    assert len({sampler.utterances[i].text for i in ids}) == 5
    ids, types = sampler.candidates(a1, 1, "random", rng)
    assert types == ["GT"] + ["RN"] * 4 and all(sampler.utterances[i].speaker != "A" for i in ids[1:])
    assert sampler.context(a1, 2) == ["a0 hello there", "b0 hi"]
    assert sampler.context(a1, 1) == ["b0 hi"]


def test_pool_level_sizes_and_the_min_tokens_rule():
    """Level sizes on the tiny corpus, all texts (min_tokens=0) and only texts of >= 3 word tokens."""
    everything = ssrem.NegativeSampler(CORPUS)
    a1, c0, b1 = uid(everything, "a1"), uid(everything, "c0"), uid(everything, "b1")
    assert everything.level_sizes(a1) == {"SC": 1, "SP": 2, "SS": 2, "RN": 5}
    assert everything.level_sizes(c0) == {"SC": 0, "SP": 0, "SS": 0, "RN": 10}
    assert everything.level_sizes(b1) == {"SC": 1, "SP": 2, "SS": 0, "RN": 7}
    # >= 3 word tokens keeps a0 hello there, a1 how are you, a2 good morning, a3 hey stranger,
    # a4 a friend, a5 welcome back, b1 fine thanks, b3 back again, c0 who are you (not b0 hi, b2 morning)
    content = ssrem.NegativeSampler(CORPUS, min_tokens=3)
    assert len(content.utterances) == 11  # every utterance is still a target
    assert content.level_sizes(a1) == {"SC": 1, "SP": 2, "SS": 2, "RN": 3}
    assert texts(content, content.pool("RN", a1)) == ["b1", "b3", "c0"]
    assert content.level_sizes(b1) == {"SC": 0, "SP": 1, "SS": 0, "RN": 7}
    assert [ssrem.word_count(t) for t in ("b0 hi", "ok , fine !", "a b c")] == [2, 2, 3]


def test_g_takes_the_best_of_several_references():
    stub = type("Stub", (), {"g_vectors": TOY})()
    g = ssrem.SSREMScorer.g(stub, ["a b", "a b", "a b"], [["c d"], ["c d", "a b", "zzz"], ["zzz", "c d"]], "wms")
    assert g == pytest.approx([math.exp(-1), 1.0, math.exp(-1)], rel=ROUNDING)  # the max, not the mean (would be 0.456)


def test_bootstrap_interval_and_parameter_cosine():
    low, high = ssrem.bootstrap_ci([0.0, 1.0] * 50, resamples=1000, seed=0)
    assert low < 0.5 < high and high - low == pytest.approx(0.2, abs=0.03)  # ~ 2 * 1.96 * 0.05
    assert ssrem.bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    a, b = ssrem.bilinear_module(2), ssrem.bilinear_module(2)
    with torch.no_grad():
        a.M.copy_(torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
        b.M.copy_(torch.tensor([[1.0, 1.0], [0.0, 0.0]]))
    assert ssrem.parameter_cosine(a, b) == pytest.approx(1 / math.sqrt(2), rel=ROUNDING)


def test_split_is_by_conversation_and_stable():
    parts = ssrem.split_corpus(CORPUS)
    assert sum(len(v) for v in parts.values()) == 4
    assert ssrem.split_corpus(list(reversed(CORPUS))) == {k: list(reversed(v)) for k, v in parts.items()}


def test_f_loss_and_h_formulas():
    module = ssrem.bilinear_module(2)
    with torch.no_grad():
        module.M.copy_(torch.eye(2))
    scores = module(torch.tensor([[1.0, 0.0]]), torch.tensor([[[1.0, 0.0], [0.0, 1.0], [2.0, 5.0]]]))
    assert scores[0].tolist() == pytest.approx([1.0, 0.0, 2.0], rel=ROUNDING)  # the bilinear form itself, no tanh
    loss = ssrem.candidate_loss(torch.tensor([[1.0, 0.0, 0.0]]))
    assert loss.item() == pytest.approx(math.log(1 + 2 / math.e), rel=ROUNDING)
    h = ssrem.combine([-1.0, 0.0, 1.0], [0.2, 0.6, 0.4], (-1.0, 1.0), (0.2, 0.6))
    assert h == pytest.approx([0.0, 0.75, 0.75], rel=1e-12)
    assert ssrem.minmax([0.0, 2.0, 5.0], 1.0, 3.0) == [0.0, 0.5, 1.0]  # clipped
    assert ssrem.minmax([3.0, 3.0], 3.0, 3.0) == [0.5, 0.5]


TOY = WordVectors("toy", {"a": 0, "b": 1, "c": 2, "d": 3},
                  np.array([[0, 0], [3, 4], [0, 1], [3, 3]], dtype=np.float32))


def test_mover_similarity_is_exp_minus_earth_movers_distance():
    # a->c and b->d cost 1 each (the crossed plan costs 3*sqrt(2) each): WMD = 1
    assert ssrem.mover_similarity(["a", "b"], ["c", "d"], TOY, "wms") == pytest.approx(math.exp(-1), rel=ROUNDING)
    # one bag of words + sentence means: a .25, b .25, mean(a,b) .5 vs c .25, d .25, mean(c,d) .5
    # both means are (1.5, 2): WMD = .25 * 1 + .25 * 1 = .5
    assert ssrem.mover_similarity(["a", "b"], ["c", "d"], TOY, "s+wms") == pytest.approx(math.exp(-0.5), rel=ROUNDING)
    # sentences split at "." and weighted by length: (a b) mean (1.5, 2) w 2/3, (b) w 1/3 vs a at 0
    assert ssrem.mover_similarity(["a", "b", ".", "b"], ["a"], TOY, "sms") == pytest.approx(
        math.exp(-(2 / 3 * 2.5 + 1 / 3 * 5)), rel=ROUNDING)
    assert ssrem.mover_similarity(["a"], ["a"], TOY, "sms") == pytest.approx(1.0, rel=ROUNDING)
    assert ssrem.mover_similarity(["zzz"], ["a"], TOY, "sms") == 0.0
    with pytest.raises(ValueError, match="mover"):
        ssrem.mover_similarity(["a"], ["a"], TOY, "bert")


def write_corpus(path: Path, conversations) -> Path:
    with open(path, "w") as f:
        for conversation in conversations:
            f.write(json.dumps({"turns": [{"speaker": t.speaker, "text": t.text} for t in conversation]}) + "\n")
    return path


TOPICS = {
    "food": ["pizza", "pasta", "cheese", "bread", "soup", "salad", "cake", "rice"],
    "sport": ["football", "soccer", "tennis", "golf", "hockey", "baseball", "basketball", "rugby"],
    "music": ["guitar", "piano", "violin", "drums", "jazz", "opera", "concert", "song"],
    "weather": ["rain", "snow", "sunny", "storm", "wind", "cloudy", "cold", "hot"],
}


def topical_corpus(n: int = 80, seed: int = 0):
    """Conversations that each stay on one topic: context and true response share topic words."""
    rng = random.Random(seed)
    speakers = [f"s{i}" for i in range(6)]
    out = []
    for c in range(n):
        topic = list(TOPICS)[c % len(TOPICS)]
        a, b = rng.sample(speakers, 2)
        out.append([Turn([a, b][j % 2], " ".join(["i", "like"] + rng.sample(TOPICS[topic], 3) + [f"n{c}x{j}"]))
                    for j in range(6)])
    return out


def test_tiny_training_lowers_the_loss_and_round_trips(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))  # the encodings cache
    corpus = write_corpus(tmp_path / "corpus.jsonl", topical_corpus())
    out = ssrem_training.main(["--tiny", "--corpus", str(corpus), "--output", str(tmp_path / "model"),
                               "--threads", "1", "--lr", "0.01", "--per-type", "1"])
    report = json.loads((out / "dialeval_training.json").read_text())
    losses = report["losses"]
    assert report["step"] == 30 and len(losses) == 30
    assert losses[0] == pytest.approx(math.log(5), abs=1e-4)  # M = 0: all 5 candidates equally likely; 4 decimals
    assert np.mean(losses[-10:]) < losses[0] - 0.1
    assert set(report["heldout"]["f"]) == {"GT", "SC", "SP", "SS", "RN"}
    config = json.loads((out / ssrem.CONFIG_FILE).read_text())
    assert config["negatives"] == "speaker" and config["dim"] == 50 and len(config["minmax"]["f"]) == 2

    # save/load round trip: the scorer reproduces v(c)^T M v(r) with the saved M and centre
    scorer = ssrem.SSREMScorer(out)
    M = ssrem.load_module(out).M.detach().numpy()
    assert np.abs(M).sum() > 0
    context, response = ["i like pizza and cheese", "me too"], "i like soup"
    v = scorer.encoder.encode([" ".join(context), response])
    assert scorer.f([context], [response])[0] == pytest.approx(float(v[0] @ M @ v[1]), rel=SUM, abs=SUM)
    center = np.asarray(config["center"], dtype=np.float32)  # v is the GloVe average minus the centre
    raw = ssrem.make_encoder(None).encode([response])[0]
    assert v[1] == pytest.approx(raw - center, abs=ROUNDING) and scorer.encoder.name == "glove-6b-50d-centered"
    assert config["min_tokens"] == 3
    result = scorer.score([context], [response], ["i like bread"], scaling="model")
    f_lo, f_hi = config["minmax"]["f"]
    g_lo, g_hi = config["minmax"]["g"]["sms"]
    expected = ssrem.combine(result["ssrem_f_scores"], result["ssrem_g_scores"], (f_lo, f_hi), (g_lo, g_hi))
    assert result["ssrem_scores"] == pytest.approx(expected, rel=1e-12)
    assert "scaling:model" in result["signature"] and "model:model@" in result["signature"]
    assert scorer.score([context], [response], ["i like bread"], scaling="auto")["signature"].count("scaling:model")

    again = ssrem_training.main(["--tiny", "--corpus", str(corpus), "--output", str(out), "--resume",
                                 "--threads", "1", "--max-steps", "40", "--per-type", "1"])
    resumed = json.loads((again / "dialeval_training.json").read_text())
    assert resumed["step"] == 30 and resumed["losses"] == losses and len(resumed["resumed"]) == 1  # kept, not redone


def test_encodings_are_cached_in_chunks_that_a_later_run_resumes(tmp_path, monkeypatch):
    """encode_cached saves each chunk when done: a run stopped by its deadline or a crash keeps them, the
    next run encodes only the missing chunks, and the joined result is the plain encoding."""
    from dialeval.ssrem import training

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(training, "ENCODE_CHUNK", 3)

    class Fake:
        name, dim = "fake", 2

        def __init__(self, fail_after: int | None = None):
            self.calls, self.fail_after = [], fail_after

        def encode(self, texts, progress=False):
            if self.fail_after is not None and len(self.calls) == self.fail_after:
                raise KeyboardInterrupt  # the run is stopped mid-way
            self.calls.append(list(texts))
            return np.array([[len(t), i] for i, t in enumerate(texts)], dtype=np.float32)

    texts = [f"text {i}" * (i + 1) for i in range(8)]  # 3 chunks: 3 + 3 + 2
    with pytest.raises(training.EncodingPaused, match="0 of 3 chunks"):
        training.encode_cached(Fake(), texts, "utterances", deadline=0.0)
    with pytest.raises(KeyboardInterrupt):
        training.encode_cached(Fake(fail_after=1), texts, "utterances")
    resumed = Fake()
    vectors = training.encode_cached(resumed, texts, "utterances")
    assert resumed.calls == [texts[3:6], texts[6:]]  # the first chunk came from the cache
    expected = np.concatenate([Fake().encode(texts[i:i + 3]) for i in (0, 3, 6)])
    assert vectors.tolist() == expected.tolist()
    assert not list((tmp_path / "cache" / "ssrem").glob("*.parts"))  # joined, the chunks removed
    again = Fake()
    assert training.encode_cached(again, texts, "utterances").tolist() == expected.tolist() and again.calls == []


def test_turn_pooled_contexts_reuse_the_utterance_encodings(tmp_path, monkeypatch):
    """--context-pooling turns: v(c) is the unit-length mean of the turns' own vectors. Training takes
    them from the utterance table (only utterances are encoded) and the scorer pools the same way."""
    from dialeval.ssrem import training

    from dialeval.ssrem.encoders import encode_contexts, pool_turns

    pooled = pool_turns(np.array([[1, 0], [0, 1], [0, 0]], dtype=np.float32), [[0, 1], [2], [0, 0, 1]])
    assert pooled.ravel().tolist() == pytest.approx([2 ** -0.5, 2 ** -0.5, 0.0, 0.0, 2 / 5 ** 0.5, 1 / 5 ** 0.5],
                                                    rel=ROUNDING)
    with pytest.raises(ValueError, match="needs a sentence encoder"):
        encode_contexts(ssrem.make_encoder(None), [["hi there"]], "turns")
    with pytest.raises(ValueError, match="unknown context pooling 'max'"):
        encode_contexts(ssrem.make_encoder(None), [["hi there"]], "max")

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    encoded = []
    plain = training.encode_cached
    monkeypatch.setattr(training, "encode_cached", lambda enc, texts, what, deadline=None: (
        encoded.append(what), plain(enc, texts, what, deadline))[1])
    corpus = write_corpus(tmp_path / "corpus.jsonl", topical_corpus(30))
    out = ssrem_training.main(["--tiny", "--corpus", str(corpus), "--output", str(tmp_path / "model"),
                               "--encoder", ssrem.MINILM, "--context-pooling", "turns", "--threads", "1",
                               "--per-type", "1"])
    assert encoded == ["utterances"]
    config = json.loads((out / ssrem.CONFIG_FILE).read_text())
    assert config["context_pooling"] == "turns" and config["dim"] == 384

    scorer = ssrem.SSREMScorer(out)
    M = ssrem.load_module(out).M.detach().numpy()
    context, response = ["i like pizza and cheese", "me too", "what else"], "i like soup"
    turns = scorer.encoder.encode(context)
    c = turns.mean(0) / np.linalg.norm(turns.mean(0))
    r = scorer.encoder.encode([response])[0]
    assert scorer.f([["ignored, over three turns", *context]], [response])[0] == pytest.approx(
        float(c @ M @ r), rel=SUM, abs=SUM)
    assert "|ctx:3+mean|" in scorer.score([context], [response], ["i like bread"])["signature"]
    with pytest.raises(ValueError, match="needs a sentence encoder"):
        ssrem_training.main(["--tiny", "--corpus", str(corpus), "--output", str(tmp_path / "glove"),
                             "--context-pooling", "turns", "--threads", "1"])


def test_identity_penalty_and_the_length_rule_on_true_responses(tmp_path, monkeypatch):
    """--identity-penalty: M starts at I, the loss adds penalty * ||M - I||_F^2 (a heavy penalty keeps M
    at I); --target-min-tokens: only pairs whose true response has that many word tokens train."""
    from dialeval.ssrem.negatives import NegativeSampler, word_count
    from dialeval.ssrem.training import IdentityAnchored

    anchored = IdentityAnchored(ssrem.bilinear_module(3), penalty=0.5)
    with torch.no_grad():
        anchored.M.copy_(torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 4.0]]))
    assert float(anchored.regularizer()) == pytest.approx(0.5 * (2.0 ** 2 + 3.0 ** 2), rel=ROUNDING)
    c, r = torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([[[0.0, 1.0, 0.0]]])
    with torch.no_grad():
        anchored.log_scale.fill_(math.log(3.0))
    assert float(anchored(c, r)) == pytest.approx(3.0 * 2.0, rel=ROUNDING)  # the learned scale multiplies f = c^T M r

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    conversations = topical_corpus()
    for j in range(0, 60, 3):  # short true responses, which the length rule leaves out
        conversations[j][1] = Turn(conversations[j][1].speaker, "ok sure")
    corpus = write_corpus(tmp_path / "corpus.jsonl", conversations)
    out = ssrem_training.main(["--tiny", "--corpus", str(corpus), "--output", str(tmp_path / "anchored"),
                               "--threads", "1", "--per-type", "1", "--identity-penalty", "1000",
                               "--target-min-tokens", "3"])
    report = json.loads((out / "dialeval_training.json").read_text())
    sampler = NegativeSampler(ssrem.split_corpus(conversations[:60])["train"], 3)
    expected = sum(word_count(sampler.utterances[t].text) >= 3 for t in sampler.responses())
    assert report["corpus"]["train_pairs"] == expected < len(sampler.responses())
    config = json.loads((out / ssrem.CONFIG_FILE).read_text())
    assert config["identity_penalty"] == 1000 and config["target_min_tokens"] == 3
    M = ssrem.load_module(out).M.detach()
    assert float((M - torch.eye(M.shape[0])).abs().max()) < 1e-2  # held at the identity: f = the centred cosine
    assert "log_scale" in report


def test_heldout_scores_every_pair_in_one_call_as_the_per_level_loop_does():
    """heldout_wins calls f once for all pairs (each context encoded once); the plain loop, one call
    per negative level, gives the same f and wins."""
    from dialeval.ssrem.heldout import heldout_draws, heldout_wins

    scorer = ssrem.SSREMScorer("dialeval/ssrem-chitchat")
    calls = []
    plain_f = scorer.f
    scorer.f = lambda contexts, responses: (calls.append(len(responses)), plain_f(contexts, responses))[1]
    sampler, targets, drawn = heldout_draws(topical_corpus(40), "train", limit=12, min_tokens=3)
    true_f, f_neg, wins = heldout_wins(scorer, sampler, targets, drawn)
    assert calls == [len(targets) + sum(len(p) for p in drawn.values())]
    texts = [u.text for u in sampler.utterances]
    # float32 bilinear sums, batched differently by the two paths: float_noise.SUM
    assert list(true_f.values()) == pytest.approx(
        plain_f([sampler.context(t, 3) for t in targets], [texts[t] for t in targets]), rel=SUM, abs=SUM)
    for kind, pairs in drawn.items():
        loop = plain_f([sampler.context(t, 3) for t, _ in pairs], [texts[i] for _, i in pairs]) if pairs else []
        assert f_neg[kind] == pytest.approx(loop, rel=SUM, abs=SUM)
        assert wins[kind] == [float(true_f[t] > v) for (t, _), v in zip(pairs, loop)]
    assert sum(len(p) for p in drawn.values()) > 12  # several levels were drawn


def test_random_negatives_train_rsrem(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    corpus = write_corpus(tmp_path / "corpus.jsonl", topical_corpus(40))
    out = ssrem_training.main(["--tiny", "--corpus", str(corpus), "--output", str(tmp_path / "rsrem"),
                               "--negatives", "random", "--threads", "1", "--per-type", "1"])
    report = json.loads((out / "dialeval_training.json").read_text())
    assert set(report["drawn_types"]) == {"RN"}


def test_bad_inputs_raise_clear_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"turns": [{"speaker": "A", "text": "hi"}]}\n{"turns": [{"text": "no speaker"}]}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: turn 0 needs a string 'speaker'"):
        ssrem.read_conversations(bad)
    with pytest.raises(FileNotFoundError, match="neither 'chitchat' nor a JSONL"):
        ssrem.load_corpus(str(tmp_path / "missing.jsonl"))
    with pytest.raises(FileNotFoundError, match="training/ssrem.py"):
        ssrem.SSREMScorer(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="contexts has 1 items but there are 2 responses"):
        ssrem.check_inputs([["hi"]], ["a", "b"], ["x", "y"])
    assert ssrem.check_inputs([["hi"], ["ho"]], ["a", " "], ["x", "y"])[1] == ["a", " "]  # a generation may be empty
    with pytest.raises(ValueError, match=r"references\[0\] is an empty list"):
        ssrem.check_inputs([["hi"]], ["a"], [[]])
    with pytest.raises(ValueError, match=r"contexts\[0\]\[1\] is None"):
        ssrem.check_inputs([["hi", None]], ["a"], ["x"])
    # named after SSREM's own input (it said "but there are 2 predictions"), also by the module, before any model loads
    with pytest.raises(ValueError, match=r"^references has 1 items but there are 2 responses$"):
        ssrem.check_inputs([["hi"], ["ho"]], ["a", "b"], ["x"])
    import dialeval

    with pytest.raises(ValueError, match=r"^references has 1 items but there are 2 responses$"):
        dialeval.load("ssrem").compute(contexts=[["hi"], ["ho"]], responses=["a", "b"], references=["x"])


PINNED_CONTEXTS = [["What do you want to do tonight?", "Why don't we go see a movie?"]] * 3
PINNED_RESPONSES = ["That sounds good! Have you seen Thor?", "Enjoy your concert", "I like the weather"]
PINNED_REFERENCES = ["Yeah let's go to the theater"] * 3


def test_default_mpnet_model_ranks_the_fitting_reply_first():
    """The default, all-mpnet-base-v2 turn vectors: f of the pinned replies, the reply that answers the
    movie question first (the GloVe model puts the off-topic "Enjoy your concert" first)."""
    import dialeval

    result = dialeval.load("ssrem").compute(contexts=PINNED_CONTEXTS, responses=PINNED_RESPONSES,
                                            references=PINNED_REFERENCES)
    assert "model:dialeval/ssrem-chitchat-mpnet@67b34d8f9a34|enc:mpnet-base|ctx:3+mean|" in result["signature"]
    f = [0.8680892, 0.7459048, 0.3113017]
    assert result["ssrem_f_scores"] == pytest.approx(f, rel=RELATIVE, abs=ABSOLUTE)
    assert result["ssrem_g_scores"] == pytest.approx([0.1271644, 0.0832529, 0.1480139],  # g: GloVe, unchanged
                                                     rel=RELATIVE, abs=ABSOLUTE)
    assert (result["ssrem_f_min"], result["ssrem_f_max"]) == pytest.approx((-0.4392115, 1.4434860), abs=1e-6)  # stored
    assert result["ssrem_scores"] == pytest.approx([0.5106567, 0.4213428, 0.3897867], rel=RELATIVE, abs=ABSOLUTE)


def test_reference_free_context_fit_is_the_f_of_the_full_score():
    """``reference_free=True`` (the grid job ``ssrem-f``, the combined metric's component where no
    references are given): ``ssrem_f`` alone, each item's value the full score's (the pinned f above),
    a degenerate reply flagged and at the floor as there; without the option, no references is an error."""
    from dialeval.scoring.runners import get_runner

    run = get_runner("ssrem")
    items = [{"context": c, "response": r} for c, r in zip(PINNED_CONTEXTS, PINNED_RESPONSES)]
    items.append({"context": PINNED_CONTEXTS[0], "response": ""})
    scored = run(items, reference_free=True)
    per_item, signature = scored
    assert per_item == {"ssrem_f": pytest.approx([0.8680892, 0.7459048, 0.3113017, -1000.0], rel=RELATIVE, abs=ABSOLUTE)}
    assert scored.flags == [[], [], [], ["empty"]]
    assert "model:dialeval/ssrem-chitchat-mpnet@67b34d8f9a34|enc:mpnet-base|ctx:3+mean|part:f|nrefs:0|" in signature
    with pytest.raises(ValueError, match=r"item 0: ssrem needs a non-empty 'references' list \(or reference_free=True"):
        run(items)
    with pytest.raises(ValueError, match=r"contexts\[0\] is empty"):
        run([{"context": [], "response": "Hi."}], reference_free=True)



def percentile_by_hand(value, stored):
    """The mid-rank percentile counted directly over the stored list (higher = better)."""
    return 100 * (sum(v < value for v in stored) + sum(v == value for v in stored) / 2) / len(stored)


def test_the_module_scores_the_context_fit_without_references_with_percentiles():
    """``evaluate.load("dialeval/ssrem").compute(..., reference_free=True)`` with no references (issue 54):
    the library's ``score_context_fit``, item by item; ``percentiles=True`` reads ssrem_f among the
    stored human replies (the one stored reference: ssrem_f never reads the references, so
    ``reference_free`` is a neutral option), a flagged reply at the bottom."""
    import dialeval
    from dialeval.scoring.human_reference import load_reference

    contexts, responses = PINNED_CONTEXTS + PINNED_CONTEXTS[:1], PINNED_RESPONSES + [""]
    module = dialeval.load("ssrem")
    result = module.compute(contexts=contexts, responses=responses, reference_free=True, percentiles=True)
    library = ssrem.cached_scorer(ssrem.DEFAULT_MODEL, None, None, "float32").score_context_fit(contexts, responses)
    # one process, the same code and batches: equal up to float32 rounding
    assert result["ssrem_f_scores"] == pytest.approx(library["ssrem_f_scores"], rel=1e-6, abs=1e-6)
    assert result["ssrem_f_scores"] == pytest.approx([0.8680892, 0.7459048, 0.3113017, -1000.0], abs=1e-5)
    assert result["ssrem_f"] == pytest.approx(library["ssrem_f"], rel=1e-6)
    assert result["flags"] == library["flags"] == [[], [], [], ["empty"]]
    assert result["signature"] == library["signature"] and "|part:f|nrefs:0|" in result["signature"]
    assert not {"ssrem", "ssrem_g", "ssrem_scores", "ssrem_g_scores"} & set(result)
    stored = load_reference("ssrem").scores["ssrem_f"]
    percentiles = result["ssrem_f_percentiles"]
    assert percentiles[:3] == [percentile_by_hand(v, stored) for v in result["ssrem_f_scores"][:3]]
    # the empty reply: flagged, at the floor -1000, below every human reply but the flagged ones (0.25 while
    # it ties with the suite's one floored human reply; 0 where a flagged reply reads 0, issue 54 item 3)
    assert percentiles[3] <= 100 * 0.5 * stored.count(-1000.0) / len(stored) < min(percentiles[:3])
    assert result["percentiles_signature"].startswith("percentiles:ssrem|among:DailyDialog test human replies|n:200")
    # references given are not read
    read = module.compute(contexts=contexts, responses=responses, references=[["Sure."]] * 4, reference_free=True)
    assert read["ssrem_f_scores"] == pytest.approx(result["ssrem_f_scores"], rel=1e-6, abs=1e-6)
    with pytest.raises(ValueError, match=r"^compute\(\) needs references \(a list with one entry per item\), "
                                         r"or reference_free=True for the context fit ssrem_f alone$"):
        module.compute(contexts=contexts, responses=responses)
    with pytest.raises(ValueError, match=r"^contexts has 1 items but there are 4 responses$"):
        module.compute(contexts=contexts[:1], responses=responses, reference_free=True)


def test_score_reads_reference_free_percentiles_and_names_no_checkout_path(tmp_path, capsys):
    """``dialeval score --option reference_free=true --percentiles`` (refused before issue 54), and a
    refusal that names the hub id and the command, not a path into the checkout."""
    from dialeval.cli import main
    from dialeval.models.hub import hub_root
    from dialeval.scoring.human_reference import load_reference

    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps({"id": str(i), "context": c, "response": r}) + "\n"
                              for i, (c, r) in enumerate(zip(PINNED_CONTEXTS, PINNED_RESPONSES))))
    assert main(["score", "--metric", "ssrem", "--option", "reference_free=true", "--percentiles",
                 "--input", str(source), "--output", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    stored = load_reference("ssrem").scores["ssrem_f"]
    assert [line["scores"]["ssrem_f"] for line in lines] == pytest.approx([0.8680892, 0.7459048, 0.3113017], abs=1e-5)
    assert [line["percentiles"] for line in lines] == [
        {"ssrem_f": percentile_by_hand(line["scores"]["ssrem_f"], stored)} for line in lines]
    capsys.readouterr()
    assert main(["score", "--metric", "ssrem", "--option", "model=dialeval/ssrem-chitchat", "--percentiles",
                 "--input", str(source), "--output", str(tmp_path / "glove.jsonl")]) == 2
    error = capsys.readouterr().err
    assert ("in dialeval/ssrem-chitchat-mpnet's dialeval_percentiles.json; build it with `dialeval behaviour "
            "--reference --metric ssrem --option model=\"dialeval/ssrem-chitchat\"`") in error
    assert str(hub_root()) not in error and str(Path.cwd()) not in error
    assert not (tmp_path / "glove.jsonl").exists()  # refused before any scoring

def test_bundled_glove_model_scores_through_the_evaluate_module():
    import dialeval

    module = dialeval.load("ssrem")
    contexts, responses, references = PINNED_CONTEXTS, PINNED_RESPONSES, PINNED_REFERENCES
    glove = "dialeval/ssrem-chitchat"
    result = module.compute(contexts=contexts, responses=responses, references=references, model=glove)
    assert "model:dialeval/ssrem-chitchat@a6a75f3b7e22" in result["signature"]
    assert "scaling:model" in result["signature"] and "enc:glove-6b-50d-centered" in result["signature"]
    # the bundled weights' f (no tanh: 2.55 is outside [-1, 1]) and g, then h with the stored constants
    f = [-0.6293687, 2.5457423, 0.3313795]
    g = [0.1271644, 0.0832529, 0.1480139]
    assert result["ssrem_f_scores"] == pytest.approx(f, rel=RELATIVE, abs=ABSOLUTE)
    assert result["ssrem_g_scores"] == pytest.approx(g, rel=RELATIVE, abs=ABSOLUTE)
    assert (result["ssrem_f_min"], result["ssrem_f_max"]) == pytest.approx((-1.2298214, 1.8316702), abs=1e-6)  # stored
    assert result["ssrem_scores"] == pytest.approx([0.2615339, 0.6066039, 0.4454420], rel=RELATIVE, abs=ABSOLUTE)
    assert result["ssrem_scores"][1] == pytest.approx((1.0 + (g[1] - result["ssrem_g_min"]) / (
        result["ssrem_g_max"] - result["ssrem_g_min"])) / 2,
        rel=RELATIVE, abs=ABSOLUTE)  # f above the 99th percentile: clipped to 1
    # the paper's min-max over the scored set: item 0 has the lowest f, item 1 the highest f and lowest g
    by_set = module.compute(contexts=contexts, responses=responses, references=references, scaling="set", model=glove)
    assert "scaling:set" in by_set["signature"]
    assert by_set["ssrem_scores"] == pytest.approx(
        [(0.0 + (g[0] - g[1]) / (g[2] - g[1])) / 2, 0.5, ((f[2] - f[0]) / (f[1] - f[0]) + 1.0) / 2],
        rel=RELATIVE, abs=ABSOLUTE)
    assert by_set["ssrem_scores"] == pytest.approx([0.3390278, 0.5, 0.6512936], rel=RELATIVE, abs=ABSOLUTE)
    with pytest.raises(ValueError, match="scaling must be one of"):
        module.compute(contexts=contexts[:2], responses=["a", "b"], references=["c", "d"], scaling="zscore")
    with pytest.raises(ValueError, match="unknown option"):
        module.compute(contexts=contexts[:2], responses=["a", "b"], references=["c", "d"], modle="x")
    from dialeval.scoring.runners import get_runner

    per_item, signature = get_runner("ssrem")([{"context": contexts[0], "response": "ok", "references": ["fine"]}])
    assert set(per_item) == {"ssrem", "ssrem_f", "ssrem_g"} and signature.startswith("metric:ssrem")


@pytest.mark.parametrize("name, dim", [(ssrem.MINILM, 384), (ssrem.MPNET, 768)])
def test_sentence_encoder_options_give_unit_vectors_for_f(name, dim):
    encoder = ssrem.make_encoder(name)
    assert encoder.name == name
    v = encoder.encode(["i like pizza", "the weather is cold today", "i like pizza"])
    assert v.shape == (3, dim) and np.linalg.norm(v, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=SUM)
    assert v[0] == pytest.approx(v[2], abs=SUM)  # batching and length sorting keep the order
    assert float(v[0] @ v[1]) < 0.9
    module = ssrem.bilinear_module(encoder.dim)
    assert module(torch.from_numpy(v[:1]), torch.from_numpy(v[None, 1:])).shape == (1, 2)


def test_both_earth_movers_backends_agree():
    pytest.importorskip("ot")
    rng = np.random.default_rng(0)
    for n, m in ((2, 3), (5, 4), (7, 7)):
        a, b = rng.random(n), rng.random(m)
        cost = rng.random((n, m)) * 3
        pot = ssrem.earth_movers_distance(a / a.sum(), b / b.sum(), cost, backend="pot")
        scipy = ssrem.earth_movers_distance(a / a.sum(), b / b.sum(), cost, backend="scipy")
        assert pot == pytest.approx(scipy, abs=1e-9) and pot > 0


def test_degenerate_and_unknown_responses_get_the_worst_scores_and_flags():
    """Degenerate-response policy: "" and a sentence said 50 times get h = 0, f = its floor -1000
    (unbounded: the floor counts in every mean, where NaN was left out), g = 0; a response with no
    word in the vectors (it got 0.25) is flagged too. A 'set' scaling's min-max leaves them out, so
    the plain replies keep their scores."""
    import math

    import dialeval

    module = dialeval.load("ssrem")
    responses = ["Yes, mostly novels. I read one every week.", "", " ".join(["I like it."] * 50), "zxqvbt blorptf",
                 "Not really, I prefer films."]
    inputs = dict(contexts=[["Do you like books?"]] * 5, responses=responses, references=["I love reading novels."] * 5)
    out = module.compute(**inputs)
    assert out["flags"] == [[], ["empty"], ["repetitive"], ["unknown_words"], []]
    assert out["ssrem_scores"][1:4] == [0.0, 0.0, 0.0] and out["ssrem_g_scores"][1:4] == [0.0, 0.0, 0.0]
    assert out["ssrem_f_scores"][1:4] == [-1000.0] * 3
    assert not any(math.isnan(v) for v in out["ssrem_f_scores"])
    assert min(out["ssrem_scores"][0], out["ssrem_scores"][4]) > 0.0
    plain = module.compute(contexts=[["Do you like books?"]] * 2, responses=[responses[0], responses[4]],
                           references=["I love reading novels."] * 2, scaling="set")
    by_set = module.compute(**inputs, scaling="set")
    assert [by_set["ssrem_scores"][0], by_set["ssrem_scores"][4]] == pytest.approx(plain["ssrem_scores"], abs=SUM)


def test_scoring_imports_no_training_code():
    """evaluate.load("dialeval/ssrem") goes through the scorer: it loads neither the corpus, the
    negative sampler, the held-out evaluation nor the training run; their names stay importable."""
    code = ("import sys, dialeval.ssrem.scorer as s; "
            "assert not [m for m in sys.modules if m.split('.')[-1] in ('corpus', 'negatives', 'heldout', 'training') "
            "and m.startswith('dialeval.ssrem')], sorted(sys.modules); "
            "assert s.NegativeSampler.__module__ == 'dialeval.ssrem.negatives'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])

