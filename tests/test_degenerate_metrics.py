"""No metric rewards an empty, word-less or repeated response under its default options (issues 23
and 30): "", three zero-width spaces, punctuation, emoji, markup and a sentence said 50 times never
reach a plain, sensible reply's score on any sub-score (never NaN either: a flagged item counts in
every mean), and carry their flag; the scorers' flags reach the score cache and ``dialeval compare``."""

import json
import math

import pytest

import dialeval

CONTEXT = ["Do you like reading books?"]
PLAIN = "Yes, mostly novels. I read one every week."
REPEATED = " ".join(["I like it."] * 50)
RESPONSES = [PLAIN, "", REPEATED, "\u200b\u200b\u200b", "?!", "<br><br>", "\U0001F600\U0001F600"]
FLAGS = [[], ["empty"], ["repetitive"], ["empty"], ["no_words"], ["no_words"], ["no_words"]]
N = len(RESPONSES)


def not_rewarded(scores: list[float]) -> None:
    """Every degenerate response's score is a number strictly below the plain one's."""
    plain, *degenerate = scores
    assert not math.isnan(plain)
    for value in degenerate:
        assert not math.isnan(value) and value < plain


@pytest.mark.slow
def test_multiref():
    out = dialeval.load("multiref").compute(predictions=RESPONSES, references=[["I read novels every week."]] * N)
    assert out["flags"] == FLAGS
    for name in ("bleu1", "bleu2", "meteor", "rougeL", "embedding_average", "vector_extrema", "greedy_matching"):
        not_rewarded(out[f"{name}_scores"])


@pytest.mark.slow
def test_fed():
    out = dialeval.load("fed").compute(conversations=[CONTEXT + [r] for r in RESPONSES], level="both")
    assert out["flags"] == FLAGS
    for name in (k for k in out if k.endswith("_scores")):
        not_rewarded(out[name])


@pytest.mark.slow
@pytest.mark.parametrize("aspect", ["coherence", "fluency"])
def test_holistic_likelihood(aspect):
    inputs = {"queries": [CONTEXT[0]] * N} if aspect == "coherence" else {}
    out = dialeval.load("holistic", aspect).compute(responses=RESPONSES, **inputs)
    assert out["flags"] == FLAGS
    assert out[f"{aspect}_scores"][1:] == [0.0] * (N - 1) and out[f"{aspect}_scores"][0] > 0.0
    not_rewarded(out[f"{aspect}_raw_scores"])


@pytest.mark.slow
def test_holistic_consistency():
    out = dialeval.load("holistic", "consistency").compute(
        histories=[["I read a lot.", "Nice!"]] * N, responses=RESPONSES)
    assert out["flags"] == FLAGS
    assert out["consistency_scores"][1:] == [0.0] * (N - 1) and out["consistency_scores"][0] > 0.0


@pytest.mark.slow
def test_grade():
    out = dialeval.load("grade").compute(contexts=[CONTEXT] * N, responses=RESPONSES)
    assert out["flags"] == FLAGS
    assert out["grade_scores"][1:] == [0.0] * (N - 1) and out["grade_scores"][0] > 0.0


@pytest.mark.slow
def test_ssrem():
    out = dialeval.load("ssrem").compute(contexts=[CONTEXT] * N, responses=RESPONSES,
                                         references=["I read novels every week."] * N)
    assert out["flags"] == FLAGS
    for name in ("ssrem", "ssrem_f", "ssrem_g"):
        not_rewarded(out[f"{name}_scores"])


ECHO = "do you like reading books"  # the last turn again (issue 32: the echo flag)
SALAD = "books you reading like do"  # the last turn's words shuffled (issue 32: the salad flag)


