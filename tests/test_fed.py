"""FED (dialeval.fed) on a tiny random GPT-2: exactness against the authors' plain loop, inputs, loading."""

import math
import time

import pytest
import torch

from dialeval.fed import QUALITIES_DIALOG, QUALITIES_TURN, FEDScorer, followups, score_name
from dialeval.models import ModelNotFoundError
from tiny_lm import tiny_gpt2

EOS = "<|endoftext|>"
CONVERSATIONS = [
    ["Hi!", "Hello, how is your day?", "It's good. How about you?"],
    ["What kind of music do you listen to?", "I love jazz and a bit of rock. "],
    ["Sitting in a meeting", "What kind of meeting?", "Can't say", "It's probably boring, isn't it?"],
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


def conversation_text(turns):
    return EOS + " " + (" " + EOS + " ").join(turns)


def plain_fed(model, tokenizer, turns, mode):
    """The authors' algorithm, written out: one forward pass per follow-up, no batching, no cache."""
    conv = conversation_text(turns)
    out = {}
    for level, names in (("turn", QUALITIES_TURN), ("dialog", QUALITIES_DIALOG)):
        for quality in names:
            parts = {}
            for polarity in ("positive", "negative"):
                values = []
                for followup in followups(level, quality)[polarity]:
                    ids = torch.tensor([tokenizer.encode(conv + " " + EOS + " " + followup, add_special_tokens=False)])
                    with torch.no_grad():
                        result = model(ids, labels=ids)
                    logp = torch.log_softmax(result.logits[0, :-1], dim=-1).gather(-1, ids[0, 1:, None])
                    assert math.isclose(-logp.mean().item(), result.loss.item(), rel_tol=1e-5)  # HF loss is float32
                    if mode == "reference":
                        values.append(-logp.mean().item())
                    else:
                        n = len(tokenizer.encode(" " + followup, add_special_tokens=False))
                        values.append(logp[-n:].sum().item())
                parts[polarity] = sum(values) / max(len(values), 1)
            sign = 1 if mode == "reference" else -1
            out[score_name(level, quality)] = sign * (parts["negative"] - parts["positive"])
    return out


def test_quality_lists():
    assert len(QUALITIES_TURN) == 8 and len(QUALITIES_DIALOG) == 10
    assert "semantically appropriate" in QUALITIES_TURN and "error recovery" in QUALITIES_DIALOG
    assert followups("dialog", "likeable")["positive"][1] == "You're super polite and fun to talk to"


def test_separate_tokenisation_equals_whole_string(tiny):
    _, tokenizer = tiny

    def ids(text):
        return tokenizer.encode(text, add_special_tokens=False)

    for turns in CONVERSATIONS:
        prefix = conversation_text(turns) + " " + EOS
        for level, names in (("turn", QUALITIES_TURN), ("dialog", QUALITIES_DIALOG)):
            for quality in names:
                for followup in sum(followups(level, quality).values(), []):
                    assert ids(prefix) + ids(" " + followup) == ids(prefix + " " + followup)


@pytest.mark.parametrize("mode", ["reference", "conditional"])
def test_scores_equal_plain_loop(tiny, mode):
    """float32: within 1e-5 (relative for conditional mode, whose summed log-probs reach ~100)."""
    model, tokenizer = tiny
    result = FEDScorer((model, tokenizer), mode=mode, batch_size=8).score(CONVERSATIONS, level="both")
    for i, turns in enumerate(CONVERSATIONS):
        for name, value in plain_fed(model, tokenizer, turns, mode).items():
            tolerance = 1e-5 * (1 if mode == "reference" else max(1.0, abs(value)))
            assert abs(result[f"{name}_scores"][i] - value) <= tolerance, name
    turn_names = [score_name("turn", q) for q in QUALITIES_TURN]
    assert result["turn_overall_scores"][0] == pytest.approx(sum(result[f"{n}_scores"][0] for n in turn_names) / 8)
    assert result["signature"].startswith(f"metric:fed|model:GPT2LMHeadModel|mode:{mode}|level:both|")


@pytest.mark.parametrize("mode", ["reference", "conditional"])
def test_scores_equal_plain_loop_float64(tmp_path, mode):
    """In float64 the cached, batched path and the plain loop agree to rounding: same algorithm."""
    model, tokenizer = tiny_gpt2(tmp_path)
    model = model.double()
    result = FEDScorer((model, tokenizer), mode=mode, batch_size=8).score(CONVERSATIONS[:2], level="both")
    for i, turns in enumerate(CONVERSATIONS[:2]):
        for name, value in plain_fed(model, tokenizer, turns, mode).items():
            assert abs(result[f"{name}_scores"][i] - value) <= 1e-9, name


def test_batch_size_invariance(tiny):
    runs = [FEDScorer(tiny, batch_size=b).score(CONVERSATIONS, level="both") for b in (1, 8, 32)]
    for other in runs[1:]:
        for key, value in runs[0].items():
            if key.endswith("_scores"):
                assert max(abs(a - b) for a, b in zip(value, other[key])) <= 1e-5, key


def test_levels_and_quality_selection(tiny):
    result = FEDScorer(tiny, qualities=["interesting", "coherent"]).score(CONVERSATIONS[:1], level="both")
    assert sorted(k for k in result if not k.endswith("_scores")) == [
        "dialog_coherent", "dialog_overall", "signature", "turn_interesting", "turn_overall",
    ]
    assert result["turn_overall"] == result["turn_interesting"]
    turn_only = FEDScorer(tiny).score(CONVERSATIONS[:1], level="turn")
    assert not any(k.startswith("dialog_") for k in turn_only)
    with pytest.raises(ValueError, match="no dialog-level quality selected"):
        FEDScorer(tiny, qualities=["interesting"]).score(CONVERSATIONS[:1], level="dialog")


def test_very_long_conversation_is_truncated(tiny):
    model, tokenizer = tiny
    turns = ["I just got back from a long walk in the park with my dog."] * 700
    assert len(tokenizer.encode(conversation_text(turns), add_special_tokens=False)) > 10_000
    result = FEDScorer(tiny).score([turns], level="both")
    assert all(math.isfinite(v) for k, v in result.items() if k != "signature" and not k.endswith("_scores"))


@pytest.mark.parametrize(
    "conversations, message",
    [
        ([], "conversations is empty"),
        ("Hi!", "conversations must be a list"),
        ([["Hi"], []], r"conversations\[1\] is empty"),
        ([["Hi"], ["Hello", " "]], r"conversations\[1\]\[1\] is an empty string"),
        ([["Hi", 3]], r"conversations\[0\]\[1\] must be a string"),
        ([["Hi", None]], r"conversations\[0\]\[1\] is None"),
    ],
)
def test_bad_conversations(tiny, conversations, message):
    with pytest.raises(ValueError, match=message):
        FEDScorer(tiny).score(conversations)


def test_bad_options(tiny):
    with pytest.raises(ValueError, match="unknown FED quality 'funny'; valid: interesting, engaging"):
        FEDScorer(tiny, qualities=["funny"])
    with pytest.raises(ValueError, match="level must be one of"):
        FEDScorer(tiny).score(CONVERSATIONS, level="utterance")
    with pytest.raises(ValueError, match="mode must be one of"):
        FEDScorer(tiny, mode="paper")
    with pytest.raises(ValueError, match="must be one special token"):
        FEDScorer(tiny, eos_token="\n")


def test_missing_model_offline_fails_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(ModelNotFoundError, match="DialoGPT-large"):
        FEDScorer("microsoft/DialoGPT-large")
    assert time.perf_counter() - start < 5
