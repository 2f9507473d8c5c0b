"""A flagged item counts in every aggregate (issue 30, item 1): replacing any reply by an empty,
word-less or repetitive one can never raise a system's mean or rank on any sub-score of any metric.

The policy's arithmetic is checked for every sub-score the registry's metrics declare, over random
systems; end to end, ``dialeval compare`` ranks a half-empty and a half-repetitive copy of a system
strictly below it on every FED sub-score (the issue's example: both copies used to tie with it,
difference 0, p = 1), and the ``Trainer`` hook's logged means drop.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dialeval import registry
from dialeval.core.degenerate import apply_policy, worst
from dialeval.core.results import ItemScores, mean
from dialeval.models.shipped import shipped_dir

DIRECTED = [(spec.name, sub, scale) for spec in registry.specs() for sub, scale in spec.scales().items()
            if scale.higher_is_better is not None]


def test_every_directed_subscore_has_a_finite_worst_value():
    """A bound on its bad side, or a declared floor: a flagged item is never NaN, so never dropped."""
    missing = [(metric, sub) for metric, sub, scale in DIRECTED if not math.isfinite(worst(scale))]
    assert DIRECTED and missing == []


@pytest.mark.parametrize("metric,sub,scale", DIRECTED, ids=[f"{m}-{s}" for m, s, _ in DIRECTED])
def test_replacing_replies_by_flagged_ones_never_raises_the_mean(metric, sub, scale):
    """Random systems of 30 items (values spread over the scale, beyond a floor too, some NaN for
    "does not apply"): flagging any random subset of items lowers or keeps the mean, and lowers
    it strictly when a flagged item's value was above the worst."""
    rng = np.random.default_rng(abs(hash((metric, sub))) % 2**32)
    low = scale.low if scale.low is not None else (scale.floor * 2 if scale.floor is not None else -10.0)
    high = scale.high if scale.high is not None else 50.0
    bad = worst(scale)
    for _ in range(50):
        values = rng.uniform(low, high, 30)
        values[rng.random(30) < 0.1] = math.nan
        flags = [["empty"] if flagged else [] for flagged in rng.random(30) < rng.random()]
        before = apply_policy({sub: list(values)}, [[]] * 30, {sub: scale})[sub]
        after = apply_policy({sub: list(values)}, flags, {sub: scale})[sub]
        if not scale.higher_is_better:
            before, after = [-v for v in before], [-v for v in after]
        assert not any(math.isnan(v) for v, f in zip(after, flags) if f)
        assert mean(after) <= mean(before) + 1e-12
        raised = [b for b, f in zip(before, flags) if f and not math.isnan(b) and b != (bad if scale.higher_is_better else -bad)]
        if raised and all(not math.isnan(v) for v in before):
            assert mean(after) < mean(before)


def test_a_real_score_below_the_floor_is_clipped_to_it():
    """So that replacing it by a flagged reply (scored as the floor) cannot raise the mean either."""
    from dialeval.core.scales import raw

    scale = raw("a log-likelihood difference", floor=-100.0)
    assert apply_policy({"x": [-250.0, 3.0, math.nan]}, [[], [], []], {"x": scale}) == {"x": [-100.0, 3.0, math.nan]}
    assert apply_policy({"x": [-250.0, 3.0]}, [[], ["no_words"]], {"x": scale}) == {"x": [-100.0, -100.0]}


def _systems(tmp_path):
    """examples/chatbot_a.jsonl, a copy with every other reply empty and one with every other reply
    said 10 times (repetitive)."""
    rows = [json.loads(line) for line in (shipped_dir("examples") / "chatbot_a.jsonl").read_text().splitlines()]
    variants = {"a": lambda r, i: r, "half_empty": lambda r, i: "" if i % 2 else r,
                "half_repetitive": lambda r, i: " ".join([r] * 10) if i % 2 else r}
    paths = []
    for name, change in variants.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({**row, "response": change(row["response"], i)}) + "\n"
                                for i, row in enumerate(rows)), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.slow
def test_compare_ranks_half_degenerate_copies_strictly_below_on_every_fed_subscore(tmp_path, monkeypatch):
    from dialeval import compare

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    result = compare.compare_files(_systems(tmp_path), ["fed"], human=False, n_resamples=200,
                                   n_permutations=1000, progress=False)
    entry = result["metrics"]["fed"]
    assert entry["flagged"] == {"a": {}, "half_empty": {"empty": 12}, "half_repetitive": {"repetitive": 12}}
    assert len(entry["scores"]) == 9 and not entry["skipped"]
    for sub, block in entry["scores"].items():
        assert block["n_dropped"] == 0, sub
        ranked = {s["name"]: s for s in block["systems"]}
        for copy in ("half_empty", "half_repetitive"):
            assert ranked["a"]["mean"] > ranked[copy]["mean"], (sub, copy)
            assert ranked["a"]["rank"] < ranked[copy]["rank"], (sub, copy)