@pytest.mark.slow
@pytest.mark.parametrize("reply, flag", [(ECHO, "echo"), (SALAD, "salad")])
@pytest.mark.parametrize("metric, config, inputs, scores", [
    ("grade", None, {"contexts": [CONTEXT] * 2}, ["grade"]),
    ("holistic", "coherence", {"queries": [CONTEXT[0]] * 2}, ["coherence", "coherence_raw"]),
    ("fed", None, {}, ["turn_overall", "turn_relevant", "turn_fluent"]),
    ("full", None, {"contexts": [CONTEXT] * 2}, ["full"]),
    ("ssrem", None, {"contexts": [CONTEXT] * 2, "references": ["I read novels every week."] * 2},
     ["ssrem", "ssrem_f", "ssrem_g"]),
])
def test_metrics_that_read_the_context_flag_an_echo_and_a_salad(metric, config, inputs, scores, reply, flag):
    """An echo of the last turn, or a salad of its words, gets the worst value of every sub-score
    (the policy), not its score."""
    module = dialeval.load(metric, config) if config else dialeval.load(metric)
    if metric == "fed":
        out = module.compute(conversations=[CONTEXT + [PLAIN], CONTEXT + [reply]])
    else:
        out = module.compute(responses=[PLAIN, reply], **inputs)
    assert out["flags"] == [[], [flag]]
    for name in scores:
        not_rewarded(out[f"{name}_scores"])


@pytest.mark.slow
def test_fluency_judges_an_echo_as_a_reply():
    """Fluency reads the reply alone: an echo of a fluent turn is fluent and is not flagged."""
    out = dialeval.load("holistic", "fluency").compute(responses=[PLAIN, ECHO])
    assert out["flags"] == [[], []] and out["fluency_raw_scores"][1] > -1000


def test_holistic_runner_carries_the_flags_its_aspects_set():
    """The runner's flags are the union of its aspects' flags; diversity flags each degenerate
    member of a group, which adds nothing to its group and scores 0."""
    from dialeval.scoring.runners import get_runner

    items = [{"context": ["I read a lot.", "Nice!"], "response": r, "group": "g"} for r in RESPONSES + ["No, never."]]
    assert get_runner("holistic")(items, aspects=["consistency", "diversity"]).flags == FLAGS + [[]]
    per_item, _ = result = get_runner("holistic")(items, aspects=["diversity"])
    assert result.flags == FLAGS + [[]]
    assert per_item["diversity"][1:N] == [0.0] * (N - 1)
    from dialeval.holistic.scorer import diversity
    assert per_item["diversity"][0] == per_item["diversity"][N] == diversity([[PLAIN, "No, never."]])["diversity"]


UNKNOWN_ITEMS = [{"context": CONTEXT, "response": r, "references": ["I read novels every week."]}
                 for r in (PLAIN, "asdf qwer zxcv")]


def test_the_score_cache_returns_the_scorers_flags(tmp_path, monkeypatch):
    """SSREM's own flag (``unknown_words``) goes through its runner into the score cache, and a
    cached run returns the flags of the fresh one."""
    from dialeval.scoring.runners import get_runner
    from dialeval.scoring.cache import cached_scores

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    fresh = cached_scores("ssrem", {}, UNKNOWN_ITEMS, lambda: get_runner("ssrem")(UNKNOWN_ITEMS))
    cached = cached_scores("ssrem", {}, UNKNOWN_ITEMS, lambda: pytest.fail("scored again"))
    assert (fresh["from_cache"], cached["from_cache"]) == (False, True)
    assert fresh["flags"] == cached["flags"] == [[], ["unknown_words"]]
    assert cached["signature"] == fresh["signature"]


def test_a_cache_entry_without_flags_is_scored_again(tmp_path, monkeypatch):
    """An entry written before the flags (format 1: no ``format``, no ``flags``) is not returned
    as if its items had none: the items are scored again and the entry rewritten; its scores stay
    readable for what needs the scores alone."""
    from dialeval.scoring import cache as score_cache

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    items = [{"context": CONTEXT, "response": ""}]
    path = score_cache.scores_dir() / f"{score_cache.cache_key('m', {}, items)}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"metric": "m", "options": {}, "per_item": {"x": [0.5]}, "signature": "metric:m",
                                "seconds": 1.0}), encoding="utf-8")
    assert score_cache.stored_scores("m", {}, items)["per_item"] == {"x": [0.5]}
    again = score_cache.cached_scores("m", {}, items, lambda: ({"x": [0.0]}, "metric:m"))
    assert (again["from_cache"], again["flags"], again["per_item"]) == (False, [["empty"]], {"x": [0.0]})
    assert score_cache.stored_scores("m", {}, items)["format"] == score_cache.CACHE_FORMAT == 6


