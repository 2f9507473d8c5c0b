"""METEOR 1.5 (Denkowski & Lavie 2014) through the jar that PyPI ``pycocoevalcap`` ships.

This is the METEOR that nlg-eval / pycocoevalcap run and Gupta et al. (2019) report. The jar is
started once (``java -Xmx2G -jar meteor-1.5.jar - - -stdio -l en -norm``, pycocoevalcap's
command) and kept alive; every batch of segments goes through that one JVM:

* ``SCORE ||| reference ||| hypothesis`` -> one line of sufficient statistics per segment;
* ``EVAL ||| stats_1 ||| ... ||| stats_n`` -> n segment scores, then the aggregate score.

Score of one segment (English, ``-norm`` = tokenise punctuation and lower-case; parameters of the
jar's default task: alpha 0.85, beta 0.2, gamma 0.6, delta 0.75; module weights exact 1.0,
stem 0.6, WordNet synonym 0.8, paraphrase 0.6). With ``m_i(.)`` the words matched by module i,
``h_c`` / ``h_f`` the content / function words of the hypothesis (``r`` for the reference):

    P = sum_i w_i (delta m_i(h_c) + (1 - delta) m_i(h_f)) / (delta |h_c| + (1 - delta) |h_f|)
    R = the same over the reference
    Fmean = P R / (alpha P + (1 - alpha) R)
    Pen = gamma (chunks / matches)^beta          (matches = mean matched words of h and r;
                                                   Pen = 0 when every word of both is matched
                                                   in one chunk, so an exact copy scores 1)
    METEOR = (1 - Pen) Fmean

Hand-checked (tests/test_meteor.py; function words are the jar's ``function/english.words``):
``"he is fast"`` vs ``"he is quick"``: he/is exact function words, fast~quick a WordNet synonym,
P = R = (0.75 * 0.8 + 0.25 * 2) / (0.75 + 0.25 * 2) = 0.88, one chunk covering both -> 0.88;
``"the mat sat on the cat"`` vs ``"the cat sat on the mat"``: P = R = 1, 3 chunks over 6 matches
-> 1 - 0.6 (3/6)^0.2 = 0.47767. With several references the jar keeps the best-scoring one, i.e.
the max over references (Gupta et al.'s Eq. 1).
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import threading
import warnings
from pathlib import Path
from typing import Sequence

from dialeval.core.held import held

METEOR_NAME = "meteor-1.5-jar"
# Words kept per text: a dialogue response is tens of words; the jar took 21 s on 8,000 and its JVM
# died on 20,000 (measured here).
MAX_WORDS = 1000
JAVA_INSTALL = "apt-get install default-jre-headless"
JAR_INSTALL = "pip install pycocoevalcap"


class MeteorUnavailableError(RuntimeError):
    """Java or the METEOR 1.5 jar is missing; the message names the install command."""


def jar_path() -> Path:
    """``meteor-1.5.jar`` inside the installed ``pycocoevalcap`` (its paraphrase table beside it)."""
    import importlib.util

    spec = importlib.util.find_spec("pycocoevalcap")  # a namespace package: no __file__
    if spec is None or not spec.submodule_search_locations:
        raise MeteorUnavailableError(
            f"METEOR 1.5 needs the jar that pycocoevalcap ships: `{JAR_INSTALL}` (install.sh does it), "
            "or use meteor='nltk' (NLTK's re-implementation, no Java)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "meteor" / "meteor-1.5.jar"
    if not path.is_file():
        raise MeteorUnavailableError(f"{path} is missing; reinstall with `{JAR_INSTALL}`")
    return path


def java_available() -> bool:
    """Whether a ``java`` executable is on the PATH."""
    return shutil.which("java") is not None


def meteor_available() -> bool:
    """Whether :class:`Meteor15` can start (Java and the pycocoevalcap jar are both present)."""
    if not java_available():
        return False
    try:
        jar_path()
    except MeteorUnavailableError:
        return False
    return True


def _clean(text: str) -> tuple[str, int]:
    """One line the jar's ``|||``-separated protocol cannot misread, cut to :data:`MAX_WORDS` words;
    also how many words were cut."""
    words = text.replace("|||", " ").split()
    return " ".join(words[:MAX_WORDS]), max(0, len(words) - MAX_WORDS)


class Meteor15:
    """One long-lived METEOR 1.5 JVM; :meth:`score` takes many (hypothesis, reference) pairs.

    A JVM that dies while scoring (it did on a 20,000-word hypothesis) is started again and the
    batch asked once more, so one item never breaks the process's later calls; texts longer than
    :data:`MAX_WORDS` words are cut, with a warning naming how many words were dropped."""

    def __init__(self, max_heap: str = "2G") -> None:
        java = shutil.which("java")
        if java is None:
            raise MeteorUnavailableError(
                f"METEOR 1.5 needs Java: `{JAVA_INSTALL}` (install.sh does it when `java` is missing), "
                "or use meteor='nltk' (NLTK's re-implementation, no Java)"
            )
        self._command = [java, f"-Xmx{max_heap}", "-jar", str(jar_path()), "-", "-", "-stdio", "-l", "en", "-norm"]
        self._lock = threading.Lock()
        self._start()
        atexit.register(self.close)

    def _start(self) -> None:
        self._process = subprocess.Popen(
            self._command, cwd=jar_path().parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, encoding="utf-8", bufsize=1,
        )

    def _restart(self) -> None:
        self.close()
        self._start()

    def _exchange(self, lines: list[str]) -> list[str]:
        """Send ``lines`` from a writer thread (so neither pipe can fill up and block) and read
        one answer line per request line."""
        def write() -> None:
            for line in lines:
                self._process.stdin.write(line + "\n")
            self._process.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers = []
        for _ in lines:
            answer = self._process.stdout.readline()
            if not answer:
                raise RuntimeError(f"the METEOR JVM exited (code {self._process.poll()})")
            answers.append(answer.strip())
        writer.join()
        return answers

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """METEOR 1.5 of each ``(hypothesis, reference)`` text pair, in order.

        Texts go to the jar as given (it normalises with ``-norm``), cut to :data:`MAX_WORDS` words
        (with a warning); a hypothesis or reference with no word scores 0 without asking the jar.
        """
        cleaned = [(_clean(h), _clean(r)) for h, r in pairs]
        cut = [(i, h[1] + r[1]) for i, (h, r) in enumerate(cleaned) if h[1] + r[1]]
        if cut:
            warnings.warn(f"METEOR 1.5: {len(cut)} pair(s) longer than {MAX_WORDS} words per text were cut "
                          f"(pair {cut[0][0]}: {cut[0][1]} words dropped)", stacklevel=2)
        pairs = [(h[0], r[0]) for h, r in cleaned]
        asked = [i for i, (h, r) in enumerate(pairs) if h and r]
        scores = [0.0] * len(pairs)
        if not asked:
            return scores
        lines = [f"SCORE ||| {pairs[i][1]} ||| {pairs[i][0]}" for i in asked]
        with self._lock:
            if self._process.poll() is not None:
                self._restart()
            try:
                found = self._evaluate(lines)
            except (RuntimeError, OSError, ValueError):  # the JVM died on this batch: a fresh one, asked once more
                self._restart()
                found = self._evaluate(lines)
        for i, value in zip(asked, found):
            scores[i] = value
        return scores

    def _evaluate(self, lines: list[str]) -> list[float]:
        """The segment scores of the ``SCORE`` request ``lines`` (one ``EVAL`` of their statistics)."""
        stats = self._exchange(lines)
        self._process.stdin.write("EVAL ||| " + " ||| ".join(stats) + "\n")
        self._process.stdin.flush()
        found = [float(self._process.stdout.readline()) for _ in lines]
        self._process.stdout.readline()  # the aggregate score over the batch
        return found

    def close(self) -> None:
        """Stop the JVM (also done at interpreter exit)."""
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if process is not None:
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:  # a broken pipe of a JVM that died
                    pass

    def __del__(self) -> None:
        self.close()


@held(maxsize=1, close=Meteor15.close)
def shared_meteor() -> Meteor15:
    """The process-wide METEOR 1.5 JVM, started on first use; stopped by :func:`dialeval.core.held.release`
    (about 1.1 GB resident)."""
    return Meteor15()
