"""Word-overlap and embedding measures against hand-computed values."""

import math

import numpy as np
import pytest

from dialeval import embedding_metrics, overlap
from dialeval.resources import WordVectors, load_word_vectors, load_wordnet


def test_bleu_hand_values():
    hyp, ref = "a b c d".split(), "a b e f".split()
    assert overlap.bleu(hyp, [ref], 1) == pytest.approx(0.5)  # 2 of 4 unigrams
    assert overlap.bleu(hyp, [ref], 2) == pytest.approx(math.sqrt(0.5 * 1 / 3))  # bigrams: 1 of 3
    # smoothing method 1: a zero n-gram precision becomes 0.1 / (number of n-grams)
    expected4 = math.exp((math.log(0.5) + math.log(1 / 3) + math.log(0.1 / 2) + math.log(0.1 / 1)) / 4)
    assert overlap.bleu(hyp, [ref], 4) == pytest.approx(expected4)
    # brevity penalty exp(1 - r/c) for a 2-token hypothesis vs a 4-token reference
    assert overlap.bleu("a b".split(), [ref], 1) == pytest.approx(math.exp(1 - 4 / 2))
    assert overlap.bleu(ref, [ref], 4) == pytest.approx(1.0)


def test_rouge_l_hand_values():
    hyp, ref = "a b c d".split(), "a c e d f".split()  # LCS = a c d
    p, r = 3 / 4, 3 / 5
    assert overlap.lcs_length(hyp, ref) == 3
    assert overlap.rouge_l(hyp, ref) == pytest.approx(2 * p * r / (p + r))
    assert overlap.rouge_l(hyp, ref, beta=1.2) == pytest.approx((1 + 1.44) * p * r / (r + 1.44 * p))
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
    assert overlap.distinct_n(group, 1) == pytest.approx(3 / 5)
    assert overlap.distinct_n(group, 2) == pytest.approx(1.0)
    assert overlap.distinct_n(group, 3) == pytest.approx(1.0)  # one trigram: "a b a"
    assert overlap.distinct_n([["a"]], 2) == 0.0
    same = ["the cat sat down".split()] * 3
    assert overlap.self_bleu(same) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least two"):
        overlap.self_bleu(same[:1])


@pytest.fixture
def toy_vectors():
    words = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "n": [1.0, -2.0], "m": [-3.0, 1.0]}
    return WordVectors("toy", {w: i for i, w in enumerate(words)}, np.array(list(words.values()), dtype=np.float32))


def test_embedding_metrics_hand_values(toy_vectors):
    v = toy_vectors
    assert embedding_metrics.embedding_average(["a", "b"], ["c"], v) == pytest.approx(1.0)
    assert embedding_metrics.embedding_average(["a"], ["b"], v) == pytest.approx(0.0)
    assert embedding_metrics.greedy_matching(["a", "b"], ["c"], v) == pytest.approx(math.sqrt(0.5))
    # greedy is symmetric by construction: (G(h, r) + G(r, h)) / 2
    assert embedding_metrics.greedy_matching(["a", "c"], ["a"], v) == pytest.approx(((1 + math.sqrt(0.5)) / 2 + 1) / 2)
    # extrema keeps the larger-magnitude extreme per dimension: n, m -> (-3, -2)
    assert embedding_metrics._extrema(v.lookup(["n", "m"])).tolist() == [-3.0, -2.0]
    expected = (-3 * 1 + -2 * 1) / (math.hypot(3, 2) * math.sqrt(2))
    assert embedding_metrics.vector_extrema(["n", "m"], ["c"], v) == pytest.approx(expected, rel=1e-6)
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
