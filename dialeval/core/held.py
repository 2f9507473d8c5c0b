"""Loaded models a process keeps for reuse, and their release.

A runner loads its model once per settings (model, batch size, device, precision, ...) and keeps it
for the next call: :func:`held` is ``functools.lru_cache`` for such loaders, each one listed here so
that :func:`release` can empty them all. The same key gives the same loaded object; another key
(another precision, another device) loads another. ``dialeval examples`` releases every held model
once a metric's columns (and the runs the combined metric reads of it) are scored, so that one
metric's models at a time are in memory rather than all of them
(``benchmarks/results/examples-memory.md``).
"""

from __future__ import annotations

import functools
import gc
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_LOADERS: list[Any] = []  # every held loader, in the order they were declared


def held(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` of a model loader, emptied by :func:`release`."""

    def wrap(loader: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(loader)
        _LOADERS.append(cached)
        return cached  # type: ignore[return-value]

    return wrap


def held_count() -> int:
    """How many loaded objects the held loaders keep now."""
    return sum(loader.cache_info().currsize for loader in _LOADERS)


def release() -> int:
    """Empty every held loader and collect the garbage (a model in a reference cycle is freed now,
    not at the collector's next pass); the number of loaded objects dropped."""
    dropped = held_count()
    for loader in _LOADERS:
        loader.cache_clear()
    gc.collect()
    return dropped
