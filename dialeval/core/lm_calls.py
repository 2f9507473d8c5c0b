"""FED's and FULL's groups handed to :meth:`dialeval.core.lm.LMScorer.grouped_logprobs` in calls,
one progress step each (:mod:`dialeval.core.progress`; inside a call, its batches are steps of
its own).

A call packs its groups (a context with its follow-ups) into rows and batches; it needs enough
groups to fill a batch: on a CPU one row of 512 tokens (32 groups are plenty), on a GPU 32,768
tokens (:func:`dialeval.core.lm.default_batch_tokens`), which FULL's short conversations reach only
with a few hundred groups per call.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from dialeval.core.lm import LMScorer, LogProb, default_batch_tokens
from dialeval.core.progress import Progress


def group_calls(sizes: Sequence[int], device: str | torch.device, min_groups: int = 32) -> list[range]:
    """Runs of consecutive groups (token counts ``sizes``) for one call each: at least
    ``min_groups`` groups, and more while they fit :func:`default_batch_tokens` of ``device`` (on a
    CPU 32 groups already exceed it; on a GPU a call then fills a whole batch)."""
    budget = default_batch_tokens(device)
    calls, start, tokens = [], 0, 0
    for i, size in enumerate(sizes):
        if i > start and i - start >= min_groups and tokens + size > budget:
            calls.append(range(start, i))
            start, tokens = i, 0
        tokens += size
    if start < len(sizes):
        calls.append(range(start, len(sizes)))
    return calls


def grouped_in_calls(scorer: LMScorer, groups: Sequence[tuple[Sequence[int], Sequence[Sequence[int]]]],
                     prefix_logprob: bool = False, progress: bool = True, desc: str = "groups",
                     unit: str = "group") -> list[tuple[LogProb | None, list[LogProb]]]:
    """``scorer.grouped_logprobs`` of ``groups`` in the calls of :func:`group_calls`, with progress
    counting groups once the calls have taken 10 s (``progress=False``: none)."""
    sizes = [len(prefix) + sum(len(c) for c in conts) for prefix, conts in groups]
    results: list[Any] = []
    with Progress(len(groups), desc, unit=unit, enabled=progress) as bar:
        for call in group_calls(sizes, scorer.device):
            results += scorer.grouped_logprobs(groups[call.start : call.stop], prefix_logprob)
            bar.update(len(call))
    return results
