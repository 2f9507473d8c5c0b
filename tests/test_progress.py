"""dialeval.core.progress: the reporter's lines on a fake clock (no sleeping)."""

from __future__ import annotations

import io

import pytest

from dialeval.core import progress
from dialeval.core.progress import DELAY, INTERVAL, Progress, duration, plural, rate_text


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.delenv("DIALEVAL_VERBOSE", raising=False)


def lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_formats():
    assert duration(90) == "1:30"
    assert duration(59.6) == "1:00"
    assert duration(3725) == "1:02:05"
    assert [plural(u) for u in ("item", "reply", "batch", "day", "epoch")] == [
        "items", "replies", "batches", "days", "epochs"]
    assert rate_text(2.5, "item") == "2.5 items/s"
    assert rate_text(1 / 3, "item") == "3.0 s/item"


def test_silent_under_the_delay_then_time_left():
    """Nothing before DELAY seconds, however many steps; then 10 of 40 items in 30 s -> 90 s left."""
    clock, out = Clock(), io.StringIO()
    with Progress(40, "fed on usr.jsonl", clock=clock, stream=out) as bar:
        for _ in range(9):
            clock.tick((DELAY - 0.5) / 9)
            bar.update()
        assert out.getvalue() == ""
        clock.tick(30 - (DELAY - 0.5))
        bar.update()  # 10 items at 30 s
        assert lines(out) == ["fed on usr.jsonl: 10/40 items (25%), 3.0 s/item, 1:30 left"]
    assert lines(out)[-1] == "fed on usr.jsonl: 10/40 items in 0:30 (3.0 s/item)"


def test_a_short_run_prints_nothing_at_all():
    clock, out = Clock(), io.StringIO()
    with Progress(3, "multiref", clock=clock, stream=out) as bar:
        for _ in range(3):
            clock.tick(1)
            bar.update()
    assert out.getvalue() == ""


def test_lines_at_most_every_interval_and_resumed_items_do_not_count_as_fast():
    """A resumed run (initial=100) rates only the items of this run: 20 items in 40 s, 80 left -> 160 s."""
    clock, out = Clock(), io.StringIO()
    with Progress(200, "grid", initial=100, clock=clock, stream=out) as bar:
        for _ in range(20):
            clock.tick(2)
            bar.update()
    assert lines(out)[:-1] == [
        "grid: 105/200 items (52%), 2.0 s/item, 3:10 left",  # 5 items in 10 s: 95 left -> 190 s
        "grid: 110/200 items (55%), 2.0 s/item, 3:00 left",
        "grid: 115/200 items (57%), 2.0 s/item, 2:50 left",
        "grid: 120/200 items (60%), 2.0 s/item, 2:40 left",
    ]
    assert INTERVAL == 10.0


def test_the_interval_grows_with_the_run():
    """After 300 s a line every 30 s (a tenth of the time so far), never rarer than every 60 s."""
    clock, out = Clock(), io.StringIO()
    with Progress(10_000, "fed", clock=clock, stream=out) as bar:
        clock.tick(300)
        bar.update()
        written = len(lines(out))
        clock.tick(25)
        bar.update()
        assert len(lines(out)) == written
        clock.tick(10)
        bar.update()
        assert len(lines(out)) == written + 1
        clock.tick(5000)
        bar.update()
        clock.tick(61)
        bar.update()
        assert len(lines(out)) == written + 3


def test_nested_levels_in_one_line_and_a_long_step_shows_time_so_far():
    """Combined's components: the outer level without estimate, the inner one with; the watcher's
    refresh during one long step shows the time so far."""
    clock, out = Clock(), io.StringIO()
    with Progress(3, "combined", unit="component", estimate=False, clock=clock, stream=out) as components:
        components.set_label("component 1/3: multiref")
        with Progress(4, "multiref") as items:
            clock.tick(1)
            items.update(4)
        components.update()
        assert out.getvalue() == ""  # a quick component shows nothing
        components.set_label("component 2/3: fed-turn")
        with Progress(300, "fed-turn") as items:
            clock.tick(60)
            items.update(30)
            assert lines(out)[-1] == ("combined: component 2/3: fed-turn, 1:01 so far | "
                                      "fed-turn: 30/300 items (10%), 2.0 s/item, 9:00 left")
            with Progress(2, "fed", unit="context") as groups:  # one long conversation: no step for minutes
                clock.tick(DELAY)
                groups.refresh()  # what the watcher thread calls every second
                assert lines(out)[-1].endswith(" | fed: 0/2 contexts (0%), 0:10 so far")
            assert lines(out)[-1] == "fed: 0/2 contexts in 0:10"
        assert lines(out)[-1].startswith("fed-turn: 30/300 items in 1:10")