def test_the_trainer_hook_logs_a_lower_mean_when_generations_are_empty(monkeypatch):
    """The hook's logged mean counts empty generations as the worst value, where it left them out."""
    from dialeval.scoring import runners
    from dialeval.core.results import ItemScores
    from dialeval.fed.scales import scales
    from dialeval.integrations import compute_metrics

    def fake_fed(items, **options):  # FED's scales and policy over a score of the response's length
        per_item = {"turn_overall": [float(len(it["response"])) for it in items]}
        flags = [["empty"] if not it["response"] else [] for it in items]
        return ItemScores(apply_policy(per_item, flags, scales()), "metric:fed", flags)

    class Prediction:
        predictions = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0]])
        label_ids = np.array([[1, 1, 0], [1, 0, 0], [1, 0, 0]])

    monkeypatch.setitem(runners.RUNNERS, "fed", fake_fed)
    logged = compute_metrics(_Tokenizer(), metrics=["fed"])(Prediction())
    # the mean counts the empty generation at the floor; beside it the count and the mean of the other two
    assert logged == {"skipped_rows": 0.0, "fed_turn_overall": pytest.approx((8.0 + 5.0 - 1000.0) / 3, rel=1e-12),
                      "fed_turn_overall_unflagged": pytest.approx((8.0 + 5.0) / 2, rel=1e-12), "fed_flagged": 1.0}


class _Tokenizer:
    """Decodes id ``t`` as the word ``w<t>``; 0 is padding (``-100`` becomes 0 first)."""

    pad_token_id, eos_token_id = 0, 0

    def batch_decode(self, rows, skip_special_tokens=True):
        return [" ".join(f"w{t}" for t in row if t) for row in rows]


def test_the_trainer_hook_skips_and_counts_rows_whose_labels_are_fully_masked():
    """A label row of -100 only decodes to no reference: that row is skipped (counted in
    ``skipped_rows``, with a warning) instead of stopping the evaluation loop with
    ``references[1][0] is an empty string``."""
    from dialeval.integrations import compute_metrics

    class Prediction:
        predictions = np.array([[1, 2, 3], [4, 5, 0], [1, 2, 0]])
        label_ids = np.array([[1, 2, 3], [-100, -100, -100], [1, 2, -100]])

    with pytest.warns(UserWarning, match="1 of 3 evaluation rows have no reference .*skipped by multiref, counted"):
        logged = compute_metrics(_Tokenizer(), metrics=["multiref"],
                                 options={"multiref": {"metrics": ["bleu1"]}})(Prediction())
    assert logged == {"skipped_rows": 1.0, "multiref_bleu1": pytest.approx(1.0, rel=1e-12),
                      "multiref_bleu1_unflagged": pytest.approx(1.0, rel=1e-12), "multiref_flagged": 0.0}


def test_reference_free_metrics_score_rows_whose_labels_are_fully_masked_given_contexts(monkeypatch):
    """With ``contexts``, a reference-free metric (its spec's demo choices need no references: fed)
    scores the row whose label is fully masked, and its empty generation is counted as flagged; a
    metric that needs references (multiref) still skips it, counted in ``skipped_rows``. Without
    ``contexts`` every metric skips it."""
    from dialeval.scoring import runners
    from dialeval.fed.scales import scales
    from dialeval.integrations import compute_metrics, needs_references

    seen = []

    def fake_fed(items, **options):  # FED's scales and policy over a score of the response's length
        seen.append([it["response"] for it in items])
        per_item = {"turn_overall": [float(len(it["response"])) for it in items]}
        flags = [["empty"] if not it["response"] else [] for it in items]
        return ItemScores(apply_policy(per_item, flags, scales()), "metric:fed", flags)

    class Prediction:
        predictions = np.array([[1, 1, 1], [0, 0, 0], [1, 2, 0]])
        label_ids = np.array([[1, 1, 1], [-100, -100, -100], [1, 2, -100]])

    assert not needs_references("fed") and needs_references("multiref")
    monkeypatch.setitem(runners.RUNNERS, "fed", fake_fed)
    with pytest.warns(UserWarning, match=r"1 of 3 .*skipped by multiref \(scored by fed, which need none\)"):
        logged = compute_metrics(_Tokenizer(), metrics=["fed", "multiref"], contexts=[["a"], ["b"], ["c"]],
                                 options={"multiref": {"metrics": ["bleu1"]}})(Prediction())
    assert seen == [["w1 w1 w1", "", "w1 w2"]]
    assert logged == {"skipped_rows": 1.0, "fed_turn_overall": pytest.approx((8.0 - 1000.0 + 5.0) / 3, rel=1e-12),
                      "fed_turn_overall_unflagged": pytest.approx(6.5, rel=1e-12), "fed_flagged": 1.0,
                      "multiref_bleu1": pytest.approx(1.0, rel=1e-12),
                      "multiref_bleu1_unflagged": pytest.approx(1.0, rel=1e-12), "multiref_flagged": 0.0}
    seen.clear()
    with pytest.warns(UserWarning, match="1 of 3 .*skipped by fed, counted"):
        logged = compute_metrics(_Tokenizer(), metrics=["fed"])(Prediction())
    assert seen == [["w1 w1 w1", "w1 w2"]] and logged["skipped_rows"] == 1.0 and logged["fed_flagged"] == 0.0


