"""Degenerate responses: one policy for every metric, so that none rewards saying nothing or
repeating itself (a ``Trainer`` using a metric as ``compute_metrics`` would otherwise teach a
model to do exactly that).

A response is flagged

* ``empty`` when nothing is left after removing white space and invisible format characters
  (zero-width spaces, a byte-order mark, joiners: Unicode category ``Cf``);
* ``no_words`` when something visible is left but not one letter or digit once markup is removed:
  punctuation only (``"?!"``), emoji only, markup only (``"<br><br>"``);
* ``repetitive`` when it has at least :data:`MIN_WORDS` words and more than
  :data:`REPEATED_SHARE` of its word 3-grams repeat an earlier 3-gram of the same response
  (``"the the the the the"``: 2 of 3; a sentence said 50 times: 0.98; ordinary replies: 0; a
  word salad such as ``"weather weather the the good good"`` is not repetition and is not flagged
  here; after ``"Was the weather good?"`` it is a ``salad``, below);
* ``echo`` (metrics that judge a reply against its context: GRADE, SSREM, holistic coherence, FED,
  FULL, and the combined metric through them) when it has at least :data:`ECHO_N` words, every
  one of its word :data:`ECHO_N`-grams (lower-cased) occurs in one earlier turn of the context, and
  it copies that turn (nearly) whole or at length: the turn's words inside one of the reply's
  3-grams are at least :data:`ECHO_SHARE` (four in five) of the turn's words, or the reply has at
  least :data:`ECHO_LONG_WORDS` (8) words. It copies the user's last turn or its own earlier one
  (``"do you like dogs ?"`` after ``"Do you like dogs?"``: 4 of 4; ``"Smoking or non-smoking ?"``
  after ``"Yes , smoking or non-smoking ?"``: 4 of 5). A short reply that shares only a phrase
  with a turn is not an echo (``"See you tomorrow!"`` after ``"Okay, see you tomorrow."``: 3 of 4;
  ``"Thank you very much."`` after ``"Thank you very much for the lovely dinner."``: 4 of 8);
  ``"It's nice to meet you too."`` adds a 3-gram and is not an echo; replies under 3 words,
  ``"Hi!"`` after ``"Hi!"``, never are. The constants come from the replies people wrote
  (``benchmarks/results/reply-flags.md``, ``python benchmarks/reply_flags.py``): of DailyDialog's
  89,861 replies (every turn after the first, all splits) the 3-gram rule alone catches 211, 111
  of them whole copies of a turn and 100 a part of one; those parts cover at most 3 of a turn's
  4 words (0.75: ``"Here you go ."`` after ``"Okay . Here you go ."``) and have at most 6 words,
  but one (a 41-word duplicated turn); a bar of four in five and one of 8 words leave all 100
  unflagged, but that one. On the human-judgment sets the 3-gram rule alone caught 26 replies; the
  bars leave 1 of them, ``"i like to drink soda"`` (5 words, 5 of 11 of a GRADE ConvAI2 turn),
  and keep the 23 GRADE DailyDialog copies (a retrieval system's; the humans rated them at the
  31st percentile), among them an 8-word part of a 12-word turn and 4 of 5 words above. Whole
  copies of a short turn stay echoes, natural or not: DailyDialog's ``"Here you are ."`` after
  ``"Here you are ."``, ``"How do you do ?"`` after ``"How do you do ?"``. A guard beside the
  metrics, not instead of them: GRADE ranked the real reply above an echo of the last turn in 21 %
  of DailyDialog test contexts (``benchmarks/results/behaviour.md``); every echo the behavioural
  suite builds copies a whole turn (its share is 1) and is flagged as before;
* ``salad`` (the same metrics, after ``echo``) when it has at least :data:`SALAD_MIN_WORDS` words,
  every one of them (lower-cased) a word of the context, and at most :data:`SALAD_ORDER_SHARE` (a
  third) of its adjacent word pairs occur in one context turn: it says no word the context did not, in an
  order the context does not have (``"dogs like you do"`` after ``"Do you like dogs?"``). Replying
  with the context's own words in its own order (``"Must he stay in bed?"`` after ``"... he must
  stay in bed ..."``) is not flagged. A guard beside the metrics: GRADE ranked the real reply above
  a salad of the context's words in 34 % of DailyDialog test contexts, SSREM in 18 %, FULL in 39 %
  (``benchmarks/results/behaviour.md``). On 900 DailyDialog test contexts it flags 825 of the
  suite's 900 salads and 1 of the real replies (``"Haggis? What's Haggis?"``); on the human-judgment
  sets 6 of 2,800 replies (``benchmarks/results/reply-flags.md``), such as ``"i 'm not sure ."``:
  a short reply made of the context's words is the price of the guard;
* ``unknown_words`` (metrics that read word vectors: GRADE, SSREM) when it has at least 2 words and
  more than half are not among the :data:`KNOWN_WORDS` most frequent words of GloVe 6B
  (``"asdf qwer zxcv"``, which GRADE scored 0.92; ``"haha lol"`` is 1 of 2 and not flagged).

The policy (:func:`apply_policy`): a flagged response gets, for every sub-score that has a
direction, the worst value of that sub-score's scale (:class:`dialeval.core.scales.Scale`: its
lower bound when higher is better, its upper bound when lower is better, and for a sub-score with
no such bound -- FED's log-likelihood differences, holistic's raw log-probabilities, SSREM's
bilinear fit -- its declared ``floor``, far below any real reply; a real reply's score below the
floor is clipped to it). So a flagged item is never NaN: it counts in every mean, in ``dialeval
compare`` and in the ``Trainer`` hook's logged means as the worst item, and replacing any reply by
an empty, word-less or repetitive one can never raise a system's mean on any sub-score. Counts (no
direction) are kept. Scorers do not run their models on a flagged response
(:func:`scored_indices`). Each metric applies the policy in its own scorer; the flags are part of
the evaluate modules' results and of the CLI's output lines.
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections import Counter
from fractions import Fraction
from typing import Iterable, Mapping, Sequence

from dialeval.core.scales import Scale

ECHO = "echo"
ECHO_N = 3
ECHO_SHARE = Fraction(4, 5)
ECHO_LONG_WORDS = 8
SALAD = "salad"
SALAD_MIN_WORDS = 4
SALAD_ORDER_SHARE = Fraction(1, 3)
EMPTY = "empty"
NO_WORDS = "no_words"
REPETITIVE = "repetitive"
UNKNOWN_WORDS = "unknown_words"
KNOWN_WORDS = 100_000
MIN_WORDS = 4
N = 3
REPEATED_SHARE = 0.5
_WORD = re.compile(r"\w+")
# Markup that says nothing: HTML/XML tags and character entities (``<br>``, ``&nbsp;``, ``&#8203;``).
_MARKUP = re.compile(r"<[^<>]{0,200}>|&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{1,31});")


def visible_text(text: str) -> str:
    """``text`` without white space and invisible format characters (Unicode ``Cf``: zero-width
    space, byte-order mark, joiners, direction marks)."""
    return "".join(ch for ch in text if not ch.isspace() and unicodedata.category(ch) != "Cf")


def has_words(text: str) -> bool:
    """Whether ``text`` holds a letter or a digit (Unicode categories ``L*``/``N*``) outside markup."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in _MARKUP.sub(" ", text))