def test_turned_off_by_option_by_an_outer_silent_level_and_by_the_environment(monkeypatch):
    clock, out = Clock(), io.StringIO()
    with Progress(10, "a", enabled=False, clock=clock, stream=out) as bar:
        with Progress(10, "b") as inner:
            clock.tick(100)
            inner.update()
            bar.update()
    with progress.silenced():
        with Progress(10, "c", clock=clock, stream=out) as bar:
            clock.tick(100)
            bar.update()
    monkeypatch.setenv(progress.ENV, "0")
    with Progress(10, "d", clock=clock, stream=out) as bar:
        clock.tick(100)
        bar.update()
    assert out.getvalue() == ""


def test_verbose_shows_from_the_first_step(monkeypatch):
    monkeypatch.setenv("DIALEVAL_VERBOSE", "1")
    clock, out = Clock(), io.StringIO()
    with Progress(2, "examples", unit="metric", clock=clock, stream=out) as bar:
        bar.update()
    assert lines(out) == ["examples: 1/2 metrics (50%), 0:00 so far", "examples: 1/2 metrics in 0:00"]


def test_levels_of_other_threads_do_not_nest():
    import threading

    clock, out = Clock(), io.StringIO()
    seen = {}
    with Progress(1, "main", clock=clock, stream=out):
        thread = threading.Thread(target=lambda: seen.update(depth=len(Progress(1, "other", enabled=False).session.stack)))
        thread.start()
        thread.join()
    assert seen == {"depth": 1}


def test_combined_shows_each_component_and_its_items(monkeypatch, tmp_path):
    """combined's components through the real scores_for, with stub chunks on the fake clock: holistic
    (3 s per item) shows its component number and its items; the quick components print nothing."""
    from dialeval.combined.runner import component_scores
    from dialeval.core.results import ItemScores
    from dialeval.scoring import cache

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    clock, out = Clock(), io.StringIO()
    seconds_per_item = {"holistic": 3.0}

    def chunks(metric, items, options, start=0, chunk_size=cache.CHUNK_SIZE):
        for first in range(start, len(items), chunk_size):
            part = list(items[first : first + chunk_size])
            clock.tick(seconds_per_item.get(metric, 0.01) * len(part))
            yield first, part, ItemScores({metric: [0.5] * len(part)}, f"metric:{metric}", [[] for _ in part]), \
                f"metric:{metric}"

    monkeypatch.setattr("dialeval.scoring.chunks.score_chunks", chunks)
    items = [{"context": ["Hi there."], "response": f"Reply number {i}.", "references": ["A reply."]}
             for i in range(40)]
    with Progress(40, "combined on set", clock=clock, stream=out) as outer:  # scores_for's level of combined
        found = component_scores(items)
        outer.update(40)
    assert sorted(found.scores) == sorted(found.signatures) and not found.left_out
    prefix = "combined on set: 0/40 items (0%), {} so far | combined: component 1/3: holistic, {} so far | holistic: "
    assert lines(out) == [
        prefix.format("0:48", "0:48") + "16/40 items (40%), 3.0 s/item, 1:12 left",
        prefix.format("1:36", "1:36") + "32/40 items (80%), 3.0 s/item, 0:24 left",
        prefix.format("2:00", "2:00") + "40/40 items (100%), 3.0 s/item, 0:00 left",
        "holistic: 40/40 items in 2:00 (3.0 s/item)",
        "combined: 3/3 components in 2:01 (40.3 s/component)",  # 120 s + two quick components of 0.4 s
        "combined on set: 40/40 items in 2:01 (3.0 s/item)",
    ]


EXAMPLES_RUN = """
import sys
from dialeval.core import progress
from dialeval.core.results import ItemScores
from dialeval.scoring import runners

progress.DELAY = 0.0  # a run shows its progress from the start unless it is silenced

def runner(items, **options):  # multiref's place: loads a tiny LM as FED's runner does, scores nothing
    from dialeval.core.lm_loading import load_causal_lm

    load_causal_lm(sys.argv[1])
    return ItemScores({"bleu2": [0.5] * len(items)}, "metric:multiref|version:x", [[] for _ in items])

runners.RUNNERS["multiref"] = runner
assert "transformers" not in sys.modules  # as in a fresh `dialeval` process
from dialeval.cli import main
sys.exit(main(["examples", "--metrics", "multiref", *sys.argv[2:]]))
"""


@pytest.mark.slow
def test_examples_is_quiet_by_default_and_verbose_shows_progress_and_loading_bars(tmp_path):
    """`dialeval examples` in a fresh process (transformers imported only when a model loads), with
    multiref's runner replaced by one that loads a tiny LM and progress shown from the start: nothing
    on stderr by default; with --verbose transformers' "Loading weights" bar and the per-metric
    progress line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tiny_lm import tiny_gpt2

    tiny_gpt2(tmp_path)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    env.pop(progress.ENV, None)
    env.pop("DIALEVAL_VERBOSE", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-c", EXAMPLES_RUN, str(tmp_path), *args], env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done

    quiet, verbose = run(), run("--verbose")
    assert quiet.stderr == ""
    assert "Loading weights" in verbose.stderr
    assert "examples: multiref: 6/6 items in 0:" in verbose.stderr
    assert "0.500" in quiet.stdout and quiet.stdout == verbose.stdout
