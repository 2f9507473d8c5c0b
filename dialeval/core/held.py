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

_LOADERS: list[tuple[Any, Callable[[Any], None] | None, list[Any]]] = []  # (loader, close, loaded objects to close)


def held(maxsize: int, close: Callable[[Any], None] | None = None) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` of a model loader, emptied by :func:`release`; ``close(obj)``,
    where given, is called on every object it loaded at the release (a process it started: METEOR's JVM)."""

    def wrap(loader: F) -> F:
        loaded: list[Any] = []

        @functools.wraps(loader)
        def load(*args: Any, **kwargs: Any) -> Any:
            found = loader(*args, **kwargs)
            if close is not None:
                loaded.append(found)
            return found

        cached = functools.lru_cache(maxsize=maxsize)(load)
        _LOADERS.append((cached, close, loaded))
        return cached  # type: ignore[return-value]

    return wrap


def held_count() -> int:
    """How many loaded objects the held loaders keep now."""
    return sum(loader.cache_info().currsize for loader, _, _ in _LOADERS)


def is_held(loader: Any) -> bool:
    """Whether ``loader`` is one of the held loaders."""
    return any(loader is mine for mine, _, _ in _LOADERS)


def release() -> int:
    """Empty every held loader, close what it loaded where it says how, and collect the garbage (a
    model in a reference cycle is freed now, not at the collector's next pass); the number of loaded
    objects dropped."""
    dropped = held_count()
    for loader, close, loaded in _LOADERS:
        loader.cache_clear()
        while loaded:
            close(loaded.pop())  # type: ignore[misc]
    gc.collect()
    return dropped
