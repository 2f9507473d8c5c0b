"""The grouped layout (dialeval.core.grouped_layout) on a sliding-window model: a tiny random Gemma 3
(window 16, a sliding and a full layer), float32. Groups that fit the window are packed into rows
under the one block mask; a group that reaches past it is scored alone; both give the plain path's
numbers (each ``prefix + c`` scored whole, its own sliding-window mask built by transformers)."""

import random
from types import SimpleNamespace

import pytest
import torch

from dialeval.core.grouped_layout import fits_window, sliding_window
from dialeval.core.lm import LMScorer
from float_noise import LOGPROB, SUM
from tiny_lm import tiny_tokenizer

WINDOW = 16


def tiny_gemma3(attention):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    tokenizer = tiny_tokenizer()
    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16, sliding_window=WINDOW,
                              layer_types=["sliding_attention", "full_attention"], max_position_embeddings=128,
                              initializer_range=0.5, pad_token_id=tokenizer.pad_token_id, attn_implementation=attention)
    torch.manual_seed(0)
    return Gemma3ForCausalLM(config).to(torch.float32).eval(), tokenizer


def groups_around_the_window(vocab):
    """Groups whose prefix plus longest continuation is 3 to 29 tokens: below, at (16) and past the
    window (17, and longer); several continuations per group, some sharing first tokens."""
    rng = random.Random(0)
    groups = []
    for length in [3, 5, 8, 10, 12, 14, 15, WINDOW, WINDOW + 1, 20, 24, 29, 6, 9, 11]:
        longest = rng.randrange(1, min(length, 8))
        conts = [[rng.randrange(1, vocab) for _ in range(longest)]]
        conts += [conts[0][:1] + [rng.randrange(1, vocab) for _ in range(rng.randrange(0, longest))] for _ in range(3)]
        groups.append(([rng.randrange(1, vocab) for _ in range(length - longest)], conts))
    return groups


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("prefix_logprob", [False, True])
def test_groups_within_the_window_are_packed_and_longer_ones_scored_alone(attention, prefix_logprob):
    model, tokenizer = tiny_gemma3(attention)
    assert model.dtype == torch.float32
    scorer = LMScorer(model, tokenizer)
    groups = groups_around_the_window(len(tokenizer))
    packed, alone, rows = [], [], []
    grouped_forward, one_group = scorer._grouped_forward, scorer.prefix_and_continuation_logprobs

    def spy_rows(batch, *args):
        rows.extend(len(row) for row in batch)
        packed.extend(g for row in batch for g, _, _ in row)
        return grouped_forward(batch, *args)

    def spy_alone(prefix, conts, *args):
        alone.append(next(i for i, (p, c) in enumerate(groups) if p == prefix and c == conts))
        return one_group(prefix, conts, *args)

    scorer._grouped_forward, scorer.prefix_and_continuation_logprobs = spy_rows, spy_alone
    found = scorer.grouped_logprobs(groups, prefix_logprob, row_tokens=64, batch_tokens=128)
    fits = {i for i, (p, conts) in enumerate(groups) if len(p) + max(map(len, conts)) <= WINDOW}
    assert sorted(packed) == sorted(fits) and sorted(alone) == sorted(set(range(len(groups))) - fits)
    assert len(fits) == 11 and max(rows) > 1  # rows hold several groups; the 16-token group is packed, 17 is not
    for (prefix_lp, conts_lp), (prefix, conts) in zip(found, groups):
        expected = scorer._batch_logprobs([prefix + c for c in conts], [len(prefix)] * len(conts), progress=False)
        assert conts_lp == [(pytest.approx(lp, rel=SUM, abs=LOGPROB), n) for lp, n in expected]
        if prefix_logprob:
            whole = scorer._batch_logprobs([prefix], [1], progress=False)[0]
            assert prefix_lp == (pytest.approx(whole[0], rel=SUM, abs=LOGPROB), whole[1])
        else:
            assert prefix_lp is None


def test_the_window_matters_past_it():
    """The guard is needed: the block mask on a group past the window (every layer attending fully)
    gives other numbers than the model's own sliding-window mask."""
    model, tokenizer = tiny_gemma3("sdpa")
    scorer = LMScorer(model, tokenizer)
    prefix, conts = groups_around_the_window(len(tokenizer))[-4]  # 29 tokens
    from dialeval.core.continuation_trie import ContinuationTrie

    (_, (_, packed)), = scorer._grouped_forward([[(0, prefix, ContinuationTrie(conts))]], False)
    plain = scorer._batch_logprobs([prefix + c for c in conts], [len(prefix)] * len(conts), progress=False)
    assert max(abs(a - b) for (a, _), (b, _) in zip(packed, plain)) > 100 * LOGPROB


def test_sliding_window_of_a_config():
    assert sliding_window(SimpleNamespace(sliding_window=512, layer_types=["sliding_attention", "full_attention"])) == 512
    assert sliding_window(SimpleNamespace(sliding_window=512)) == 512  # every layer slides (Mistral)
    assert sliding_window(SimpleNamespace(sliding_window=4096, use_sliding_window=False)) is None  # Qwen2
    assert sliding_window(SimpleNamespace(sliding_window=512, layer_types=["full_attention"])) is None
    assert sliding_window(SimpleNamespace()) is None  # GPT-2, Llama
    assert fits_window(16, 16) and not fits_window(17, 16) and fits_window(10**6, None)
