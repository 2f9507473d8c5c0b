"""Word-overlap and embedding measures against hand-computed values."""

import math

import numpy as np
import pytest

from dialeval.multiref import embedding as embedding_metrics, overlap
from dialeval.core.resources import WordVectors, load_word_vectors, load_wordnet
from float_noise import ROUNDING


def test_bleu_hand_values():
    hyp, ref = "a b c d".split(), "a b e f".split()
    assert overlap.bleu(hyp, [ref], 1) == pytest.approx(0.5, rel=1e-12)  # 2 of 4 unigrams
    assert overlap.bleu(hyp, [ref], 2) == pytest.approx(math.sqrt(0.5 * 1 / 3), rel=1e-12)  # bigrams: 1 of 3
    # smoothing method 1: a zero n-gram precision becomes 0.1 / (number of n-grams)
    expected4 = math.exp((math.log(0.5) + math.log(1 / 3) + math.log(0.1 / 2) + math.log(0.1 / 1)) / 4)
    assert overlap.bleu(hyp, [ref], 4) == pytest.approx(expected4, rel=1e-12)
    # brevity penalty exp(1 - r/c) for a 2-token hypothesis vs a 4-token reference
    assert overlap.bleu("a b".split(), [ref], 1) == pytest.approx(math.exp(1 - 4 / 2), rel=1e-12)
    assert overlap.bleu(ref, [ref], 4) == pytest.approx(1.0, rel=1e-12)


def test_rouge_l_hand_values():
    hyp, ref = "a b c d".split(), "a c e d f".split()  # LCS = a c d
    p, r = 3 / 4, 3 / 5
    assert overlap.lcs_length(hyp, ref) == 3
    assert overlap.rouge_l(hyp, ref) == pytest.approx(2 * p * r / (p + r), rel=1e-12)
    assert overlap.rouge_l(hyp, ref, beta=1.2) == pytest.approx((1 + 1.44) * p * r / (r + 1.44 * p), rel=1e-12)
    assert overlap.rouge_l(["x"], ["y"]) == 0.0


def test_meteor_uses_wordnet_synonyms():
    wordnet = load_wordnet()
    ref = "he is quick".split()
    synonym = overlap.meteor("he is fast".split(), ref, wordnet)
    unrelated = overlap.meteor("he is table".split(), ref, wordnet)
    assert synonym > unrelated
    assert "fast" in {lemma.name() for s in wordnet.synsets("quick") for lemma in s.lemmas()}


def test_distinct_and_self_bleu():
    group = ["a b a".split(), "a c".split()]
    assert overlap.distinct_n(group, 1) == pytest.approx(3 / 5, rel=1e-12)
    assert overlap.distinct_n(group, 2) == pytest.approx(1.0, rel=1e-12)
    assert overlap.distinct_n(group, 3) == pytest.approx(1.0, rel=1e-12)  # one trigram: "a b a"
    assert overlap.distinct_n([["a"]], 2) == 0.0
    same = ["the cat sat down".split()] * 3
    assert overlap.self_bleu(same) == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="at least two"):
        overlap.self_bleu(same[:1])


@pytest.fixture
def toy_vectors():
    words = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "n": [1.0, -2.0], "m": [-3.0, 1.0]}
    return WordVectors("toy", {w: i for i, w in enumerate(words)}, np.array(list(words.values()), dtype=np.float32))


def test_embedding_metrics_hand_values(toy_vectors):
    v = toy_vectors
    assert embedding_metrics.embedding_average(["a", "b"], ["c"], v) == pytest.approx(1.0, rel=ROUNDING)
    assert embedding_metrics.embedding_average(["a"], ["b"], v) == pytest.approx(0.0, abs=ROUNDING)
    assert embedding_metrics.greedy_matching(["a", "b"], ["c"], v) == pytest.approx(math.sqrt(0.5), rel=ROUNDING)
    # greedy is symmetric by construction: (G(h, r) + G(r, h)) / 2
    assert embedding_metrics.greedy_matching(["a", "c"], ["a"], v) == pytest.approx(((1 + math.sqrt(0.5)) / 2 + 1) / 2,
                                                                                    rel=ROUNDING)
    # extrema keeps the larger-magnitude extreme per dimension: n, m -> (-3, -2)
    assert embedding_metrics._extrema(v.lookup(["n", "m"])).tolist() == [-3.0, -2.0]
    expected = (-3 * 1 + -2 * 1) / (math.hypot(3, 2) * math.sqrt(2))
    assert embedding_metrics.vector_extrema(["n", "m"], ["c"], v) == pytest.approx(expected, rel=ROUNDING)
    assert embedding_metrics.vector_extrema(["zzz"], ["c"], v) == 0.0  # no known word


def test_word_vectors_from_text_file(tmp_path):
    path = tmp_path / "vec.txt"
    path.write_text("2 3\nhello 1 0 0\nworld 0 1 0\n")
    vectors = load_word_vectors(str(path))
    assert vectors.dim == 3 and vectors.lookup(["world", "oov"]).tolist() == [[0, 1, 0]]
    with pytest.raises(FileNotFoundError):
        load_word_vectors(str(tmp_path / "missing.txt"))


def test_glove_is_packaged():
    glove = load_word_vectors()
    assert glove.dim == 50 and "the" in glove.index


def test_whitespace_tokenizer_keeps_the_authors_tokens():
    from dialeval.core.text import tokenize, whitespace_tokenize

    assert whitespace_tokenize("  I 'm fine ,  Thanks.\n") == ["i", "'m", "fine", ",", "thanks."]
    assert tokenize("I 'm fine , Thanks.") == ["i", "'m", "fine", ",", "thanks", "."]
    assert whitespace_tokenize(" \t") == []


