"""The grouped layout of :meth:`dialeval.core.lm.LMScorer.grouped_logprobs`: several
``(prefix, continuations)`` groups (FED's conversations with their follow-ups) packed into rows of
one forward, each continuation still scored exactly as ``prefix + c`` alone.

Layout. A group is its prefix followed by its continuations as a token trie
(:class:`dialeval.core.continuation_trie.ContinuationTrie`, depth-first); a row holds whole groups one
after another (first fit, longest first, up to ``row_tokens``; a longer group gets a row of its
own), a batch holds right-padded rows up to ``batch_tokens`` padded tokens (:func:`group_batches`).
Position ids restart at 0 for every group: prefix token ``t`` at ``t``, trie node ``t`` at
``len(prefix) + depth(t)``.

Mask rule (:class:`GroupedRows`, a 4D additive mask ``(rows, 1, width, width)``): a query token sees
a key token of the same row iff both belong to the same group, the key is not after the query, and
the key is a prefix token or a trie node whose subtree holds the query (its ancestors and itself).
Padding queries see everything (their outputs are never read). So every token attends to what it
attends to in ``prefix + c`` alone, at the same positions.

Sliding-window layers (Gemma-3-270M: ``sliding_window`` 512 in 15 of its 18 layers) attend to keys
less than ``window`` positions back; the mask above is full-attention causal. A group whose prefix
plus longest continuation fits the window (at most ``window`` tokens, so its positions run from 0 to
``window - 1`` and every query-key distance is below the window) is attended to whole by such a layer
too, so the one mask serves every layer: transformers' mask interface (``masking_utils``; 5.24
read) hands a prepared 4D mask to full and sliding layers as it is. A longer group must be scored
another way (:func:`fits_window`). FED on Gemma-3-270M this way: 1.49x the items/s of one context at a
time on its key/value cache, per-item Spearman 1.0000, largest difference 2.1e-5 (64 DailyDialog
items, one thread; holistic coherence's query-reply pairs: 0.97x, as fast as padded length batches;
``benchmarks/results/grouped-layout.md``).
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import torch

from dialeval.core.continuation_trie import ContinuationTrie

LogProb = tuple[float, int]
Group = tuple[int, list[int], ContinuationTrie]  # (index of the group, its prefix, its continuations' trie)


def group_batches(size: Sequence[int], row_tokens: int, batch_tokens: int) -> Iterator[list[list[int]]]:
    """Batches (lists of rows, a row a list of group indices) of groups of ``size`` tokens, longest
    first: a row holds whole groups up to ``row_tokens`` tokens, a batch rows up to ``batch_tokens``
    padded tokens."""
    rows: list[list[int]] = []
    room: list[int] = []
    for g in sorted(range(len(size)), key=lambda i: -size[i]):  # first fit, longest first
        slot = next((r for r, left in enumerate(room) if left >= size[g]), None)
        if slot is None:
            rows.append([g])
            room.append(row_tokens - size[g])
        else:
            rows[slot].append(g)
            room[slot] -= size[g]
    batch: list[list[int]] = []
    width = 0
    for row, left in zip(rows, room):
        length = max(row_tokens - left, size[row[0]])
        if batch and max(width, length) * (len(batch) + 1) > batch_tokens:
            yield batch
            batch, width = [], 0
        batch.append(row)
        width = max(width, length)
    if batch:
        yield batch


class GroupedRows:
    """The inputs of one forward over right-padded rows of whole groups (the module's layout and mask
    rule) and, from the log-probabilities of the scored tokens, each group's results.

    ``input_ids``, ``position_ids`` ``(rows, width)``; ``mask`` ``(rows, 1, width, width)`` in
    ``dtype`` (0 where a query sees a key, the dtype's minimum elsewhere); ``keep`` ``(rows, width)``,
    the positions whose logits predict a scored token; ``scored``: per scored token, the index of its
    predicting position among the kept ones (row-major) and its id, to index ``log_softmax(logits)``.
    """

    def __init__(self, rows: list[list[Group]], prefix_logprob: bool, pad_id: int, device: torch.device,
                 dtype: torch.dtype):
        self.rows, self.prefix_logprob = rows, prefix_logprob
        ids_rows, pos_rows, seg_rows = [], [], []
        # per scored token: (row, position of the logits that predict it, its id, group, 0 = prefix / t+1 = node t)
        targets: list[tuple[int, int, int, int, int]] = []
        for r, row in enumerate(rows):
            ids: list[int] = []
            positions: list[int] = []
            segments: list[tuple[int, int]] = []  # per token: (end of what sees it, start of its group's prefix)
            for g, prefix, nodes in row:
                base = len(ids)
                ids += prefix
                positions += range(len(prefix))
                segments += [(-1, base)] * len(prefix)  # a prefix token: seen by its group's later tokens
                if prefix_logprob:
                    targets += [(r, base + t - 1, prefix[t], g, 0) for t in range(1, len(prefix))]
                first = len(ids)
                ids += nodes.tokens
                positions += [len(prefix) + d for d in nodes.depths]
                segments += [(first + end, base) for end in nodes.ends]
                last = base + len(prefix) - 1
                targets += [(r, last if parent < 0 else first + parent, token, g, t + 1)
                            for t, (token, parent) in enumerate(zip(nodes.tokens, nodes.parents))]
            ids_rows.append(ids)
            pos_rows.append(positions)
            seg_rows.append(segments)
        width = max(len(ids) for ids in ids_rows)
        self.input_ids = torch.tensor([ids + [pad_id] * (width - len(ids)) for ids in ids_rows], device=device)
        self.position_ids = torch.tensor([pos + [0] * (width - len(pos)) for pos in pos_rows], device=device)
        self.mask = torch.full((len(rows), 1, width, width), torch.finfo(dtype).min, dtype=dtype, device=device)
        for r, segments in enumerate(seg_rows):
            n = len(segments)
            end = torch.tensor([e for e, _ in segments], device=device)
            group = torch.tensor([b for _, b in segments], device=device)
            index = torch.arange(n, device=device)
            is_prefix = end < 0
            same_group = group[:, None] == group[None, :]
            earlier = index[None, :] <= index[:, None]
            # a trie node is seen by the nodes of its subtree (laid out depth-first: itself up to its end)
            sees = same_group & earlier & (is_prefix[None, :] | (end[None, :] > index[:, None]))
            self.mask[r, 0, :n, :n].masked_fill_(sees, 0.0)
            self.mask[r, 0, n:, :].fill_(0.0)  # padding rows attend to everything (their outputs are never read)
        rows_t = torch.tensor([t[0] for t in targets], device=device)
        cols_t = torch.tensor([t[1] for t in targets], device=device)
        self.keep = torch.zeros((len(rows), width), dtype=torch.bool, device=device)
        self.keep[rows_t, cols_t] = True
        where = torch.full((len(rows), width), -1, dtype=torch.long, device=device)
        where[self.keep] = torch.arange(int(self.keep.sum()), device=device)
        self.scored = (where[rows_t, cols_t], torch.tensor([t[2] for t in targets], device=device))
        self._parts = [(g, part) for _, _, _, g, part in targets]

    def results(self, token_lp: Sequence[float]) -> list[tuple[int, tuple[LogProb | None, list[LogProb]]]]:
        """``(group index, (log P(prefix) or None, [log P(c | prefix) for c]))`` per group, from the
        log-probabilities of the scored tokens (in the order of :attr:`scored`): a continuation's is
        the sum over the nodes of its path."""
        prefix_sums: dict[int, float] = {}
        node_lp: dict[tuple[int, int], float] = {}
        for (g, part), lp in zip(self._parts, token_lp):
            if part:
                node_lp[g, part - 1] = lp
            else:
                prefix_sums[g] = prefix_sums.get(g, 0.0) + lp
        done = []
        for row in self.rows:
            for g, prefix, nodes in row:
                prefix_lp = (prefix_sums.get(g, 0.0), len(prefix) - 1) if self.prefix_logprob else None
                scored = [(sum(node_lp[g, t] for t in path), len(path)) for path in nodes.paths]
                done.append((g, (prefix_lp, scored)))
        return done


def sliding_window(config: Any) -> int | None:
    """The sliding window of ``config``'s sliding-window layers (Gemma 3: ``sliding_window``, the
    layers named ``sliding_attention`` in ``layer_types``), ``None`` when no layer slides."""
    window = getattr(config, "sliding_window", None)
    if not window or not getattr(config, "use_sliding_window", True):
        return None
    types = getattr(config, "layer_types", None)
    return window if types is None or "sliding_attention" in types else None


def fits_window(length: int, window: int | None) -> bool:
    """Whether a group of ``length`` tokens (prefix plus longest continuation) is attended to whole by
    a sliding-window layer of ``window`` (``None``: none slides): the layer sees keys less than
    ``window`` positions back and the group's positions run from 0 to ``length - 1``."""
    return window is None or length <= window
