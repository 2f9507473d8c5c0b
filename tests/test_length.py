"""Response length and degenerate responses in the meta-evaluation (issue 23, item 1):
:mod:`dialeval.metaeval.length` on hand-computed values."""

import pytest

from dialeval.metaeval.length import length_correlation, markdown, merge, set_summary, spearman
from dialeval.data import JudgmentItem

# responses of 1, 2, 3 and 4 words; the raters prefer the short ones (rho(human, length) = -1)
ITEMS = [JudgmentItem(context=["hi"], response=" ".join(["word"] * k), score=float(5 - k)) for k in (1, 2, 3, 4)]
NAN = float("nan")


def cell(per_item, job="m", signature="metric:m"):
    return {"set": "s", "job": job, "metric": "m", "options": {}, "status": "ok", "signature": signature,
            "per_item": per_item}


def test_spearman_of_a_known_ordering():
    # ranks (1, 3, 2, 4) against (1, 2, 3, 4): d^2 = 0 + 1 + 1 + 0, rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8
    rho, p = spearman([0.1, 0.3, 0.2, 0.4], [1, 2, 3, 4])
    assert rho == pytest.approx(0.8, rel=1e-12) and 0.0 < p < 1.0
    assert spearman([1, 1, 1], [1, 2, 3]) is None  # constant: no ranking
    assert spearman([1, NAN, 2], [1, 2, 3]) is None  # 2 finite pairs


def test_each_sub_score_against_length_with_the_humans_beside_it():
    metaeval = {"sets": {"s": {"n": 4}}, "cells": [
        cell({"a": [0.1, 0.3, 0.2, 0.4], "b": [NAN, 1.0, 3.0, 2.0], "c": [7.0] * 4}),
        {"set": "s", "job": "skipped", "metric": "m", "status": "not applicable", "reason": "no references"},
    ]}
    result = length_correlation(metaeval, {"s": ITEMS}, {"word": 0})
    rows = {r["score"]: r for r in result["rows"]}
    assert list(rows) == ["a", "b", "c"]
    assert (rows["a"]["n"], rows["a"]["rho_metric_length"], rows["a"]["rho_human_length"]) == (
        4, pytest.approx(0.8, rel=1e-12), pytest.approx(-1.0, rel=1e-12))
    # b leaves out item 1: ranks (1, 3, 2) against lengths (2, 3, 4): rho = 1 - 6 * 2 / (3 * 8) = 0.5
    assert (rows["b"]["n"], rows["b"]["rho_metric_length"], rows["b"]["rho_human_length"]) == (
        3, pytest.approx(0.5, rel=1e-12), pytest.approx(-1.0, rel=1e-12))
    assert (rows["c"]["rho_metric_length"], rows["c"]["p_metric_length"]) == (None, None)
    assert result["missing"] == []
    line = next(x for x in markdown(result, ["metaeval.json"]).splitlines() if " m:a " in x)
    assert line.split() == ["s", "m:a", "4", "0.800", "-1.000*"]  # rho = -1: p = 0


def test_flags_and_lengths_per_set():
    items = [JudgmentItem(context=["hi"], response=r, score=1.0)
             for r in ("", "the the the the the", "asdf qwer zxcv", "fine , thanks .")]
    summary = set_summary(items, {"the": 0, "fine": 1, "thanks": 2})
    # words: 0, 5, 3, 2 (punctuation is not a word)
    assert summary == {"n": 4, "mean_words": 2.5, "flagged": {"empty": 1, "repetitive": 1, "unknown_words": 1}}


def test_scores_come_from_the_cache_only_under_the_cells_signature(tmp_path, monkeypatch):
    from dialeval.scoring.cache import cached_scores

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    cached_scores("m", {}, [vars(it) for it in ITEMS], lambda: ({"a": [4.0, 3.0, 2.0, 1.0]}, "metric:m"))
    slim = [{k: v for k, v in cell({}, job, signature).items() if k != "per_item"}
            for job, signature in (("same", "metric:m"), ("retrained", "metric:m|model:other"))]
    result = length_correlation({"sets": {"s": {}}, "cells": slim}, {"s": ITEMS}, {})
    assert [(r["job"], r["rho_metric_length"]) for r in result["rows"]] == [("same", pytest.approx(-1.0, rel=1e-12))]
    assert result["missing"] == [{"set": "s", "job": "retrained", "reason": "no per-item scores with its signature"}]
    assert result["sets"]["s"]["mean_words"] == 2.5


def test_a_later_metaeval_replaces_the_same_cell():
    """Cells come in the order of their set, then of the grid's jobs (``multiref`` before ``grade``)."""
    old = {"sets": {"s": {}, "t": {}}, "cells": [dict(cell({"a": [1.0]}, "grade"), set="t"),
                                                 cell({"a": [2.0]}, "grade"), cell({"a": [3.0]}, "other")]}
    new = {"sets": {"s": {}}, "cells": [cell({"a": [4.0]}, "grade"), cell({"a": [5.0]}, "multiref")]}
    merged = merge([old, new])
    assert list(merged["sets"]) == ["s", "t"]
    assert [(c["set"], c["job"], c["per_item"]["a"][0]) for c in merged["cells"]] == [
        ("s", "multiref", 5.0), ("s", "grade", 4.0), ("s", "other", 3.0), ("t", "grade", 1.0)]
    absent = {(a["set"], a["job"]) for a in merged["absent"]}
    assert ("t", "multiref") in absent and ("s", "grade") not in absent and ("t", "grade") not in absent
    result = length_correlation(merged, {"s": ITEMS[:1], "t": ITEMS[:1]}, {})
    assert {"set": "t", "job": "multiref", "reason": "not in the meta-evaluation files"} in result["missing"]
