"""FED (dialeval.fed.scorer) on a tiny random GPT-2: exactness of all three variants against a plain loop,
the variants' formulas by hand, the Section 6.1 context rule, inputs, the evaluate module, loading."""

import math
import time

import pytest
import torch

import dialeval
from dialeval.fed.scorer import (
    MODES, QUALITIES_DIALOG, QUALITIES_TURN, ContextScores, FEDScorer, followups, quality_score, score_name,
)
from dialeval.core.lm import conversation_text as lm_conversation_text
from dialeval.models import ModelNotFoundError
from float_noise import LOGPROB, SUM
from tiny_lm import tiny_gpt2

EOS = "<|endoftext|>"
CONVERSATIONS = [
    ["Hi!", "Hello, how is your day?", "It's good. How about you?"],
    ["What kind of music do you listen to?", "I love jazz and a bit of rock. "],
    ["Sitting in a meeting", "What kind of meeting?", "Can't say", "It's probably boring, isn't it?"],
    ["Do you like to read books?", ""],  # an empty generation: scored as its eos alone
]


@pytest.fixture(scope="module")
def tiny_saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_gpt2")
    return tiny_gpt2(path), path


@pytest.fixture(scope="module")
def tiny(tiny_saved):
    return tiny_saved[0]


def conversation_text(turns):
    return lm_conversation_text(turns, EOS)


def plain_fed(model, tokenizer, turns, mode):
    """The variants written out: one forward pass per follow-up and context, no batching, no cache.

    reference: mean token loss of the whole string, means over the lists, negative minus positive;
    conditional: summed follow-up log-likelihood, means over the lists, positive minus negative;
    paper: the same log-likelihoods summed over the lists, after the last turn alone for the
    turn-level qualities other than relevant and correct (Section 6.1).
    """
    out = {}
    for level, names in (("turn", QUALITIES_TURN), ("dialog", QUALITIES_DIALOG)):
        for quality in names:
            short = mode == "paper" and level == "turn" and quality not in ("relevant", "correct")
            conv = conversation_text(turns[-1:] if short else turns)
            parts = {}
            for polarity in ("positive", "negative"):
                values = []
                for followup in followups(level, quality)[polarity]:
                    ids = torch.tensor([tokenizer.encode(conv + " " + EOS + " " + followup, add_special_tokens=False)])
                    with torch.no_grad():
                        result = model(ids, labels=ids)
                    logp = torch.log_softmax(result.logits[0, :-1], dim=-1).gather(-1, ids[0, 1:, None])
                    assert math.isclose(-logp.mean().item(), result.loss.item(), rel_tol=SUM)  # HF loss is float32
                    if mode == "reference":
                        values.append(-logp.mean().item())
                    else:
                        n = len(tokenizer.encode(" " + followup, add_special_tokens=False))
                        values.append(logp[-n:].sum().item())
                parts[polarity] = sum(values) if mode == "paper" else sum(values) / max(len(values), 1)
            sign = 1 if mode == "reference" else -1
            out[score_name(level, quality)] = sign * (parts["negative"] - parts["positive"])
        out[f"{level}_overall"] = sum(out[score_name(level, q)] for q in names) / len(names)
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


@pytest.mark.parametrize("mode", MODES)
def test_scores_equal_plain_loop(tiny, mode):
    """float32: within float_noise.SUM (relative for the log-likelihood variants, whose sums reach ~100)."""
    model, tokenizer = tiny
    result = FEDScorer((model, tokenizer), mode=mode, batch_size=8).score(CONVERSATIONS, level="both")
    for i, turns in enumerate(CONVERSATIONS[:3]):  # the fourth is degenerate: its own test below
        for name, value in plain_fed(model, tokenizer, turns, mode).items():
            tolerance = SUM * (1 if mode == "reference" else max(1.0, abs(value)))
            assert abs(result[f"{name}_scores"][i] - value) <= tolerance, name
    assert result["signature"].startswith(f"metric:fed|model:GPT2LMHeadModel|mode:{mode}|level:both|")


@pytest.mark.parametrize("mode", MODES)
def test_scores_equal_plain_loop_float64(tmp_path, mode):
    """In float64 the cached, batched path and the plain loop agree to rounding: same algorithm."""
    model, tokenizer = tiny_gpt2(tmp_path)
    model = model.double()
    result = FEDScorer((model, tokenizer), mode=mode, batch_size=8).score(CONVERSATIONS[:2], level="both")
    for i, turns in enumerate(CONVERSATIONS[:2]):
        for name, value in plain_fed(model, tokenizer, turns, mode).items():
            assert abs(result[f"{name}_scores"][i] - value) <= 1e-9, name


