"""The degenerate-response policy (dialeval.core.degenerate), on hand-computed values (issue 23)."""

import math
from fractions import Fraction

import pytest

from dialeval.core.degenerate import (apply_policy, copied_share, echoes, flag_counts, ngrams, repeated_share, reply_flags,
                                      response_flags, salads, unknown_words, word_count, words_of, worst)
from dialeval.core.scales import Scale


def test_repeated_share_counts_repeated_word_trigrams():
    assert repeated_share("the the the the the") == pytest.approx(2 / 3, rel=1e-12)  # 3 trigrams, 1 distinct
    assert repeated_share("I think that I think so") == 0.0
    assert repeated_share("a b c a b c a b c") == pytest.approx(4 / 7, rel=1e-12)  # 7 trigrams, 3 distinct
    assert repeated_share("hi there") == 0.0  # no trigram


@pytest.mark.parametrize("text, flags", [
    ("", ["empty"]), (" \n\t", ["empty"]),
    ("The the the the the", ["repetitive"]),
    (" ".join(["I like it."] * 50), ["repetitive"]),
    ("ha ha ha ha", []),  # 2 trigrams, 1 repeats: 0.5 is not more than the threshold
    ("weather weather the the good good good", []),  # word salad, not repetition
    ("She loves reading, especially mystery novels.", []),
    ("\u200b\u200b\u200b", ["empty"]), ("\ufeff", ["empty"]), ("\u200d \u2060", ["empty"]),  # invisible only
    ("?", ["no_words"]), ("...!!", ["no_words"]), ("<br><br>", ["no_words"]), ("&nbsp; &#8203;", ["no_words"]),
    ("\U0001F600\U0001F44D", ["no_words"]), ("_ _ -", ["no_words"]),
    ("ok", []), ("42", []), ("<b>yes</b>", []), ("\u200bhi", []), ("数", []), ("\U0001F600 great", []),
])
def test_response_flags(text, flags):
    assert response_flags(text) == flags


def test_worst_is_the_bound_on_the_bad_side():
    assert worst(Scale(0.0, 1.0, True, False, "")) == 0.0
    assert worst(Scale(-1.0, 1.0, True, False, "")) == -1.0
    assert worst(Scale(0.0, 5.0, False, False, "")) == 5.0
    assert math.isnan(worst(Scale(None, None, True, True, "")))  # unbounded, no floor declared
    assert worst(Scale(None, None, True, True, "", floor=-1000.0)) == -1000.0  # unbounded: its floor
    assert worst(Scale(None, 0.0, True, True, "", floor=-50.0)) == -50.0
    assert math.isnan(worst(Scale(0.0, None, None, False, "")))  # a count has no direction


def test_policy_sets_flagged_items_and_keeps_counts():
    scales = {"s": Scale(0.0, 1.0, True, False, ""), "raw": Scale(None, 0.0, True, True, "", floor=-10.0),
              "pairs": Scale(0.0, None, None, False, "")}
    out = apply_policy({"s": [0.9, 0.8, 0.7], "raw": [-1.0, -2.0, -30.0], "pairs": [2.0, 3.0, 4.0],
                        "other": [1.0, 1.0, 1.0]}, [["empty"], [], []], scales)
    assert out["s"] == [0.0, 0.8, 0.7] and out["pairs"] == [2.0, 3.0, 4.0] and out["other"] == [1.0, 1.0, 1.0]
    assert out["raw"] == [-10.0, -2.0, -10.0]  # flagged: the floor; a real value below it: clipped


def test_a_raw_scale_without_a_lower_bound_must_declare_a_floor():
    from dialeval.core.scales import raw

    with pytest.raises(ValueError, match="needs a floor"):
        raw("a log-likelihood")
    assert raw("a log-likelihood", high=0.0, floor=-5.0).range_text() == "-5 to 0 (clipped at the floor -5)"


