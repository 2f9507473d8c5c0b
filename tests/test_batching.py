"""Length batches (``dialeval.core.batching``): hand-computed cuts, the dynamic programme against
every possible cut, and the padded encoders scoring the same in length batches as one text at a time."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from dialeval.core.batching import CPU_OVERHEAD, CUDA_OVERHEAD, default_overhead, length_batches
from float_noise import SUM


def cost(lengths, batches, overhead):
    return sum(len(b) * max(lengths[i] for i in b) + overhead for b in batches)


def test_hand_computed_cuts():
    lengths = [50, 10, 52, 11]
    # one batch 4 * 52 + 32 = 240; {10, 11} {50, 52}: 2 * 11 + 32 + 2 * 52 + 32 = 190; one each: 251
    assert length_batches(lengths, max_items=4, overhead=32) == [[1, 3], [0, 2]]
    # a call that costs 1000 positions: one batch (1208) beats two (2126)
    assert length_batches(lengths, max_items=4, overhead=1000) == [[1, 3, 0, 2]]
    # at most 3 items: {10, 11} {50, 52} 2126 beats {10} {11, 50, 52} 2166 and {10, 11, 50} {52} 2202
    assert length_batches(lengths, max_items=3, overhead=1000) == [[1, 3], [0, 2]]
    # at most 1 item: one batch each
    assert length_batches(lengths, max_items=1, overhead=1000) == [[1], [3], [0], [2]]
    assert length_batches([], max_items=4) == []
    # equal costs: the earliest cut point wins, so the cut is deterministic
    assert length_batches([7, 7, 7], max_items=2, overhead=0) == [[0], [1, 2]]
    with pytest.raises(ValueError, match="max_items"):
        length_batches([1, 2], max_items=0)


def brute_force(lengths, max_items, overhead):
    """The cheapest cut of the sorted order, trying all 2^(n-1) of them (the plain reference)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    best = None
    for cuts in itertools.product([False, True], repeat=len(order) - 1):
        batches, current = [], [order[0]]
        for index, cut in zip(order[1:], cuts):
            if cut:
                batches.append(current)
                current = []
            current.append(index)
        batches.append(current)
        if max(len(b) for b in batches) <= max_items:
            c = cost(lengths, batches, overhead)
            best = c if best is None else min(best, c)
    return best


@pytest.mark.parametrize("seed", range(30))
def test_the_programme_finds_the_cheapest_cut(seed):
    rng = random.Random(seed)
    lengths = [rng.randint(1, 120) for _ in range(rng.randint(1, 10))]
    max_items, overhead = rng.randint(1, 6), rng.choice([0, 8, 32, 200])
    batches = length_batches(lengths, max_items, overhead)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) <= max_items for b in batches)
    assert all(lengths[a] <= lengths[b] for batch in batches for a, b in zip(batch, batch[1:]))
    assert cost(lengths, batches, overhead) == brute_force(lengths, max_items, overhead)


def test_default_overhead_by_device():
    assert default_overhead("cpu") == CPU_OVERHEAD and default_overhead("cuda:0") == CUDA_OVERHEAD


def test_pair_encoder_scores_the_same_in_length_batches_as_one_text_at_a_time():
    from dialeval.grade.encoder import MINILM_PACKAGE, PairEncoder

    contexts = [["hi ."], ["what do you do for a living ?", "i teach math at a small school near the lake ."],
                ["do you like dogs ?"], ["where are you going this weekend , anywhere nice ?"]]
    responses = ["hello there !", "that sounds like hard but rewarding work , do you enjoy it ?", "yes .",
                 "we are driving to the mountains to see my grandparents and hike a little ."]
    batched = PairEncoder(MINILM_PACKAGE, max_length=64, batch_size=32)
    one = PairEncoder(MINILM_PACKAGE, max_length=64, batch_size=1)
    for mode in ("cross", "dual"):
        fast = batched.encode(contexts, responses, mode)
        reference = np.stack([one.encode([c], [r], mode)[0] for c, r in zip(contexts, responses)])
        # same process, other batch shapes: only the summation order of 6 float32 layers differs (about
        # 1e-6 of activations up to ~10), so float_noise.SUM; another text's row differs by far more
        np.testing.assert_allclose(fast, reference, rtol=SUM, atol=SUM)