# -- the readings beside the mean (issue 54, item 3): flagged, <score>_unflagged, <score>_percentile ------


def _reference(metric, sub, values):
    """A stored human reference of ``metric``'s ``sub`` holding ``values`` (the arithmetic only)."""
    from dialeval.scoring.human_reference import HumanReference

    return HumanReference(metric, {}, {sub: tuple(sorted(values))}, {"source": "test", "n": len(values), "seed": 0},
                          "metric:test")


@pytest.mark.parametrize("metric,sub,scale", DIRECTED, ids=[f"{m}-{s}" for m, s, _ in DIRECTED])
def test_replacing_replies_by_flagged_ones_never_raises_the_mean_percentile(metric, sub, scale):
    """Random systems of 30 items against a random human reference of 40 (both spread over the
    scale, with ties at the worst value, where a flagged reply's value used to read a mid-rank above
    0): flagging any random subset lowers or keeps the mean percentile, and lowers it strictly when
    a flagged item's percentile was above 0."""
    from dialeval.core.results import percentile_means

    rng = np.random.default_rng(abs(hash(("percentile", metric, sub))) % 2**32)
    low = scale.low if scale.low is not None else (scale.floor if scale.floor is not None else -10.0)
    high = scale.high if scale.high is not None else 50.0
    bad = worst(scale)
    for _ in range(50):
        humans = list(rng.uniform(low, high, 40)) + [bad] * 3
        reference = _reference(metric, sub, humans)
        values = list(rng.uniform(low, high, 30))
        values[:2] = [bad, bad]  # real replies at the worst value: a mid-rank percentile, above 0
        flags = [["empty"] if flagged else [] for flagged in rng.random(30) < rng.random()]
        before = reference.percentiles(sub, values, [[]] * 30)
        after = reference.percentiles(sub, apply_policy({sub: values}, flags, {sub: scale})[sub], flags)
        assert all(a == 0.0 for a, f in zip(after, flags) if f) and min(before[:2]) > 0
        mean_before = percentile_means({sub: before})[f"{sub}_percentile"]
        mean_after = percentile_means({sub: after})[f"{sub}_percentile"]
        assert mean_after <= mean_before + 1e-12
        if any(f for f in flags):
            assert mean_after < mean_before


def test_fed_with_four_of_eight_replies_blanked_reads_the_unflagged_mean_the_count_and_a_lower_percentile(tmp_path):
    """The issue's example on a tiny random GPT-2 (FED's real model is minutes on CPU): 8
    conversations, then the same with 4 replies blanked. Each directed mean falls (the blanked ones
    at FED's floor, -1000, make it unreadable); ``<score>_unflagged`` is the mean of the 4 unflagged
    replies' scores, in FED's own units; ``flagged`` is 4; and the mean percentile among human
    replies (here a reference of the tiny model's scores of the 8 real replies) falls, with every
    blanked reply at 0."""
    from dialeval.core.results import percentile_means
    from dialeval.fed.scales import scales as fed_scales
    from dialeval.fed.scorer import FEDScorer
    from tiny_lm import tiny_gpt2

    turns = ["Hi! How are you doing today?", "I'm doing well, thanks for asking. What about you?",
             "I just got back from a long walk in the park with my dog.", "Do you like to read books?",
             "I mostly read science fiction and some history.", "What kind of music do you listen to?",
             "I love jazz, rock and a bit of classical music.", "Have you ever been to Paris?",
             "I visited last year and saw the Eiffel Tower.", "Sorry, I don't know what you mean."]
    conversations = [[turns[i], turns[i + 1]] for i in range(8)]
    blanked = [c if i % 2 else [c[0], ""] for i, c in enumerate(conversations)]
    scorer = FEDScorer(tiny_gpt2(tmp_path))
    full, half = scorer.score(conversations), scorer.score(blanked)
    assert full["flagged"] == 0 and half["flagged"] == 4
    assert [bool(f) for f in half["flags"]] == [True, False] * 4
    scores = [k[: -len("_unflagged")] for k in half if k.endswith("_unflagged")]
    assert "turn_overall" in scores and worst(fed_scales()["turn_overall"]) == -1000
    # the issue's unreadable mean: about -500 with half the replies at the floor, the unflagged mean a score
    assert half["turn_overall"] < -400 and abs(half["turn_overall_unflagged"]) < 100
    for score in scores:
        kept = [v for v, f in zip(half[f"{score}_scores"], half["flags"]) if not f]
        assert half[f"{score}_unflagged"] == pytest.approx(sum(kept) / 4, rel=1e-12)
        bad = worst(fed_scales()[score])  # a bound, or FED's floor -1000 for a log-likelihood difference
        assert half[score] == pytest.approx((sum(kept) + 4 * bad) / 8, rel=1e-12)
        assert half[score] < full[score] and full[f"{score}_unflagged"] == pytest.approx(full[score], rel=1e-12)
        reference = _reference("fed", score, full[f"{score}_scores"])
        read = {label: reference.percentiles(score, result[f"{score}_scores"], result["flags"])
                for label, result in (("full", full), ("half", half))}
        assert [p for p, f in zip(read["half"], half["flags"]) if f] == [0.0] * 4
        means = {label: percentile_means({score: p})[f"{score}_percentile"] for label, p in read.items()}
        assert 0 < means["half"] < means["full"]


