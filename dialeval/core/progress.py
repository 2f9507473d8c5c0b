"""Progress of long runs on standard error: items done of the total, rate and time left; silent for
short runs.

One reporter, :class:`Progress`, behind every long loop of dialeval: the chunked scoring of
:func:`dialeval.scoring.cache.scores_for` and ``dialeval score`` (items), the LM's batches and FED's
and FULL's groups (:mod:`dialeval.core.lm`, :mod:`dialeval.core.lm_calls`), the NLI pairs and the
sentence encoders' texts, the combined metric's components, the grid's cells, the behavioural suite's
replies. The ``progress`` option those functions take turns it off (``progress=False``, ``--quiet``);
``DIALEVAL_PROGRESS=0`` turns every reporter off.

Rules, so that a short run prints nothing and a long one never goes silent:

* Reporters opened while another is open (in the same thread) nest: a line shows every level that
  has run for :data:`DELAY` seconds, outermost first, joined by `` | ``:
  ``combined on usr.jsonl: 0/300 items (0%), 4:10 so far | combined: component 2/8: fed, 4:10 so far
  | fed: 112/300 items (37%), 1.9 items/s, 1:39 left``. A reporter opened inside a silent one
  (``progress=False``) is silent too.
* Nothing before a level has run :data:`DELAY` seconds (0 with ``DIALEVAL_VERBOSE=1``,
  :func:`dialeval.core.quiet.verbose`); then a line at most every :data:`INTERVAL` seconds, an
  interval that grows with the run (a tenth of its time so far, at most :data:`MAX_INTERVAL`), written
  as the loop advances or, while one step takes long, from a watcher thread that shows the time so
  far (FED on one 20,000-word conversation is one forward of the LM: its time so far, no estimate).
* Time left = the items still to do divided by the rate of this run, ``(done - initial) / elapsed``
  (items resumed from a saved chunk do not count as fast ones): 10 of 40 items in 30 s is 1 item per
  3 s, so 30 items left take 90 s. Before the first step, and for a level whose steps differ too much
  to extrapolate (``estimate=False``: combined's components), the time so far instead.
* A level that was shown writes a last line when it ends: ``fed: 300/300 items in 25:10 (5.0 s/item)``.
* Lines, not a bar redrawn in place: they read the same in a terminal and in a log file.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Callable, Iterable, Iterator, TextIO, TypeVar

from dialeval.core.quiet import verbose

ENV = "DIALEVAL_PROGRESS"  # "0", "false", "no", "off": every reporter silent
DELAY = 10.0  # seconds a level runs before it shows
INTERVAL = 10.0  # seconds between two lines, at least
MAX_INTERVAL = 60.0  # ... and at most, once the run is long
WATCH_EVERY = 1.0  # seconds between two looks of the watcher thread

Clock = Callable[[], float]
T = TypeVar("T")


def env_allows() -> bool:
    """False when ``$DIALEVAL_PROGRESS`` turns progress off."""
    return os.environ.get(ENV, "").strip().lower() not in {"0", "false", "no", "off"}


def duration(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour on (90 -> ``1:30``, 3725 -> ``1:02:05``)."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


IRREGULAR_PLURALS = {"epoch": "epochs"}  # the rules below would say "epoches": its "ch" is a k


def plural(unit: str) -> str:
    """English plural of a unit: ``item`` -> ``items``, ``reply`` -> ``replies``, ``batch`` -> ``batches``,
    ``epoch`` -> ``epochs`` (:data:`IRREGULAR_PLURALS`)."""
    if unit in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[unit]
    if unit.endswith("y") and unit[-2:-1] not in tuple("aeiou"):
        return unit[:-1] + "ies"
    return unit + ("es" if unit.endswith(("s", "x", "ch", "sh")) else "s")


def rate_text(rate: float, unit: str) -> str:
    """``2.5 items/s`` from one per second on, else ``3.0 s/item``."""
    return f"{rate:.1f} {plural(unit)}/s" if rate >= 1 else f"{1 / rate:.1f} s/{unit}"


class _Session:
    """The reporters open in one thread, outermost first, and when the last line was written."""

    def __init__(self, clock: Clock, stream: TextIO | None):
        self.stack: list[Progress] = []
        self.clock, self.stream = clock, stream
        self.started = clock()
        self.last_line: float | None = None
        self.lock = threading.RLock()
        self.stop = threading.Event()

    def interval(self, now: float) -> float:
        return min(MAX_INTERVAL, max(INTERVAL, (now - self.started) / 10))

    def watch(self) -> None:
        """The watcher thread: a line while the innermost level's step takes long."""
        while not self.stop.wait(WATCH_EVERY):
            with self.lock:
                if self.stack:
                    self.stack[-1].refresh()