def test_paper_bleu3_weights():
    hyp, ref = "a b c d".split(), "a b c e".split()  # precisions 3/4, 2/3, 1/2
    assert overlap.bleu(hyp, [ref], 3, overlap.PAPER_BLEU_WEIGHTS[3]) == pytest.approx(0.25**0.33, rel=1e-12)
    assert overlap.bleu(hyp, [ref], 3) == pytest.approx(0.25 ** (1 / 3), rel=1e-12)
    with pytest.raises(ValueError, match="BLEU-3 needs 3 weights"):
        overlap.bleu(hyp, [ref], 3, (0.5, 0.5))
    assert overlap.bleu([], [ref], 2) == 0.0


def test_coco_bleu_hand_values():
    hyp, ref = "a b c d".split(), "a b e f".split()
    # pycocoevalcap's 1e-9 in each denominator moves a value by up to 1e-9 relative: rel 1e-8
    assert overlap.coco_bleu(hyp, [ref], 1) == pytest.approx(0.5, rel=1e-8)
    assert overlap.coco_bleu(hyp, [ref], 2) == pytest.approx(math.sqrt(0.5 * 1 / 3), rel=1e-8)
    # no smoothing: no matching trigram -> (1e-15 / 2)^(1/3) * ..., about 1e-5 rather than 0.1-smoothed
    assert overlap.coco_bleu(hyp, [ref], 3) == pytest.approx((0.5 * (1 / 3) * (1e-15 / 2)) ** (1 / 3), rel=1e-6)
    # brevity penalty against the closest reference length (4), exp(1 - 4/2)
    assert overlap.coco_bleu("a b".split(), [ref], 1) == pytest.approx(math.exp(-1), rel=1e-8)
    # a tie in closeness picks the shorter reference: lengths 3 and 5 for a 4-token hypothesis -> no penalty
    assert overlap.coco_bleu(hyp, ["a x y".split(), "a b c d e".split()], 1) == pytest.approx(1.0, rel=1e-8)
    # clipping by the max count in any reference
    assert overlap.coco_bleu("a a a".split(), ["a a x".split(), "a y z".split()], 1) == pytest.approx(2 / 3, rel=1e-8)


def test_coco_bleu_matches_pycocoevalcap():
    import random

    bleu_module = pytest.importorskip("pycocoevalcap.bleu.bleu")
    rng = random.Random(0)
    vocab = "a b c d e".split()
    scorer = bleu_module.Bleu(4)
    for _ in range(100):
        hyp = [rng.choice(vocab) for _ in range(rng.randint(1, 7))]
        refs = [[rng.choice(vocab) for _ in range(rng.randint(1, 7))] for _ in range(rng.randint(1, 3))]
        expected, _ = scorer.compute_score({0: [" ".join(r) for r in refs]}, {0: [" ".join(hyp)]}, verbose=0)
        assert [overlap.coco_bleu(hyp, refs, n) for n in range(1, 5)] == pytest.approx(expected, abs=1e-12)


def test_distinct_per_token_as_the_paper():
    group = ["a b a".split(), "a c".split()]  # 5 tokens; bigrams ab, ba, ac
    assert overlap.distinct_n(group, 1, "tokens") == pytest.approx(3 / 5, rel=1e-12)
    assert overlap.distinct_n(group, 2, "tokens") == pytest.approx(3 / 5, rel=1e-12)
    assert overlap.distinct_n(group, 2, "ngrams") == pytest.approx(3 / 3, rel=1e-12)
    assert overlap.distinct_n([[]], 1, "tokens") == 0.0
    with pytest.raises(ValueError, match="denominator"):
        overlap.distinct_n(group, 1, "words")


def test_rouge_l_of_an_empty_side_is_zero():
    assert overlap.rouge_l([], ["a"], 1.2) == 0.0 and overlap.rouge_l(["a"], [], 1.2) == 0.0


def test_out_of_vocabulary_words_get_the_mean_vector(toy_vectors):
    v = toy_vectors
    mean = np.array([0.0, 0.2], dtype=np.float32)  # mean of a, b, c, n, m
    assert v.mean_vector.tolist() == pytest.approx(mean.tolist(), rel=ROUNDING)
    assert v.lookup(["a", "zzz"], oov="mean").ravel().tolist() == pytest.approx([1.0, 0.0, 0.0, 0.2], rel=ROUNDING)
    assert v.lookup(["a", "zzz"]).tolist() == [[1.0, 0.0]]
    # skip: only "b" is left, orthogonal to "a"; mean: b + (0, 0.2) is still orthogonal to a
    assert embedding_metrics.embedding_average(["b", "zzz"], ["a"], v) == pytest.approx(0.0, abs=ROUNDING)
    # an unknown word alone: skipped -> no vector -> 0; mean -> cos((0, 0.2), c) = 1/sqrt(2)
    assert embedding_metrics.embedding_average(["zzz"], ["c"], v) == 0.0
    assert embedding_metrics.embedding_average(["zzz"], ["c"], v, oov="mean") == pytest.approx(math.sqrt(0.5),
                                                                                               rel=ROUNDING)
    assert embedding_metrics.greedy_matching([], ["c"], v, oov="mean") == 0.0
    with pytest.raises(ValueError, match="oov must be one of"):
        v.lookup(["a"], oov="zero")