def test_one_pass_gives_every_variant(tiny):
    scorer = FEDScorer(tiny, batch_size=8)
    together = scorer.score_all(CONVERSATIONS, level="both")
    assert list(together) == list(MODES)
    for mode in MODES:
        alone = scorer.score(CONVERSATIONS, level="both", mode=mode)
        assert together[mode]["signature"] == alone["signature"]
        for key, value in alone.items():
            if key.endswith("_scores"):
                assert together[mode][key] == pytest.approx(value, rel=SUM, abs=LOGPROB, nan_ok=True), (mode, key)
    assert scorer.score_all(CONVERSATIONS[:1], modes="all").keys() == together.keys()
    with pytest.raises(ValueError, match="mode must be one of"):
        scorer.score_all(CONVERSATIONS[:1], modes=["paper", "eq1"])


def test_variant_formulas_by_hand():
    """understandable has 2 positive and 4 negative follow-ups, so sums and means rank differently;
    relevant has none positive. Follow-up k gets log P = -(k + 1) over k + 2 tokens after the whole
    conversation (prefix: log P = -10 over 4 counted tokens) and twice that after the last turn."""
    lists = followups("turn", "understandable")
    assert (len(lists["positive"]), len(lists["negative"])) == (2, 4)
    texts = lists["positive"] + lists["negative"] + followups("turn", "relevant")["negative"]
    full = {f: (-float(k + 1), k + 2) for k, f in enumerate(texts)}
    contexts = {
        "full": ContextScores(prefix=(-10.0, 4), followups=full),
        "last": ContextScores(prefix=None, followups={f: (2 * lp, n) for f, (lp, n) in full.items()}),
    }
    assert quality_score("conditional", "turn", "understandable", contexts) == pytest.approx(
        (-1 - 2) / 2 - (-3 - 4 - 5 - 6) / 4, rel=1e-12)
    assert quality_score("paper", "turn", "understandable", contexts) == pytest.approx(
        (-2 - 4) - (-6 - 8 - 10 - 12), rel=1e-12)
    reference = (13 / 8 + 14 / 9 + 15 / 10 + 16 / 11) / 4 - (11 / 6 + 12 / 7) / 2  # L(f) = (10 + k + 1) / (4 + k + 2)
    assert quality_score("reference", "turn", "understandable", contexts) == pytest.approx(reference, rel=1e-12)
    # whole conversation
    assert quality_score("paper", "turn", "relevant", contexts) == pytest.approx(7 + 8 + 9, rel=1e-12)
    assert quality_score("conditional", "turn", "relevant", contexts) == pytest.approx((7 + 8 + 9) / 3, rel=1e-12)


def test_paper_context_rule(tiny):
    """Paper variant: turn-level qualities other than relevant/correct see the last turn only."""
    same_last = [["Hi!", "Hello, how is your day?", "Fine."], ["I play tennis.", "Fine."]]
    scorer = FEDScorer(tiny)
    paper = scorer.score(same_last, level="turn", mode="paper")
    conditional = scorer.score(same_last, level="turn", mode="conditional")
    for quality in QUALITIES_TURN:
        a, b = paper[f"{score_name('turn', quality)}_scores"]
        if quality in ("relevant", "correct"):
            assert abs(a - b) > 1e-3, quality
        else:
            assert a == pytest.approx(b, rel=SUM, abs=LOGPROB), quality
        c, d = conditional[f"{score_name('turn', quality)}_scores"]
        assert abs(c - d) > 1e-3, quality


def test_batch_size_invariance(tiny):
    """float_noise.SUM and LOGPROB: the log-likelihood variants (paper: summed over follow-ups) reach the hundreds."""
    runs = [FEDScorer(tiny, batch_size=b).score_all(CONVERSATIONS, level="both") for b in (1, 8, 32)]
    for other in runs[1:]:
        for mode, result in runs[0].items():
            for key, value in result.items():
                if key.endswith("_scores"):
                    assert other[mode][key] == pytest.approx(value, rel=SUM, abs=LOGPROB, nan_ok=True), (mode, key)


def test_levels_and_quality_selection(tiny):
    result = FEDScorer(tiny, qualities=["interesting", "coherent"]).score(CONVERSATIONS[:1], level="both")
    assert sorted(k for k in result if not k.endswith(("_scores", "_unflagged"))) == [
        "dialog_coherent", "dialog_overall", "flagged", "flags", "signature", "turn_interesting", "turn_overall",
    ]
    assert sorted(k[: -len("_unflagged")] for k in result if k.endswith("_unflagged")) == [
        "dialog_coherent", "dialog_overall", "turn_interesting", "turn_overall"]
    assert result["turn_overall"] == result["turn_interesting"]
    turn_only = FEDScorer(tiny).score(CONVERSATIONS[:1], level="turn")
    assert not any(k.startswith("dialog_") for k in turn_only)
    with pytest.raises(ValueError, match="no dialog-level quality selected"):
        FEDScorer(tiny, qualities=["interesting"]).score(CONVERSATIONS[:1], level="dialog")