_local = threading.local()


class Progress:
    """A progress reporter over ``total`` steps of ``unit`` (module docstring); a context manager.

    ``initial``: steps already done (a resumed run); ``enabled=False``: silent, with every reporter
    opened inside it; ``estimate=False``: no time left (steps of very different cost). ``clock`` and
    ``stream`` (default ``time.monotonic`` and ``sys.stderr`` when a line is written; for tests) are
    the outermost level's; the watcher thread runs only on the real clock."""

    def __init__(self, total: int, desc: str, unit: str = "item", initial: int = 0, enabled: bool = True,
                 estimate: bool = True, clock: Clock | None = None, stream: TextIO | None = None):
        self.total, self.desc, self.unit, self.initial, self.done = total, desc, unit, initial, initial
        self.estimate, self.label = estimate, ""
        self.delay = 0.0 if verbose() else DELAY
        self.shown = self.closed = False
        session: _Session | None = getattr(_local, "session", None)
        outermost = session is None
        if outermost:
            session = _local.session = _Session(clock or time.monotonic, stream)
        self.session = session
        outer_active = all(p.active for p in session.stack)
        self.active = enabled and outer_active and env_allows()
        self.start = session.clock()
        with session.lock:
            session.stack.append(self)
        if outermost and self.active and clock is None:
            threading.Thread(target=session.watch, name="dialeval-progress", daemon=True).start()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        """``n`` more steps done; a line when one is due."""
        self.done += n
        self.refresh()

    def each(self, steps: Iterable[T]) -> Iterator[T]:
        """The steps one by one, each counted done when the next one is asked for (or the loop ends)."""
        for step in steps:
            yield step
            self.update()

    def set_label(self, label: str) -> None:
        """What the level is doing now, shown instead of its count (``component 2/6: fed-turn``)."""
        self.label = label
        self.refresh()

    def status(self, now: float) -> str:
        """This level's part of a line."""
        elapsed = now - self.start
        if self.label:
            text = f"{self.desc}: {self.label}"
        else:
            share = f" ({100 * self.done // self.total}%)" if self.total else ""  # floor: 100% only when done
            text = f"{self.desc}: {self.done}/{self.total} {plural(self.unit)}{share}"
        ran = self.done - self.initial
        if self.estimate and ran > 0 and elapsed > 0:
            rate = ran / elapsed
            return f"{text}, {rate_text(rate, self.unit)}, {duration(max(self.total - self.done, 0) / rate)} left"
        return f"{text}, {duration(elapsed)} so far"

    def refresh(self) -> None:
        """Write the session's line when a level has run :data:`DELAY` seconds and the interval since
        the last line has passed."""
        session = self.session
        with session.lock:
            now = session.clock()
            shown = [p for p in session.stack if p.active and now - p.start >= p.delay]
            if not shown or (session.last_line is not None and now - session.last_line < session.interval(now)):
                return
            self._write(" | ".join(p.status(now) for p in shown))
            for p in shown:
                p.shown = True
            session.last_line = now

    def close(self) -> None:
        """End this level: its last line if it was shown; the outermost level ends the session."""
        if self.closed:
            return
        self.closed = True
        session = self.session
        with session.lock:
            if self in session.stack:
                session.stack.remove(self)
            if self.shown:
                elapsed = session.clock() - self.start
                ran = self.done - self.initial
                rate = f" ({rate_text(ran / elapsed, self.unit)})" if ran > 0 and elapsed > 0 else ""
                self._write(f"{self.desc}: {self.done}/{self.total} {plural(self.unit)} in {duration(elapsed)}{rate}")
            if not session.stack:
                session.stop.set()
                _local.session = None

    def _write(self, line: str) -> None:
        stream = self.session.stream or sys.stderr
        stream.write(line + "\n")
        stream.flush()


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Every reporter opened inside is silent (``dialeval examples`` without ``--verbose``)."""
    with Progress(0, "silenced", enabled=False):
        yield
