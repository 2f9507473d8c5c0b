"""Loaded models a process keeps for reuse, and their release.

A runner loads its model once per settings (model, batch size, device, precision, ...) and keeps it
for the next call: :func:`held` is a least-recently-used cache of such a loader, as
``functools.lru_cache``, with every object it loaded numbered in load order. The same arguments give
the same loaded object; other arguments (another precision, another device) load another. A loader
may name its own cache key (``key=``): the evaluate modules' scorers are kept by metric and settings,
whatever build function a module instance passes (:func:`dialeval.modules.kept_scorer`).
:func:`release` drops what the held loaders keep (or only what they loaded from a :func:`mark` on),
so that it is freed once nothing else holds it; ``dialeval examples`` releases what a metric loaded
once its columns (and the runs the combined metric reads of it) are scored, so that one metric's
models at a time are in memory rather than all of them (``benchmarks/results/examples-memory.md``),
and never a model that was loaded before it started.
"""

from __future__ import annotations

import functools
import gc
import itertools
from collections import OrderedDict
from typing import Any, Callable, Hashable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_COUNTER = itertools.count()  # the load order of every held object
_LOADERS: list[_Held] = []  # every held loader, in the order they were declared


class _Held:
    """A loader's cache: arguments -> (load number, object), least recently used first."""

    def __init__(self, loader: Callable[..., Any], maxsize: int, close: Callable[[Any], None] | None,
                 key: Callable[..., Hashable] | None) -> None:
        self.loader, self.maxsize, self.close, self.key = loader, maxsize, close, key
        self.kept: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()
        functools.update_wrapper(self, loader)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = self.key(*args, **kwargs) if self.key else (args, tuple(sorted(kwargs.items())))
        if key in self.kept:
            self.kept.move_to_end(key)
            return self.kept[key][1]
        found = self.loader(*args, **kwargs)
        self.kept[key] = (next(_COUNTER), found)
        while len(self.kept) > self.maxsize:
            self.kept.popitem(last=False)
        return found

    def drop(self, since: int) -> int:
        """Forget (and close, where the loader says how) the objects loaded at or after ``since``."""
        gone = [key for key, (number, _) in self.kept.items() if number >= since]
        for key in gone:
            _, found = self.kept.pop(key)
            if self.close is not None:
                self.close(found)
        return len(gone)


def held(
    maxsize: int, close: Callable[[Any], None] | None = None, key: Callable[..., Hashable] | None = None,
) -> Callable[[F], F]:
    """A held cache of a model loader (module docstring) keeping up to ``maxsize`` objects; ``close(obj)``,
    where given, is called on each one when it is released (a process it started: METEOR's JVM);
    ``key(*args, **kwargs)``, where given, is the cache key of a call (default: all its arguments)."""

    def wrap(loader: F) -> F:
        cached = _Held(loader, maxsize, close, key)
        _LOADERS.append(cached)
        return cached  # type: ignore[return-value]

    return wrap


def is_held(loader: Any) -> bool:
    """Whether ``loader`` is one of the held loaders."""
    return any(loader is mine for mine in _LOADERS)


def held_count() -> int:
    """How many loaded objects the held loaders keep now."""
    return sum(len(loader.kept) for loader in _LOADERS)


def mark() -> int:
    """A mark of now: :func:`release` with it drops only what is loaded after."""
    return next(_COUNTER)


def release(since: int = 0) -> int:
    """Drop what the held loaders loaded from the mark ``since`` on (default: everything), closing it
    where the loader says how, and collect the garbage (a model in a reference cycle is freed now,
    not at the collector's next pass); the number of objects dropped."""
    dropped = sum(loader.drop(since) for loader in _LOADERS)
    gc.collect()
    return dropped
