"""FULL (dialeval.full) on a tiny random GPT-2 and a tiny random BlenderBot: the released rule against
a plain loop, the variants, lookback and right-side truncation, the degenerate-response policy, input
errors, the evaluate module and the declarations (default model, benchmark routing)."""

import math
import time

import pytest
import torch

import dialeval
from dialeval import registry
from dialeval.core.lm import LMScorer, conversation_text
from dialeval.full.scorer import (
    FOLLOWUPS, RELEASED_FOLLOWUPS, VARIANTS, FULLScorer, aggregate, check_turns, split_conversations, window,
)
from float_noise import PERPLEXITY, SUM
from tiny_lm import EOS, tiny_gpt2, tiny_tokenizer

CONTEXTS = [
    ["Hi!", "Hello, how is your day?"],
    ["What kind of music do you listen to?"],
    ["Sitting in a meeting", "What kind of meeting?", "Can't say"],
]
RESPONSES = ["It's good. How about you?", "I love jazz and a bit of rock.", "It's probably boring, isn't it?"]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2_full"))


def tiny_blenderbot(max_positions: int = 64):
    """A tiny random BlenderBot (seed 0) with the tiny byte-level tokenizer."""
    from transformers import BlenderbotConfig, BlenderbotForConditionalGeneration

    tokenizer = tiny_tokenizer()
    config = BlenderbotConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=max_positions,
        init_std=0.5, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    return BlenderbotForConditionalGeneration(config).eval(), tokenizer


@pytest.fixture(scope="module")
def blenderbot():
    return tiny_blenderbot()


def ids(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False)


def plain_decoder(model, tokenizer, turns, followups, text="tab", rule="perplexity"):
    """The released algorithm on a decoder-only model, written naively: per follow-up one forward pass
    of the whole sequence conversation + separator + follow-up, exp of the mean NLL over the
    follow-up's tokens (or their summed NLL), mean over the follow-ups."""
    if text == "tab":
        before = ids(tokenizer, EOS) + ids(tokenizer, "\t" + "\t".join(turns)) + ids(tokenizer, "\t")
    else:
        before = ids(tokenizer, conversation_text(turns, EOS)) + ids(tokenizer, " " + EOS)
    values = []
    for followup in followups:
        after = ids(tokenizer, followup if text == "tab" else " " + followup)
        x = torch.tensor([before + after])
        with torch.no_grad():
            logits = model(x).logits[0, :-1]
        nll = -torch.log_softmax(logits, -1).gather(-1, x[0, 1:, None])[-len(after):, 0]
        values.append(math.exp(nll.mean().item()) if rule == "perplexity" else nll.sum().item())
    return sum(values) / len(values)


