"""Scoring a list of items in chunks: the one loop behind ``dialeval score`` and, through
:func:`dialeval.scoring.cache.scores_for`, every long run (the grid, ``dialeval benchmark`` on a JSONL
file, ``dialeval compare``).

A runner (:mod:`dialeval.scoring.runners`) scores a chunk of items; runners with a ``population`` parameter
(holistic) also get the whole input, so that what depends on other items (diversity groups, a
percentile cutoff) is computed over the whole input.

Chunks do not depend on time, nor on where a run starts: they are the items ``k * chunk_size`` to
``(k + 1) * chunk_size`` of the input (:func:`chunk_ranges`), whatever the first item scored. A
model that scores a chunk in padded float32 batches can change the last bits of an item's score
with the other items of its batch; with fixed chunks every item is always scored with the same
neighbours, so two runs of one command, a run resumed after an interruption (:mod:`dialeval.scoring.resume`
resumes at a chunk boundary) and the shards of :mod:`dialeval.scoring.sharding` (made of whole chunks) give
the same bits as one uninterrupted process. Another ``chunk_size`` gives other chunks: a metric
without batched models (multiref, SSREM, holistic diversity) scores the same, a batched one (GRADE,
FED, holistic coherence and fluency) within float32 noise, not bit for bit (GRADE on 8 items in
chunks of 1, 3 and 8: 3e-7 relative at most).
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Iterator, Sequence

from dialeval.core.options import check_known, check_number
from dialeval.core.results import ItemScores
from dialeval.scoring.runners import Runner, get_runner

CHUNK_SIZE = 64  # items per runner call: ``dialeval score --chunk-size``'s default
# "predictions[3] ...", "responses[0][1] ...", "item 2: ...": the index of the failing item in its chunk
_ITEM_INDEX = re.compile(r"^(?:\w+\[(\d+)\]|item (\d+)\b)")


def accepted_options(runner: Runner) -> list[str]:
    """The keyword options a runner takes (its parameters after the items, ``population`` excluded)."""
    params = list(inspect.signature(runner).parameters.values())[1:]
    return [p.name for p in params if p.name != "population" and p.kind is not p.VAR_KEYWORD]


def with_precision_option(metric: str, options: dict[str, Any], precision: str | None) -> dict[str, Any]:
    """``options`` with ``precision`` added where ``metric``'s runner takes it (a model-based metric);
    ``None`` leaves them as they are (each metric's default, float32)."""
    from dialeval import registry

    if precision is None or "precision" not in accepted_options(registry.spec(metric).runner):
        return options
    return {**options, "precision": precision}


def check_options(metric: str, options: dict[str, Any]) -> None:
    """``ValueError`` naming an option the metric's runner does not take (instead of a ``TypeError``);
    a runner with ``**options`` takes any."""
    runner = get_runner(metric)
    if any(p.kind is p.VAR_KEYWORD for p in inspect.signature(runner).parameters.values()):
        return
    check_known(f"--option for {metric}", options, accepted_options(runner))


def _takes_population(runner: Runner) -> bool:
    return "population" in inspect.signature(runner).parameters


def _named(error: ValueError, start: int, size: int, where: Callable[[int], str]) -> ValueError:
    """The error, prefixed with where its item is (the file line) and without the item's index inside
    the chunk (``predictions[2] is ...`` -> ``in.jsonl:7: predictions is ...``), or the chunk's range."""
    text = str(error)
    match = _ITEM_INDEX.match(text)
    index = next((int(g) for g in match.groups() if g is not None), None) if match else None
    if index is not None and index < size:
        rest = text[match.end():].lstrip(": ") if match.group(2) is not None else text.replace(f"[{index}]", "", 1)
        return ValueError(f"{where(start + index)}: {rest}")
    if size == 1:
        return ValueError(f"{where(start)}: {error}")
    return ValueError(f"{where(start)} to {where(start + size - 1)}: {error}")


def chunk_ranges(start: int, stop: int, chunk_size: int) -> Iterator[range]:
    """The items ``start`` to ``stop`` cut at the multiples of ``chunk_size`` (absolute indices): from
    ``start = 70`` in chunks of 64, ``70-127``, ``128-191``, ... A run that starts at a multiple sees
    whole chunks."""
    check_number("chunk_size", chunk_size, minimum=1, integer=True)
    while start < stop:
        end = min((start // chunk_size + 1) * chunk_size, stop)
        yield range(start, end)
        start = end


def score_chunks(
    metric: str, items: Sequence[dict], options: dict[str, Any], start: int = 0, chunk_size: int = CHUNK_SIZE,
    where: Callable[[int], str] = lambda i: f"item {i}", stop: int | None = None,
) -> Iterator[tuple[int, list[dict], ItemScores, str]]:
    """Yield ``(first index, chunk items, scores, signature)`` for the items ``start`` to ``stop``
    (default: the end), in the chunks of :func:`chunk_ranges`: ``scores`` is the runner's return value
    for the chunk, the pair ``({sub-metric: per-item scores}, signature)`` with the scorer's per-item
    flags (:func:`dialeval.core.results.flags_of` reads them). The whole of ``items`` is the
    population (a shard of :mod:`dialeval.scoring.sharding` scores its range with the same population as a
    single process).

    ``where(i)`` names item ``i`` in errors (the CLI: ``file:line``); a ``ValueError`` of a chunk is
    re-raised naming its item.
    """
    runner = get_runner(metric)
    check_options(metric, options)
    extra = {"population": list(items)} if _takes_population(runner) else {}
    for block in chunk_ranges(start, len(items) if stop is None else stop, chunk_size):
        chunk = list(items[block.start : block.stop])
        try:
            scores = runner(chunk, **options, **extra)
        except ValueError as e:
            raise _named(e, block.start, len(chunk), where) from e
        yield block.start, chunk, scores, scores[1]
