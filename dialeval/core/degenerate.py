"""Degenerate responses: one policy for every metric, so that none rewards saying nothing or
repeating itself (a ``Trainer`` using a metric as ``compute_metrics`` would otherwise teach a
model to do exactly that).

A response is flagged

* ``empty`` when it holds nothing but white space;
* ``repetitive`` when it has at least :data:`MIN_WORDS` words and more than
  :data:`REPEATED_SHARE` of its word 3-grams repeat an earlier 3-gram of the same response
  (``"the the the the the"``: 2 of 3; a sentence said 50 times: 0.98; ordinary replies: 0; a
  word salad such as ``"weather weather the the good good"`` is not repetition and is not flagged);
* ``unknown_words`` (metrics that read word vectors: GRADE, SSREM) when it has at least 2 words and
  more than half are not among the :data:`KNOWN_WORDS` most frequent words of GloVe 6B
  (``"asdf qwer zxcv"``, which GRADE scored 0.92; ``"haha lol"`` is 1 of 2 and not flagged).

The policy (:func:`apply_policy`): a flagged response gets, for every sub-score that has a
direction, the worst value of that sub-score's scale (:class:`dialeval.core.scales.Scale`: its
lower bound when higher is better, its upper bound when lower is better); a sub-score with no such
bound (FED's unbounded log-likelihood differences, holistic's raw log-probabilities) gets NaN,
which means are computed without: never rewarded, and the flag says why the value is missing.
Counts (no direction) are kept. Each metric applies the policy in its own scorer; the flags are
part of the evaluate modules' results and of the CLI's output lines.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Mapping, Sequence

from dialeval.core.scales import Scale

EMPTY = "empty"
REPETITIVE = "repetitive"
UNKNOWN_WORDS = "unknown_words"
KNOWN_WORDS = 100_000
MIN_WORDS = 4
N = 3
REPEATED_SHARE = 0.5
_WORD = re.compile(r"\w+")


def repeated_share(text: str, n: int = N) -> float:
    """The share of the word ``n``-grams of ``text`` that repeat an earlier one (0 with none)."""
    words = _WORD.findall(text.lower())
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def response_flags(text: str) -> list[str]:
    """``["empty"]``, ``["repetitive"]`` or ``[]`` for one response (module docstring)."""
    if not text.strip():
        return [EMPTY]
    if word_count(text) >= MIN_WORDS and repeated_share(text) > REPEATED_SHARE:
        return [REPETITIVE]
    return []


def word_count(text: str) -> int:
    """The number of words (``\\w+`` runs) of ``text``, as :func:`response_flags` counts them."""
    return len(_WORD.findall(text))


def flag_counts(flags: Iterable[Sequence[str]]) -> dict[str, int]:
    """How many items carry each flag, from per-item flag lists: ``[[], ["empty"], ["empty"]]`` ->
    ``{"empty": 2}``."""
    return dict(Counter(flag for item_flags in flags for flag in item_flags))


def unknown_words(text: str, vocabulary: Mapping[str, int]) -> list[str]:
    """``["unknown_words"]`` when ``text`` has at least 2 words and more than half are not among the
    first :data:`KNOWN_WORDS` of ``vocabulary`` (word -> frequency rank, as GloVe's file order)."""
    words = _WORD.findall(text.lower())
    unknown = sum(1 for w in words if vocabulary.get(w, KNOWN_WORDS) >= KNOWN_WORDS)
    return [UNKNOWN_WORDS] if len(words) >= 2 and unknown > len(words) / 2 else []


def worst(scale: Scale) -> float:
    """The worst value of ``scale``: its lower bound when higher is better, its upper bound when
    lower is better; NaN when that bound does not exist or the score has no direction."""
    if scale.higher_is_better is None:
        return math.nan
    bound = scale.low if scale.higher_is_better else scale.high
    return math.nan if bound is None else float(bound)


def apply_policy(per_item: Mapping[str, Sequence[float]], flags: Sequence[Sequence[str]],
                 scales: Mapping[str, Scale]) -> dict[str, list[float]]:
    """``per_item`` with every flagged item's sub-scores set to their :func:`worst`; counts (no
    direction) are kept as computed, and so is a sub-score without a scale (``KeyError`` would
    hide a new one: :mod:`tests.test_scales` checks every produced name has a scale)."""
    out = {}
    for name, values in per_item.items():
        scale = scales.get(name)
        if scale is None or scale.higher_is_better is None:
            out[name] = list(values)
        else:
            out[name] = [worst(scale) if flagged else v for v, flagged in zip(values, flags)]
    return out
