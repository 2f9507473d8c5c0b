"""``dialeval examples``' table (issue 54, item 4): per column its scale and direction, per item the
value with its percentile among human replies where a stored reference matches, a flagged reply as
``flagged:<flag>`` instead of its worst value, and below the items each column's mean, mean over
unflagged replies, flagged count and mean percentile; ``--json`` carries the same."""

import json

import pytest

from dialeval import registry
from dialeval.cli import main
from dialeval.models import hub
from dialeval.scoring import human_reference as hr

ROWS = [
    {"id": "a", "context": ["Do you like dogs?"], "response": "Yes, I have two dogs at home.",
     "references": ["yes , i love dogs ."]},
    {"id": "b", "context": ["How was your weekend?"], "response": "", "references": ["it was great , thanks ."]},
    {"id": "c", "context": ["What music do you like?"], "response": "I like jazz and rock.",
     "references": ["mostly jazz ."]},
]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """The printed table and the --json output of multiref and GRADE on ROWS (one blank reply)."""
    import contextlib
    import io

    path = tmp_path_factory.mktemp("examples") / "in.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    found = []
    for extra in ([], ["--json"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["examples", "--input", str(path), "--metrics", "multiref", "grade", *extra]) == 0
        found.append(out.getvalue())
    return found[0], json.loads(found[1])


def stored_grade():
    path = hub.hub_root() / registry.spec("grade").bundled[0] / hr.FILE
    return json.loads(path.read_text())["references"][0]["scores"]["grade"]


def by_hand(value, stored):
    return 100 * (sum(v < value for v in stored) + sum(v == value for v in stored) / 2) / len(stored)


def test_json_carries_flags_percentiles_and_the_summary(outputs):
    _, found = outputs
    grade, multiref = found["grade"], found["multiref"]
    values = grade["scores"]["grade"]
    assert grade["flags"]["grade"] == [[], ["empty"], []] == multiref["flags"]["bleu2"]
    assert values[1] == 0.0  # the worst value of a 0-to-1 score
    stored = stored_grade()
    expected = [by_hand(values[0], stored), 0.0, by_hand(values[2], stored)]
    assert grade["percentiles"]["grade"] == expected and "percentiles" not in multiref  # multiref has no reference
    assert list(grade["percentiles_among"]) == ["human replies on DailyDialog test (n=200, seed 0)"]
    assert grade["summary"]["grade"] == {
        "mean": pytest.approx(sum(values) / 3, rel=1e-12), "flagged": 1,
        "unflagged": pytest.approx((values[0] + values[2]) / 2, rel=1e-12),
        "percentile": pytest.approx(sum(expected) / 3, rel=1e-12)}
    bleu2 = multiref["scores"]["bleu2"]
    assert multiref["summary"]["bleu2"] == {"mean": pytest.approx(sum(bleu2) / 3, rel=1e-12), "flagged": 1,
                                            "unflagged": pytest.approx((bleu2[0] + bleu2[2]) / 2, rel=1e-12),
                                            "percentile": None}


def test_the_table_shows_flags_percentiles_summary_rows_and_each_scale(outputs):
    table, found = outputs
    lines = table.splitlines()
    header = lines[0].split()
    assert header == ["id", "response", "multiref:bleu2", "multiref:meteor", "multiref:rougeL",
                      "multiref:greedy_matching", "grade:grade"]
    grade = found["grade"]
    row = {line.split()[0]: line for line in lines[2:5]}
    assert row["a"].rstrip().endswith(f"{grade['scores']['grade'][0]:.3f} p{grade['percentiles']['grade'][0]:.0f}")
    assert row["b"].split() == ["b"] + ["flagged:empty"] * 5  # not a bare 0.000 (or FED's -1000.000)
    cells = {name: line.split(name)[1].split() for name, line in zip(
        ("mean unflagged", "mean percentile", "flagged", "mean"),
        (lines[6], lines[8], lines[7], lines[5]))}
    s = grade["summary"]["grade"]
    assert cells["mean"][-1] == f"{s['mean']:.3f}" and cells["mean unflagged"][-1] == f"{s['unflagged']:.3f}"
    assert cells["flagged"] == ["1"] * 5 and cells["mean percentile"] == ["-"] * 4 + [f"{s['percentile']:.1f}"]
    assert "  grade:grade: 0 to 1, higher = better; GRADE: coherence" in table
    assert "  multiref:greedy_matching: -1 to 1, higher = better; " in table
    assert "pNN: the percentile among human replies on DailyDialog test (n=200, seed 0)" in table
    assert "never a percentile unless marked pNN; flagged:<flag>: a degenerate reply" in table
    assert "raw:" not in table  # no raw column here: no raw note


def test_a_raw_column_gets_the_raw_note_and_its_meaning(monkeypatch, capsys, tmp_path):
    """A perplexity-based column (full: 0 or more, higher = better, raw) is explained under the table,
    so its 0-100 values are not read as percentiles."""
    from dialeval.scoring import runners

    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    monkeypatch.setitem(runners.RUNNERS, "full", lambda items, level="turn": (
        {"full": [42.0 if it["response"] else 0.0 for it in items]}, "metric:full|fake"))
    assert main(["examples", "--input", str(path), "--metrics", "full"]) == 0
    table = capsys.readouterr().out
    assert "  full:full: 0 or more, higher = better, raw; FULL: how unlikely the negative follow-ups" in table
    assert "raw: a value no normalisation has put on a fixed scale" in table
    assert "flagged:empty" in table.splitlines()[3] and "42.000" in table.splitlines()[2]
