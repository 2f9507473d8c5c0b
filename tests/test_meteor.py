"""METEOR 1.5 through pycocoevalcap's jar: hand-checked scores, one JVM for many segments, clear errors."""

import math

import pytest

from dialeval.multiref import meteor
from dialeval.multiref.scorer import MultiRefScorer

needs_jar = pytest.mark.skipif(not meteor.meteor_available(), reason="needs Java and pycocoevalcap")

# (hypothesis, reference, METEOR 1.5 by hand: alpha 0.85, beta 0.2, gamma 0.6, delta 0.75;
#  he / is / the / on are function words of the jar's english.words)
HAND = [
    # exact copy: P = R = 1, one chunk covering both sentences -> no fragmentation penalty
    ("the cat sat on the mat", "the cat sat on the mat", 1.0),
    # WordNet synonym fast~quick (weight 0.8, content word): P = R = (0.75*0.8 + 0.25*2) / (0.75 + 0.25*2)
    ("he is fast", "he is quick", (0.75 * 0.8 + 0.25 * 2) / (0.75 + 0.25 * 2)),
    # all six words matched in 3 chunks: 1 - 0.6 * (3/6)^0.2
    ("the mat sat on the cat", "the cat sat on the mat", 1 - 0.6 * 0.5**0.2),
    # the/cat/sat matched: P = 1, R = (0.75*2 + 0.25*1) / (0.75*3 + 0.25*3); Fmean = PR/(0.85P + 0.15R);
    # one chunk but not all reference words matched -> penalty 0.6 * (1/3)^0.2
    ("the cat sat", "the cat sat on the mat",
     (7 / 12) / (0.85 + 0.15 * 7 / 12) * (1 - 0.6 * (1 / 3) ** 0.2)),
    ("x y z", "a b c", 0.0),
    ("", "a b c", 0.0),
]


@needs_jar
def test_meteor_15_hand_checked_sentences():
    jvm = meteor.shared_meteor()
    scores = jvm.score([(h, r) for h, r, _ in HAND])
    assert scores == pytest.approx([v for _, _, v in HAND], abs=1e-9)
    assert HAND[3][2] == pytest.approx(0.32253, abs=1e-5)


@needs_jar
def test_one_jvm_scores_many_segments_in_order():
    jvm = meteor.shared_meteor()
    pid = jvm._process.pid
    pairs = [(h, r) for h, r, _ in HAND] * 400  # 2,400 segments: more than a pipe buffer of text
    scores = jvm.score(pairs)
    assert scores == pytest.approx([v for _, _, v in HAND] * 400, abs=1e-9)
    assert jvm._process.pid == pid and jvm._process.poll() is None
    assert meteor.shared_meteor() is jvm


@needs_jar
def test_protocol_separator_in_text_is_neutralised():
    assert meteor.shared_meteor().score([("he ||| is fast", "he is quick")]) == pytest.approx([0.88], abs=1e-9)



@needs_jar
def test_a_20000_word_item_is_cut_and_the_next_item_still_scores():
    """The JVM died on a 20,000-word hypothesis (and every later call failed with it): texts are cut
    to MAX_WORDS words, with a warning, and the item after it is scored as on its own."""
    jvm = meteor.shared_meteor()
    long = " ".join(["i am fine thanks"] * 5000)
    with pytest.warns(UserWarning, match="pair 0: 19000 words dropped"):
        scores = jvm.score([(long, "i am fine thanks"), HAND[3][:2]])
    cut = " ".join(long.split()[: meteor.MAX_WORDS])
    assert scores == pytest.approx([jvm.score([(cut, "i am fine thanks")])[0], HAND[3][2]], abs=1e-9)


@needs_jar
def test_a_dead_jvm_is_started_again():
    jvm = meteor.shared_meteor()
    jvm._process.kill()
    jvm._process.wait()
    assert jvm.score([HAND[3][:2]]) == pytest.approx([HAND[3][2]], abs=1e-9)
    assert jvm._process.poll() is None

def test_missing_java_names_the_install(monkeypatch):
    monkeypatch.setattr(meteor.shutil, "which", lambda name: None)
    monkeypatch.setattr(meteor, "shared_meteor", meteor.Meteor15)  # not the JVM already running
    with pytest.raises(meteor.MeteorUnavailableError, match="apt-get install default-jre-headless"):
        meteor.Meteor15()
    with pytest.raises(meteor.MeteorUnavailableError, match="meteor='nltk'"):
        MultiRefScorer(metrics=["meteor"], meteor="jar")
    # "auto" (the paper tooling's default) falls back to NLTK and says so in the signature
    scorer = MultiRefScorer(metrics=["meteor"])
    assert scorer.meteor == "nltk"
    assert "|meteor:nltk|" in scorer.quality(["he is fast"], ["he is quick"])["signature"]


def test_missing_pycocoevalcap_names_the_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(meteor.MeteorUnavailableError, match="pip install pycocoevalcap"):
        meteor.jar_path()
    assert not meteor.meteor_available()


@needs_jar
def test_multiref_meteor_is_the_max_over_references():
    scorer = MultiRefScorer(metrics=["meteor"], meteor="jar")
    out = scorer.quality(["he is fast"], [["x y z", "he is quick"]])
    assert out["meteor"] == pytest.approx(0.88, abs=1e-9)
    assert "|meteor:1.5-jar-norm|" in out["signature"]
    assert not math.isnan(out["meteor_scores"][0])