def test_floors_as_missing_leaves_out_floor_values_of_flagged_items_only():
    from dialeval.core.degenerate import floors_as_missing

    scales = {"s": Scale(0.0, 1.0, True, False, ""), "raw": Scale(None, None, True, True, "", floor=-10.0)}
    out = floors_as_missing({"s": [0.0, 0.8], "raw": [-10.0, -10.0]}, [["empty"], []], scales)
    assert out["s"] == [0.0, 0.8] and math.isnan(out["raw"][0]) and out["raw"][1] == -10.0
    # a flag set by another sub-score of the same runner (holistic: coherence's echo) leaves a real value in
    out = floors_as_missing({"raw": [-3.5, -10.0]}, [["echo"], ["echo"]], scales)
    assert out["raw"][0] == -3.5 and math.isnan(out["raw"][1])


def test_unknown_words_needs_two_words_mostly_outside_the_known_ones():
    ranks = {"the": 0, "novels": 5519, "lol": 73048, "asdf": 117853, "haha": 154265}
    assert unknown_words("asdf qwer zxcv", ranks) == ["unknown_words"]  # rank >= 100,000 or absent
    assert unknown_words("haha lol", ranks) == []  # 1 of 2 is not more than half
    assert unknown_words("qwer", ranks) == []  # one word: too short to judge
    assert unknown_words("the novels", ranks) == []



def test_item_scores_unpack_as_the_pair_and_keep_their_flags():
    import pickle

    from dialeval.core.results import flags_of, split_result

    scores = split_result({"x": 0.5, "x_scores": [0.5], "signature": "metric:m", "flags": [["empty"]]})
    per_item, signature = scores
    assert (per_item, signature, scores.flags) == ({"x": [0.5]}, "metric:m", [["empty"]])
    again = pickle.loads(pickle.dumps(scores))
    assert (tuple(again), again.flags) == (tuple(scores), [["empty"]])
    assert flags_of(scores, [{"response": "fine"}]) == [["empty"]]  # the scorer's flags, not a recomputation
    # a runner returning a plain pair: the checks every metric applies
    assert flags_of(({"x": [0.5, 0.1]}, "metric:m"), [{"response": " "}, {"response": "fine"}]) == [["empty"], []]


def test_word_count_and_flag_counts():
    assert [word_count(t) for t in ("", "fine , thanks .", "don't")] == [0, 2, 2]
    assert flag_counts([[], ["empty"], ["empty"], ["repetitive"]]) == {"empty": 2, "repetitive": 1}


CONTEXT = ["Hi, how are you?", "I'm fine. Do you like dogs?"]


@pytest.mark.parametrize("response, flags", [
    ("Hi, how are you?", ["echo"]),  # the responder's own earlier turn, whole
    ("I'm fine. Do you like dogs?", ["echo"]),  # the whole last turn
    ("i m fine do you like", ["echo"]),  # 6 of the last turn's 7 words (6/7 >= 4/5)
    ("fine do you like dogs", []),  # 5 of 7 (0.71 < 4/5) and under 8 words: a phrase, not an echo
    ("do you like dogs ?", []),  # 4 of 7
    ("Do you like dogs a lot?", []),  # "like dogs a", "dogs a lot" are new 3-grams
    ("how are you fine", []),  # "are you fine" is in no turn
    ("Hi!", []), ("Dogs?", []), ("like dogs", []),  # under 3 words: never an echo
    ("Yes, I have two dogs.", []),
])
def test_echoes_copy_one_context_turn(response, flags):
    assert echoes(CONTEXT, response) == flags