def words_of(text: str) -> list[str]:
    """The lower-cased words (``\\w+`` runs) of ``text``, as every check here reads them."""
    return _WORD.findall(text.lower())


def ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """The word ``n``-grams of ``words`` in order (none when there are fewer than ``n`` words)."""
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def repeated_share(text: str, n: int = N) -> float:
    """The share of the word ``n``-grams of ``text`` that repeat an earlier one (0 with none)."""
    grams = ngrams(words_of(text), n)
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def response_flags(text: str) -> list[str]:
    """``["empty"]``, ``["no_words"]``, ``["repetitive"]`` or ``[]`` for one response (module docstring)."""
    if not visible_text(text):
        return [EMPTY]
    if not has_words(text):
        return [NO_WORDS]
    if word_count(text) >= MIN_WORDS and repeated_share(text) > REPEATED_SHARE:
        return [REPETITIVE]
    return []


def echoes(context: Sequence[str], response: str, n: int = ECHO_N, min_share: Fraction | float = ECHO_SHARE,
           long_words: int = ECHO_LONG_WORDS) -> list[str]:
    """``["echo"]`` when ``response`` has at least ``n`` words, each of its word ``n``-grams occurs in
    one turn of ``context``, and it copies at least ``min_share`` of that turn's words
    (:func:`copied_share`) or has at least ``long_words`` words (module docstring), else ``[]``.
    ``min_share=0`` is the rule before issue 54 (any copy of 3-grams of one turn)."""
    words = words_of(response)
    grams = set(ngrams(words, n))
    if not grams:
        return []
    for turn in context:
        turn_words = words_of(turn)
        if grams <= set(ngrams(turn_words, n)) and (
                len(words) >= long_words or copied_share(turn_words, grams, n) >= min_share):
            return [ECHO]
    return []