def test_compare_counts_the_scorers_flags_per_system(tmp_path, monkeypatch):
    """``dialeval compare`` reports, per system, how many of its items the metric flagged (from the
    runner's flags, through the score cache; and from a scored output's lines)."""
    from dialeval import compare
    from dialeval.scoring import runners
    from dialeval.cli import main
    from dialeval.core.results import ItemScores

    def fake(items, **options):
        return ItemScores({"x": [float(len(it["response"])) for it in items]}, "metric:fake",
                          [["unknown_words"] if it["response"].startswith("asdf") else [] for it in items])

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(runners.RUNNERS, "multiref", fake)
    systems = {"a": ["asdf qwer", "asdf", "ok then"], "b": ["yes", "asdf", "no, thanks"]}
    paths = []
    for name, responses in systems.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": str(i), "context": [f"turn {i}"], "response": r}) + "\n"
                                for i, r in enumerate(responses)), encoding="utf-8")
        paths.append(path)
    expected = {"a": {"unknown_words": 2}, "b": {"unknown_words": 1}}
    result = compare.compare_files(paths, ["multiref"], human=False, n_resamples=50, n_permutations=50,
                                   progress=False)
    assert result["metrics"]["multiref"]["flagged"] == expected
    assert "): a 2 unknown_words; b 1 unknown_words." in compare.markdown(result)
    scored = []
    for path in paths:
        out = path.with_suffix(".scored.jsonl")
        assert main(["score", "--metric", "multiref", "--input", str(path), "--output", str(out)]) == 0
        scored.append(out)
    from_outputs = compare.compare_files(scored, human=False, n_resamples=50, n_permutations=50, progress=False)
    assert from_outputs["metrics"]["multiref"]["flagged"] == expected


LONG_REPETITION = " ".join(["I like it very much."] * 2000)


def test_flagged_texts_are_not_run_through_the_models(tmp_path, monkeypatch):
    """A flagged reply is thrown away, so it is not scored first (a repeated reply cost 61 s of
    coherence and 96 s of fluency before being replaced by 0): FED, holistic coherence, fluency and
    consistency, and multiref see only the plain reply."""
    from tiny_lm import tiny_gpt2

    from dialeval.core.lm import LMScorer
    from dialeval.fed.scorer import FEDScorer
    from dialeval.holistic.scorer import ConsistencyScorer, LikelihoodScorer
    from dialeval.multiref.scorer import MultiRefScorer

    model, tokenizer = tiny_gpt2(tmp_path)
    responses = [PLAIN, "", LONG_REPETITION, "?!"]
    seen = []
    for method in ("grouped_logprobs", "pair_logprobs", "continuation_logprobs"):
        original = getattr(LMScorer, method)

        def spy(self, *args, _original=original, _name=method, **kwargs):
            seen.append((_name, args))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(LMScorer, method, spy)
    out = FEDScorer((model, tokenizer)).score([CONTEXT + [r] for r in responses], level="turn")
    assert out["flags"] == [[], ["empty"], ["repetitive"], ["no_words"]]
    groups = [args[0] for name, args in seen if name == "grouped_logprobs"]
    assert sum(len(g) for g in groups) == 1  # one context scored: the plain reply's conversation
    likelihood = LikelihoodScorer(str(tmp_path))
    # coherence: weighted PMI (the default), whose reply-alone term runs the fluency pass too
    for aspect, methods, cutoff in (("coherence", ("pair_logprobs", "continuation_logprobs"), (-5.0, 5.0)),
                                    ("fluency", ("continuation_logprobs",), -5.0)):
        seen.clear()
        likelihood.score(aspect, responses, [CONTEXT[0]] * 4, cutoff=cutoff)
        for method in methods:
            calls = [args for name, args in seen if name == method]
            assert len(calls) == 1 and len(calls[0][1]) == 1, (aspect, method)  # one call, with one response

    class CountingNLI:
        model_name = "counting"
        hypotheses: list = []

        def contradiction_probs(self, premises, hypotheses):
            self.hypotheses += hypotheses
            return [0.1] * len(hypotheses)

    nli = CountingNLI()
    ConsistencyScorer(nli).score([["I read a lot.", "Nice!"]] * 4, responses)
    assert nli.hypotheses == [PLAIN]
    pairs = []
    original_pairs = MultiRefScorer.score_pairs
    monkeypatch.setattr(MultiRefScorer, "score_pairs", lambda self, p: pairs.extend(p) or original_pairs(self, p))
    MultiRefScorer(metrics=["bleu1"]).quality(responses, [["I read novels."]] * 4)
    assert len(pairs) == 1