def test_very_long_conversation_is_truncated(tiny):
    """The prefix keeps its first token (eos) and its last ``window - longest FED follow-up`` tokens,
    the same cut for every quality: conditional scores equal a plain loop on that cut, while the
    paper variant's *interesting* reads the last turn alone, uncut."""
    model, tokenizer = tiny

    def ids(text):
        return tokenizer.encode(text, add_special_tokens=False)

    turns = [f"I just got back from walk {i} in the park with my dog." for i in range(700)]  # no echo
    prefix = ids(conversation_text(turns) + " " + EOS)
    assert len(prefix) > 10_000
    every = [f for lv, qs in (("turn", QUALITIES_TURN), ("dialog", QUALITIES_DIALOG)) for q in qs
             for fs in followups(lv, q).values() for f in fs]
    room = model.config.n_positions - max(len(ids(" " + f)) for f in every)
    kept = prefix[:1] + prefix[len(prefix) - room + 1 :]
    result = FEDScorer(tiny, qualities=["interesting"]).score([turns], level="turn", mode="paper")
    expected = 0.0
    for sign, polarity in ((1, "positive"), (-1, "negative")):
        for f in followups("turn", "interesting")[polarity]:
            cont = ids(" " + f)
            x = torch.tensor([ids(conversation_text(turns[-1:]) + " " + EOS) + cont])  # paper: last turn
            with torch.no_grad():
                logp = torch.log_softmax(model(x).logits[0, :-1], dim=-1).gather(-1, x[0, 1:, None])
            expected += sign * logp[-len(cont):].sum().item()
    assert result["turn_interesting"] == pytest.approx(expected, rel=SUM, abs=LOGPROB)
    with pytest.warns(UserWarning, match=rf"conversations\[0\] has {len(prefix)} tokens .* its {len(prefix) - room} "
                      "earliest tokens after the first were cut"):
        conditional = FEDScorer(tiny, qualities=["interesting"]).score([turns], level="turn", mode="conditional")
    expected = 0.0
    for sign, polarity in ((1, "positive"), (-1, "negative")):
        fs = followups("turn", "interesting")[polarity]
        for f in fs:
            x = torch.tensor([kept + ids(" " + f)])
            with torch.no_grad():
                logp = torch.log_softmax(model(x).logits[0, :-1], dim=-1).gather(-1, x[0, 1:, None])
            expected += sign * logp[-len(ids(" " + f)):].sum().item() / len(fs)
    assert conditional["turn_interesting"] == pytest.approx(expected, rel=SUM, abs=LOGPROB)


@pytest.mark.parametrize(
    "conversations, message",
    [
        ([], "conversations is empty"),
        ("Hi!", "conversations must be a list"),
        ([["Hi"], []], r"^conversations\[1\] is an empty conversation: give it at least one turn$"),
        ([["Hi"], ["Hello", " ", "Bye"]], r"conversations\[1\]\[1\] is an empty string; only the last turn"),
        ([["Hi"], [" "]], r"conversations\[1\]\[0\] is an empty string"),
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
        FEDScorer(tiny, mode="eq1")
    with pytest.raises(ValueError, match="mode must be one of"):
        FEDScorer(tiny).score(CONVERSATIONS, mode="all")  # "all" is for score_all and the benchmark
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        FEDScorer(tiny, batch_size=0)
    with pytest.raises(ValueError, match="must be one special token"):
        FEDScorer(tiny, eos_token="\n")


def test_missing_model_offline_fails_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(ModelNotFoundError, match="DialoGPT-large"):
        FEDScorer("microsoft/DialoGPT-large")
    assert time.perf_counter() - start < 5


def test_empty_generation_is_scored_as_eos(tiny):
    """["Do you like to read books?", ""] reads "<eos> Do you like to read books? <eos>" before the
    follow-up's own "<eos>": checked against a hand-built string, not the shared text function."""
    model, tokenizer = tiny
    followup = followups("dialog", "inquisitive")["positive"][0]
    text = f"{EOS} Do you like to read books? {EOS} {EOS} {followup}"
    ids = torch.tensor([tokenizer.encode(text, add_special_tokens=False)])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, :-1], dim=-1).gather(-1, ids[0, 1:, None])
    n = len(tokenizer.encode(" " + followup, add_special_tokens=False))
    scorer = FEDScorer(tiny, qualities=["inquisitive"])
    # the public path flags an empty reply and skips the model; the text it would read is still this one
    (contexts,) = scorer._score_contexts([CONVERSATIONS[3]], [[]], {"full": [followup]}, prefix_logprob=False)
    assert contexts["full"].followups[followup] == (pytest.approx(logp[-n:].sum().item(), rel=SUM, abs=LOGPROB), n)