def test_a_metric_reading_references_scores_the_rows_without_one_in_a_call_of_their_own(monkeypatch):
    """A combined model that reads references when every item has them (Behaviour.reads_references): the masked
    row is scored in its own call, so the rows with a reference keep the scores they get with it."""
    from dialeval import registry
    from dialeval.integrations import compute_metrics, needs_references
    from dialeval.scoring import runners

    calls = []

    def fake_combined(items, **options):  # 1 with references, 0.5 without; a blank reply flagged at 0
        calls.append([it["response"] for it in items])
        refs = all(it["references"] for it in items)
        flags = [["empty"] if not it["response"] else [] for it in items]
        return ItemScores({"combined": [0.0 if f else (1.0 if refs else 0.5) for f in flags]}, "metric:combined", flags)

    class Prediction:
        predictions = np.array([[1, 1, 1], [2, 0, 0], [0, 0, 0]])
        label_ids = np.array([[1, 1, 1], [-100, -100, -100], [1, 2, -100]])

    # combined's default design reads no references since issue 57: a combined model that does (design (a))
    import dataclasses

    declared = registry.spec
    reading = dataclasses.replace(declared("combined"),
                                  behaviour=dataclasses.replace(declared("combined").behaviour, reads_references=True))
    monkeypatch.setattr(registry, "spec", lambda name: reading if name == "combined" else declared(name))
    assert registry.spec("combined").behaviour.reads_references and not needs_references("combined")
    monkeypatch.setitem(runners.RUNNERS, "combined", fake_combined)
    logged = compute_metrics(_Tokenizer(), metrics=["combined"], contexts=[["a"], ["b"], ["c"]])(Prediction())
    assert calls == [["w1 w1 w1", ""], ["w2"]]
    assert logged == {"skipped_rows": 0.0, "combined_combined": pytest.approx((1.0 + 0.0 + 0.5) / 3, rel=1e-12),
                      "combined_combined_unflagged": pytest.approx(0.75, rel=1e-12), "combined_flagged": 1.0}


def test_summarize_reads_flagged_and_unflagged_beside_each_directed_mean_only():
    """By hand: a count (no direction) gets no unflagged mean; a NaN (does not apply) is left out of
    both means; with every item flagged the unflagged mean is NaN, never a number."""
    from dialeval.core.results import summarize
    from dialeval.holistic.scales import SCALES

    per_item = {"consistency": [0.5, 0.0, 0.75, math.nan], "consistency_pairs": [2.0, 0.0, 3.0, 1.0]}
    out = summarize(per_item, "metric:x", [[], ["empty"], [], []], SCALES)
    assert list(out) == ["consistency", "consistency_unflagged", "consistency_scores", "consistency_pairs",
                         "consistency_pairs_scores", "signature", "flags", "flagged"]
    assert out["consistency"] == pytest.approx(1.25 / 3, rel=1e-12)
    assert out["consistency_unflagged"] == pytest.approx(1.25 / 2, rel=1e-12) and out["flagged"] == 1
    assert out["flags"] == [[], ["empty"], [], []]
    everything = summarize({"consistency": [0.0, 0.0]}, "metric:x", [["empty"], ["repetitive"]], SCALES)
    assert everything["flagged"] == 2 and math.isnan(everything["consistency_unflagged"])
    assert list(summarize(per_item, "metric:x")) == ["consistency", "consistency_scores", "consistency_pairs",
                                                     "consistency_pairs_scores", "signature"]  # no flags given