@pytest.mark.parametrize("context, response, flags", [
    # issue 54's examples: a short reply sharing a phrase with a turn is not an echo, a copy of the turn is
    (["Okay, see you tomorrow."], "See you tomorrow!", []),  # 3 of 4 words (0.75)
    (["Thank you very much for the lovely dinner."], "Thank you very much.", []),  # 4 of 8
    (["Do you like dogs?"], "do you like dogs ?", ["echo"]),  # 4 of 4, case and punctuation aside
    (["It doesn't matter , but leave me some small changes , that will be convenient in daily life ."],
     "It doesn't matter .", []),  # DailyDialog test's real reply: 4 of 17
    # the share's boundary (ECHO_SHARE = 4/5): 4 of 5 words is an echo, 3 of 4 is not
    (["Yes , smoking or non-smoking ?"], "Smoking or non-smoking ?", ["echo"]),  # 4 of 5
    (["Sure . Here you are ."], "Here you are .", []),  # 3 of 4
    # the length's boundary (ECHO_LONG_WORDS = 8): a part of a turn of 8 words is an echo, of 7 is not
    (["one two three four five six seven eight nine ten eleven twelve"],
     "one two three four five six seven eight", ["echo"]),  # 8 of 12 words (0.67), 8 words long
    (["one two three four five six seven eight nine ten eleven twelve"],
     "one two three four five six seven", []),  # 7 of 12 (0.58), 7 words
])
def test_an_echo_copies_a_turn_nearly_whole_or_at_length(context, response, flags):
    assert echoes(context, response) == flags


def test_the_former_echo_rule_is_a_share_of_zero():
    # min_share=0: any reply made of one turn's 3-grams (the rule before issue 54, the benchmark's "before")
    assert echoes(["Okay, see you tomorrow."], "See you tomorrow!", min_share=0) == ["echo"]
    assert echoes(["Okay, see you tomorrow."], "See you tomorrow!", min_share=Fraction(3, 4)) == ["echo"]
    assert echoes(["Okay, see you tomorrow."], "See you tomorrow!", long_words=3) == ["echo"]


def test_copied_share_counts_the_turn_words_inside_a_shared_3gram():
    turn = words_of("okay see you tomorrow")
    assert copied_share(turn, set(ngrams(words_of("see you tomorrow"), 3))) == Fraction(3, 4)
    # two stretches of the turn, "a b c" and "e f g": 6 of its 7 words ("d" is in neither)
    assert copied_share(list("abcdefg"), {("a", "b", "c"), ("e", "f", "g")}) == Fraction(6, 7)
    assert copied_share(list("abcdefg"), {("x", "y", "z")}) == 0
    assert copied_share([], {("a", "b", "c")}) == 0


def test_an_echo_must_come_from_one_turn():
    # "how are you" is in turn 1 and "do you like" in turn 2: no single turn holds both
    assert echoes(CONTEXT, "how are you do you like") == []
    assert echoes([], "do you like dogs") == []


@pytest.mark.parametrize("response, flags", [
    ("dogs like you do", ["salad"]),  # 0 of its 3 word pairs in a turn's order
    ("fine you how hi are", ["salad"]),  # words of both turns, 0 of 4 pairs in order
    ("hi like dogs you", ["salad"]),  # 1 of 3 pairs ("like dogs") in order: at most a third
    ("you like dogs do", []),  # 2 of 3 pairs ("you like", "like dogs") in order
    ("dogs like you", []),  # under 4 words: never a salad
    ("dogs like you very much", []),  # "very", "much" are new words
    ("Dogs? Like you, do!", ["salad"]),  # case and punctuation aside
])
def test_salads_shuffle_the_context_words(response, flags):
    assert salads(CONTEXT, response) == flags


def test_a_salad_needs_a_context_that_holds_its_words():
    assert salads([], "dogs like you do") == []
    assert salads(["Dogs like you."], "dogs like you do") == []  # "do" is not a context word


def test_reply_flags_are_the_response_flags_first_then_the_echo_then_the_salad():
    assert reply_flags(CONTEXT, "") == ["empty"]
    assert reply_flags(CONTEXT, "you like dogs you like dogs you like dogs") == ["repetitive"]
    assert reply_flags(CONTEXT, "I'm fine. Do you like dogs?") == ["echo"]
    assert reply_flags(CONTEXT, "dogs like you do") == ["salad"]
    assert reply_flags(CONTEXT, "I love them.") == []