def copied_share(turn_words: Sequence[str], grams: set[tuple[str, ...]], n: int = ECHO_N) -> Fraction:
    """The share of ``turn_words`` that lie inside one of the turn's ``n``-grams found in ``grams``
    (a reply's): ``"okay see you tomorrow"`` and the grams of ``"see you tomorrow"`` -> 3/4."""
    inside: set[int] = set()
    for i, gram in enumerate(ngrams(turn_words, n)):
        if gram in grams:
            inside.update(range(i, i + n))
    return Fraction(len(inside), len(turn_words)) if turn_words else Fraction(0)


def salads(context: Sequence[str], response: str) -> list[str]:
    """``["salad"]`` when ``response`` has at least :data:`SALAD_MIN_WORDS` words, all of them words
    of ``context``, and at most :data:`SALAD_ORDER_SHARE` of its adjacent word pairs occur in one
    turn of ``context`` (module docstring), else ``[]``."""
    words = words_of(response)
    if len(words) < SALAD_MIN_WORDS:
        return []
    turns = [words_of(turn) for turn in context]
    if not set(words) <= {w for turn in turns for w in turn}:
        return []
    context_pairs = {pair for turn in turns for pair in ngrams(turn, 2)}
    pairs = ngrams(words, 2)
    in_order = sum(pair in context_pairs for pair in pairs)
    return [SALAD] if in_order <= SALAD_ORDER_SHARE * len(pairs) else []


def reply_flags(context: Sequence[str], response: str) -> list[str]:
    """:func:`response_flags` of ``response``, else :func:`echoes` of it in ``context``, else
    :func:`salads`: the flags of a metric that judges a reply against its context."""
    return response_flags(response) or echoes(context, response) or salads(context, response)


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
    words = words_of(text)
    unknown = sum(1 for w in words if vocabulary.get(w, KNOWN_WORDS) >= KNOWN_WORDS)
    return [UNKNOWN_WORDS] if len(words) >= 2 and unknown > len(words) / 2 else []


def worst(scale: Scale) -> float:
    """The worst value of ``scale``: its lower bound when higher is better, its upper bound when
    lower is better, else its declared ``floor``; NaN for a count (no direction) or a scale that
    declares neither (:mod:`tests.test_scales` checks that every directed sub-score has one)."""
    if scale.higher_is_better is None:
        return math.nan
    bound = scale.low if scale.higher_is_better else scale.high
    if bound is None:
        bound = scale.floor
    return math.nan if bound is None else float(bound)