def test_device_errors_are_clear(tiny):
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA; use device='cpu'"):
            FEDScorer(tiny, device="cuda")
    with pytest.raises(ValueError, match="not a torch device"):
        FEDScorer(tiny, device="gpu0")


def test_evaluate_module(tiny_saved):
    pair, path = tiny_saved
    fed = dialeval.load("fed")
    result = fed.compute(conversations=CONVERSATIONS, model=str(path), level="both")
    assert "|mode:conditional|level:both|" in result["signature"]  # the default variant, named
    expected = FEDScorer(pair, mode="conditional").score(CONVERSATIONS, level="both")
    assert result["turn_overall_scores"] == pytest.approx(expected["turn_overall_scores"], rel=SUM, abs=LOGPROB,
                                                          nan_ok=True)
    scorer = fed._cached_scorer
    reference = fed.compute(conversations=CONVERSATIONS[:1], model=str(path), mode="reference")
    assert fed._cached_scorer is scorer and "|mode:reference|level:turn|" in reference["signature"]
    again = dialeval.load("fed")  # another instance, the same settings: the model is not loaded again
    alone = again.compute(conversations=CONVERSATIONS[:1], model=str(path))["turn_overall_scores"]
    assert alone == pytest.approx(result["turn_overall_scores"][:1], rel=SUM, abs=LOGPROB, nan_ok=True)
    assert again._cached_scorer is scorer
    with pytest.raises(ValueError, match=r"fed compute\(\): unknown option\(s\) \['modle'\]; accepted: .*'model'"):
        fed.compute(conversations=CONVERSATIONS[:1], modle=str(path))


def test_runner_and_benchmark_default_to_the_conditional_variant(tiny_saved, monkeypatch):
    """`dialeval score` (run_fed) and `dialeval benchmark` use DEFAULT_MODE; mode=all gives every
    variant from one pass, printed beside Table 6's four DialoGPT columns."""
    import dialeval.fed.data
    from dialeval.fed.benchmark import fed as fed_benchmark
    from dialeval.fed.benchmark import format_fed
    from dialeval.fed.runner import run_fed

    _, path = tiny_saved
    items = [{"context": turns[:-1], "response": turns[-1]} for turns in CONVERSATIONS]
    per_item, signature = run_fed(items, model=str(path), level="both")
    assert "|mode:conditional|level:both|" in signature and len(per_item["turn_overall"]) == len(items)
    rated = [{"turns": turns, "ratings": {"interesting": float(i), "overall": float(-i)}}
             for i, turns in enumerate(CONVERSATIONS)]
    monkeypatch.setattr(dialeval.fed.data, "load_fed", lambda level: rated)
    result = fed_benchmark("turn", model=str(path), mode="all")
    assert list(result["variants"]) == list(MODES)
    assert result["paper"]["rows"]["Interesting"][-1] == 0.408  # Table 6, 762M-ft
    table = format_fed(result)
    assert "paper 762M-ft" in table and "0.408" in table and "|mode:reference|level:turn|" in table
    assert list(fed_benchmark("turn", model=str(path))["variants"]) == ["conditional"]


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_generation_gets_the_worst_value_or_none(tiny, mode):
    """Degenerate-response policy: the qualities with no positive follow-up (bounded below by 0)
    get 0; the unbounded ones and the overall means get the floor -1000 (never rewarded, and counted
    in the means: NaN, left out, let empty replies raise a system's mean); the flag says why. The
    other items keep their values."""
    from dialeval.fed.scales import FLOOR, scales

    result = FEDScorer(tiny, mode=mode, batch_size=8).score(CONVERSATIONS, level="both")
    assert result["flags"] == [[], [], [], ["empty"]]
    described = scales()
    for name in (n[: -len("_scores")] for n in result if n.endswith("_scores")):
        value = result[f"{name}_scores"][3]
        assert value == (0.0 if described[name].low == 0.0 else FLOOR), name
        assert FLOOR < result[f"{name}_scores"][0], name
    assert result["turn_overall"] == pytest.approx((sum(result["turn_overall_scores"][:3]) + FLOOR) / 4, rel=1e-12)


def test_an_empty_quality_selection_is_refused_by_the_module_too(tiny, tmp_path):
    """``qualities=[]`` is an error, never "every quality" (the module's scorer cache keyed it as None)."""
    import dialeval

    model, tokenizer = tiny
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    fed = dialeval.load("fed")
    fed.compute(conversations=[["Hi!", "Hello there."]], model=str(tmp_path))  # every quality, cached
    with pytest.raises(ValueError, match="qualities must be a non-empty list"):
        fed.compute(conversations=[["Hi!", "Hello there."]], model=str(tmp_path), qualities=[])