def plain_seq2seq(model, tokenizer, turns, followups):
    """The authors' code, naively: per follow-up ``exp(model(input_ids=c, labels=f).loss)`` with the
    conversation ``"\\t" + "\\t".join(turns)`` truncated on the right to the model window."""
    source = tokenizer("\t" + "\t".join(turns), truncation=True, max_length=model.config.max_position_embeddings,
                       return_tensors="pt")["input_ids"]
    values = []
    for followup in followups:
        labels = tokenizer(text_target=followup, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            values.append(math.exp(model(input_ids=source, labels=labels).loss.item()))
    return sum(values) / len(values)


def test_the_released_followups_are_four():
    assert len(FOLLOWUPS) == 5 and len(RELEASED_FOLLOWUPS) == 4
    assert RELEASED_FOLLOWUPS[1] == "You're really confusing.You're really boring."
    assert VARIANTS["paper"].followups == RELEASED_FOLLOWUPS and VARIANTS["five"].followups == FOLLOWUPS


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_decoder_scores_equal_the_plain_loop(gpt2, variant):
    model, tokenizer = gpt2
    spec = VARIANTS[variant]
    result = FULLScorer(gpt2, batch_size=3).score(CONTEXTS, RESPONSES, variant=variant)
    for i, (context, response) in enumerate(zip(CONTEXTS, RESPONSES)):
        expected = plain_decoder(model, tokenizer, context + [response], spec.followups, spec.text, spec.rule)
        assert result["full_scores"][i] == pytest.approx(expected, rel=PERPLEXITY)
    assert result["full"] == pytest.approx(sum(result["full_scores"]) / 3, rel=1e-12)
    assert result["flags"] == [[], [], []]
    assert result["signature"].startswith(
        f"metric:full|model:GPT2LMHeadModel|variant:{variant}|followups:{len(spec.followups)}|rule:{spec.rule}|"
        f"text:{spec.text}|lookback:50|level:turn|version:")


def test_encoder_decoder_scores_equal_the_authors_loop(blenderbot):
    model, tokenizer = blenderbot
    result = FULLScorer(blenderbot, batch_size=2).score(CONTEXTS, RESPONSES, level="dialog")
    for i, (context, response) in enumerate(zip(CONTEXTS, RESPONSES)):
        expected = plain_seq2seq(model, tokenizer, context + [response], RELEASED_FOLLOWUPS)
        assert result["full_scores"][i] == pytest.approx(expected, rel=PERPLEXITY)
    assert "|model:BlenderbotForConditionalGeneration|variant:paper|followups:4|" in result["signature"]


@pytest.mark.parametrize("which", ["gpt2", "blenderbot"])
def test_fast_path_equals_one_forward_per_followup(gpt2, blenderbot, which):
    pair = gpt2 if which == "gpt2" else blenderbot
    fast = FULLScorer(pair, batch_size=2).score_all(CONTEXTS, RESPONSES)
    plain = FULLScorer(pair, batch_size=2, share_prefix=False).score_all(CONTEXTS, RESPONSES)
    for variant in VARIANTS:
        assert fast[variant]["full_scores"] == pytest.approx(plain[variant]["full_scores"], rel=PERPLEXITY)


@pytest.mark.parametrize("which", ["gpt2", "blenderbot"])
def test_fast_path_equals_the_plain_loop_in_float64(tmp_path, which):
    """In float64 the two paths agree to rounding (float32 leaves ~1e-6 on a perplexity: exp of a mean
    NLL whose rounding differs between a packed and a plain pass)."""
    model, tokenizer = tiny_gpt2(tmp_path) if which == "gpt2" else tiny_blenderbot()
    pair = (model.double(), tokenizer)
    fast = FULLScorer(pair, batch_size=2).score_all(CONTEXTS, RESPONSES)
    plain = FULLScorer(pair, batch_size=2, share_prefix=False).score_all(CONTEXTS, RESPONSES)
    for variant in VARIANTS:
        assert fast[variant]["full_scores"] == pytest.approx(plain[variant]["full_scores"], rel=1e-9)


def test_target_logprobs_equal_the_model_loss(blenderbot):
    model, tokenizer = blenderbot
    source = ids(tokenizer, "\tHi!\tHello, how is your day?")
    targets = [ids(tokenizer, f) for f in FOLLOWUPS]
    for (logprob, n), target in zip(LMScorer(model, tokenizer, batch_size=4).target_logprobs(source, targets), targets):
        loss = model(input_ids=torch.tensor([source]), labels=torch.tensor([target])).loss.item()
        assert n == len(target) and -logprob / n == pytest.approx(loss, rel=SUM)
    with pytest.raises(ValueError, match="needs an encoder-decoder model"):
        LMScorer(*tiny_gpt2_pair()).target_logprobs(source, targets)


def tiny_gpt2_pair():
    import tempfile

    return tiny_gpt2(tempfile.mkdtemp())


def test_one_pass_gives_every_variant(gpt2):
    scorer = FULLScorer(gpt2, batch_size=4)
    together = scorer.score_all(CONTEXTS, RESPONSES, variants="all")
    assert list(together) == list(VARIANTS)
    for variant in VARIANTS:
        alone = scorer.score(CONTEXTS, RESPONSES, variant=variant)
        assert alone["signature"] == together[variant]["signature"]
        assert alone["full_scores"] == pytest.approx(together[variant]["full_scores"], rel=PERPLEXITY)


def test_aggregation_rules_by_hand():
    logprobs = [(-2.0, 2), (-6.0, 3)]
    assert aggregate("perplexity", logprobs) == pytest.approx((math.exp(1.0) + math.exp(2.0)) / 2, rel=1e-12)
    assert aggregate("loglik", logprobs) == pytest.approx(4.0, rel=1e-12)


def test_levels_and_lookback(gpt2):
    """Turn level reads the context's last ``lookback`` turns and the response; dialog level the
    conversation's last ``lookback`` turns."""
    turns = [f"Turn number {i} is here." for i in range(7)]
    assert window(turns, "turn", 3) == turns[3:6] + turns[6:]
    assert window(turns, "dialog", 3) == turns[4:]
    assert window(turns, "turn", 50) == turns == window(turns, "dialog", 50)
    scorer = FULLScorer(gpt2, lookback=3)
    short = FULLScorer(gpt2)
    long_turn = scorer.score([turns[:-1]], [turns[-1]], level="turn")["full_scores"][0]
    assert long_turn == pytest.approx(short.score([turns[3:6]], [turns[6]])["full_scores"][0], rel=PERPLEXITY)
    long_dialog = scorer.score([turns[:-1]], [turns[-1]], level="dialog")["full_scores"][0]
    assert long_dialog == pytest.approx(short.score([turns[4:6]], [turns[6]], level="dialog")["full_scores"][0],
                                        rel=PERPLEXITY)
    assert "|lookback:3|level:dialog|" in scorer.score([turns[:-1]], [turns[-1]], level="dialog")["signature"]


@pytest.mark.parametrize("which", ["gpt2", "blenderbot"])
def test_a_long_conversation_keeps_its_start(gpt2, blenderbot, which):
    """Right-side truncation (the paper's tokenizer, truncation=True): turns past the window change nothing."""
    pair = gpt2 if which == "gpt2" else blenderbot
    scorer = FULLScorer(pair, max_length=48)
    start = ["Do you like to read books? I mostly read science fiction and some history."] * 4
    with pytest.warns(UserWarning, match=r"full: a conversation of \d+ tokens keeps its first \d+ .* tokens at its end were cut"):
        one = scorer.score([start], ["I love jazz."], level="dialog")["full_scores"][0]
    two = scorer.score([start + ["What kind of music do you listen to?"]], ["Sorry, I don't know."],
                       level="dialog")["full_scores"][0]
    assert one == two
    shorter = scorer.score([["Hi!"]], ["I love jazz."], level="dialog")["full_scores"][0]
    assert shorter != one  # a conversation that fits is read whole


def test_degenerate_responses_get_the_worst_value(gpt2):
    scorer = FULLScorer(gpt2)
    result = scorer.score(CONTEXTS[:1] * 3, ["", "the the the the the the", RESPONSES[0]])
    assert result["flags"] == [["empty"], ["repetitive"], []]
    assert result["full_scores"][:2] == [0.0, 0.0]
    assert result["full_scores"][2] == pytest.approx(scorer.score(CONTEXTS[:1], RESPONSES[:1])["full_scores"][0],
                                                     rel=PERPLEXITY)
    assert registry.describe("full", "full").range_text() == "0 or more"
    assert registry.describe("full", "full").higher_is_better is True


@pytest.mark.parametrize("contexts, responses, message", [
    ("Hi!", ["x"], "contexts must be a list"),
    ([["Hi!"]], "x", "responses must be a list"),
    ([], [], "contexts is empty"),
    ([["Hi!"]], ["a", "b"], "1 contexts but 2 responses"),
    ([["Hi!", None]], ["x"], r"contexts\[0\]\[1\] is None"),
    ([["Hi!", ""]], ["x"], r"contexts\[0\]\[1\] is an empty string"),
    (["Hi!"], ["x"], r"contexts\[0\] must be a list of turns"),
    ([["Hi!"]], [3], r"responses\[0\] must be a string"),
])
def test_bad_inputs_name_the_problem(gpt2, contexts, responses, message):
    with pytest.raises(ValueError, match=message):
        FULLScorer(gpt2).score(contexts, responses)


def test_bad_options_and_conversations(gpt2):
    with pytest.raises(ValueError, match="variant must be one of"):
        FULLScorer(gpt2, variant="ppl")
    with pytest.raises(ValueError, match="lookback must be >= 1"):
        FULLScorer(gpt2, lookback=0)
    with pytest.raises(ValueError, match="level must be one of"):
        FULLScorer(gpt2).score(CONTEXTS, RESPONSES, level="both")
    with pytest.raises(ValueError, match=r"conversations\[1\] must be a non-empty list"):
        split_conversations([["Hi!"], []])
    with pytest.raises(ValueError, match=r"conversations\[0\]\[0\] is an empty string"):
        split_conversations([["", "Hi!"]])
    assert split_conversations([["Hi!", "Hello", ""]]) == ([["Hi!", "Hello"]], [""])
    assert check_turns([[]], ["Hello"]) == [["Hello"]]  # a response without context


def test_evaluate_module_turn_and_dialog(gpt2, tmp_path):
    model, tokenizer = gpt2
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    module = dialeval.load("full")
    turn = module.compute(contexts=CONTEXTS, responses=RESPONSES, model=str(tmp_path), variant="five")
    expected = FULLScorer(gpt2).score(CONTEXTS, RESPONSES, variant="five")
    assert turn["full_scores"] == pytest.approx(expected["full_scores"], rel=PERPLEXITY)
    assert turn["flags"] == [[], [], []] and "|variant:five|" in turn["signature"]
    conversations = [c + [r] for c, r in zip(CONTEXTS, RESPONSES)]
    dialog = module.compute(conversations=conversations, level="dialog", model=str(tmp_path))
    assert dialog["full_scores"] == pytest.approx(
        FULLScorer(gpt2).score(CONTEXTS, RESPONSES, level="dialog")["full_scores"], rel=PERPLEXITY)
    with pytest.raises(ValueError, match="unknown option"):
        module.compute(contexts=CONTEXTS, responses=RESPONSES, model=str(tmp_path), mode="paper")
    with pytest.raises(ValueError, match="not both"):
        module.compute(conversations=conversations, contexts=CONTEXTS, model=str(tmp_path))
    with pytest.raises(ValueError, match=r"conversations\[0\]"):
        module.compute(conversations=[[]], model=str(tmp_path))


def test_default_model_falls_back_at_once_offline(monkeypatch):
    from dialeval.full.runner import default_full_model
    from dialeval.full.scorer import DEFAULT_MODEL
    from dialeval.full.spec import PAPER_MODEL

    fallback_note = registry.spec("full").example_note
    assert PAPER_MODEL == DEFAULT_MODEL

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    assert default_full_model() == "dialeval/smollm2-dialogue"  # no BlenderBot here: the bundled stand-in
    assert time.monotonic() - started < 10
    assert "blenderbot-400M-distill cannot be had" in fallback_note(["metric:full|model:dialeval/smollm2-dialogue@x"])
    assert fallback_note(["metric:full|model:facebook/blenderbot-400M-distill|variant:paper"]) is None


def test_benchmarks_on_fed_sets_are_routed_to_full():
    from dialeval.full.benchmark import format_full

    assert registry.benchmarks()["fed-turn"][0] == "fed"  # the set's owner keeps the name
    assert registry.benchmark_of("full", "fed-dialog").module == "dialeval.full.benchmark"
    assert registry.benchmark_of("full", "grade-convai2") is None
    (job,) = registry.spec("full").grid_jobs
    assert job.options_on("fed-dialog", [])["level"] == "dialog" and job.options_on("fed-turn", [])["level"] == "turn"
    overall = {"spearman": 0.4, "spearman_p": 0.001, "pearson": 0.3, "kendall": 0.25, "n": 375}
    table = format_full({
        "dataset": "fed-turn", "n": 375, "model": "m", "paper": {"source": "De Bruyn et al.", "spearman": 0.506},
        "variants": {"paper": {"signature": "metric:full|variant:paper", "overall": overall},
                     "five": {"signature": "metric:full|variant:five", "overall": overall}},
    })
    assert "0.400*" in table and "0.506" in table and table.count("0.506") == 1


@pytest.mark.slow
def test_module_example_with_the_default_model():
    """The module docstring's example: offline, the bundled dialogue adapter stands in."""
    full = dialeval.load("full")
    results = full.compute(contexts=[["Do you like reading books?"]], responses=["Yes, mostly novels."])
    assert results["flags"] == [[]]
    assert results["full_scores"][0] > 1.0  # a mean perplexity
    assert "|model:dialeval/smollm2-dialogue@" in results["signature"]
    # an empty or repeated response is never rewarded (docs/inputs.md)
    degenerate = full.compute(contexts=[["Do you like reading books?"]] * 2, responses=["", " ".join(["I like it."] * 50)])
    assert degenerate["flags"] == [["empty"], ["repetitive"]] and degenerate["full_scores"] == [0.0, 0.0]