def _clipped(value: float, scale: Scale) -> float:
    """A real response's ``value`` clipped at the scale's floor (NaN, "no value", stays NaN)."""
    if scale.floor is None or math.isnan(value):
        return value
    return max(value, scale.floor) if scale.higher_is_better else min(value, scale.floor)


def apply_policy(per_item: Mapping[str, Sequence[float]], flags: Sequence[Sequence[str]],
                 scales: Mapping[str, Scale]) -> dict[str, list[float]]:
    """``per_item`` with every flagged item's sub-scores set to their :func:`worst` and every other
    item's clipped at the scale's floor; counts (no direction) are kept as computed, and so is a
    sub-score without a scale (``KeyError`` would hide a new one: :mod:`tests.test_scales` checks
    every produced name has a scale)."""
    out = {}
    for name, values in per_item.items():
        scale = scales.get(name)
        if scale is None or scale.higher_is_better is None:
            out[name] = list(values)
        else:
            out[name] = [worst(scale) if flagged else _clipped(v, scale) for v, flagged in zip(values, flags)]
    return out


def scored_indices(flags: Sequence[Sequence[str]]) -> list[int]:
    """The items a scorer runs its model on: those without a flag (a flagged item's scores are
    replaced by :func:`apply_policy` anyway, so scoring a 50 MB repetition first would be waste)."""
    return [i for i, item_flags in enumerate(flags) if not item_flags]


def floors_as_missing(per_item: Mapping[str, Sequence[float]], flags: Sequence[Sequence[str]],
                      scales: Mapping[str, Scale]) -> dict[str, list[float]]:
    """``per_item`` for a correlation with human ratings: a flagged item's value on a sub-score whose
    worst value is a declared floor (an arbitrary constant far below every real score, which would
    dominate a Pearson correlation) becomes NaN, left out as before the floors existed; a bound
    (GRADE's 0) is a real point of its scale and is kept. Only a value at the floor is left out: a
    runner's flags are the union over its sub-scores (holistic's coherence flags an ``echo``, its
    fluency scores the same reply), and a sub-score that scored a flagged item keeps its value.
    Means and comparisons use the floors."""
    out = {}
    for name, values in per_item.items():
        scale = scales.get(name)
        floor = scale.floor if scale is not None else None
        out[name] = [math.nan if floor is not None and f and v == floor else v for v, f in zip(values, flags)]
    return out


def word_tokens(text: str) -> list[str]:
    """The whitespace tokens of ``text`` that hold a letter or digit (punctuation tokens dropped),
    as the behavioural suite counts a reply's words."""
    return [token for token in text.split() if _WORD.search(token)]


def context_salad(context: Sequence[str], length: int, rng: random.Random) -> str:
    """A word salad of ``context`` (what the ``salad`` flag looks for): ``length`` of its
    :func:`word_tokens`, shuffled (the shuffled context repeated when it has fewer), joined by spaces;
    the behavioural suite's ``salad`` kind and GRADE's ``salad`` training negatives. An empty string
    when the context has no word."""
    pool = word_tokens(" ".join(context))
    drawn: list[str] = []
    while pool and len(drawn) < length:
        shuffled = list(pool)
        rng.shuffle(shuffled)
        drawn += shuffled
    return " ".join(drawn[:length])


def shaped_salad(context: Sequence[str], reply: str, rng: random.Random) -> str:
    """A word salad of ``context`` in ``reply``'s shape: each of ``reply``'s :func:`word_tokens` in
    turn replaced by a word of :func:`context_salad`, its punctuation tokens kept where they are
    (``"Thank you ."`` -> ``"ticket buy ."``). GRADE's ``--salad-form reply`` training negatives: a
    salad that differs from a real reply in its words' fit only, not in lacking punctuation. ``reply``
    unchanged when the context has no word."""
    tokens = reply.split()
    words = iter(context_salad(context, sum(1 for t in tokens if _WORD.search(t)), rng).split())
    return " ".join(next(words, t) if _WORD.search(t) else t for t in tokens)
