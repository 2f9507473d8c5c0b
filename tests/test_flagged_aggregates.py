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
from dialeval.core.results import mean
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
    assert logged == {"skipped_rows": 0.0, "fed_turn_overall": pytest.approx((8.0 + 5.0 - 1000.0) / 3, rel=1e-12)}


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

    with pytest.warns(UserWarning, match="1 of 3 evaluation rows have no reference"):
        logged = compute_metrics(_Tokenizer(), metrics=["multiref"],
                                 options={"multiref": {"metrics": ["bleu1"]}})(Prediction())
    assert logged == {"skipped_rows": 1.0, "multiref_bleu1": pytest.approx(1.0, rel=1e-12)}
