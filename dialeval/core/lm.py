"""Language-model scoring shared by the language-model metrics (FED, FULL, holistic coherence/fluency).

Everything is a summed natural-log probability plus the number of tokens it covers, so a caller can
form either a total log-likelihood or a mean token loss (``loss = -logprob / count``, the HF
``model(ids, labels=ids).loss`` when the whole sequence is counted).

Two entry points on :class:`LMScorer`:

* :meth:`LMScorer.continuation_logprobs` -- one prefix, many continuations,
  ``log P(c | p) = sum_j log P(c_j | p, c_<j)``. The prefix is run through the model once (FED scores
  ~30-60 follow-ups after one conversation this way); then up to ``batch_size`` continuations at a
  time are packed into one row that reads the prefix's key/value cache, with position ids restarting
  at the prefix length for each continuation and a block-causal mask, so each continuation is scored
  exactly as ``prefix + c`` alone. Packing instead of repeating the cache along a padded batch avoids
  copying the prefix keys/values per continuation (that copy was ~30% of the CPU time).
  :meth:`LMScorer.prefix_and_continuation_logprobs` returns ``log P(prefix)`` beside them from the
  same pass (FED's whole-string loss and its conditional scores come from one pass this way).
* :meth:`LMScorer.sequence_logprobs` -- whole sequences, ``sum_{t=1}^{n-1} log P(x_t | x_<t)``.
* :meth:`LMScorer.target_logprobs` -- encoder-decoder models (BlenderBot, BART, T5): one encoder
  input, many decoder targets, ``log P(t | source) = sum_j log P(t_j | source, t_<j)``. The source
  is encoded once and the targets are decoded as one padded batch reading its hidden states
  (expanded, not copied); with ``share_prefix=False`` every target takes a full forward of its own.

Callers build token ids themselves; no special token is ever added here. Batches of whole sequences
are right-padded (pad id: ``tokenizer.pad_token_id``, else ``eos_token_id``) with attention masks and
explicit position ids, and the log-softmax is taken in (at least) float32, so results do not depend
on the batch size or on the other items in a batch beyond float rounding.

Loading the models (:func:`load_causal_lm`, the offline bases) is :mod:`dialeval.core.lm_loading`;
its names are importable from here too.
"""

from __future__ import annotations

import inspect
import os
import warnings
from typing import Any, Sequence

import torch

from dialeval.core.lm_loading import (  # noqa: F401  (the loading names, importable from here)
    GEMMA_LM, LOCAL_BASES, LOCAL_BUILDS, LOCAL_LM, causal_lm_and_name, is_encoder_decoder, load_causal_lm)
from dialeval.core.batching import default_overhead, length_batches
from dialeval.core.progress import Progress
from dialeval.core.continuation_trie import ContinuationTrie
from dialeval.core.grouped_layout import Group, GroupedRows, LogProb, fits_window, group_batches, sliding_window
from dialeval.core.options import check_device, default_device
from dialeval.core.precision import with_precision


def conversation_text(turns: Sequence[str], eos: str) -> str:
    """A conversation as FED/DialoGPT read it: ``eos + " " + (" " + eos + " ").join(turns)``.

    The authors' demo string, ``"<|endoftext|> Hi! <|endoftext|> Hello, how is your day? ..."``.
    An empty (or blank) turn, e.g. an empty generation, is its ``eos`` separator alone:
    ``["Hi!", ""]`` gives ``"<|endoftext|> Hi! <|endoftext|>"`` (no stray spaces).
    """
    parts = [eos]
    for i, turn in enumerate(turns):
        parts += ([eos] if i else []) + ([turn] if turn.strip() else [])
    return " ".join(parts)


def model_window(model: Any) -> int:
    """The number of positions the model can attend to (``max_position_embeddings`` / ``n_positions``)."""
    config = model.config
    for attr in ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ValueError(f"cannot read the context window from {type(config).__name__}; pass max_length")


def _cache_of(output: Any) -> Any:
    """The key/value cache of a forward output: ``cache`` in transformers 5.2x, ``past_key_values`` before."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


CPU_BATCH_TOKENS = 512  # one row per forward: fastest on this project's 2-core CPU (benchmarks/throughput.md)
CUDA_BATCH_TOKENS = 32768  # tokens per forward on a GPU (benchmarks/results/throughput-cuda.md, an H200)
# Most logits (rows x padded length x vocabulary) one plain-path batch may produce where the model
# computes them all (a transformers without a boolean logits_to_keep): 2 GB in float32. FED on
# Gemma-3 (262k vocabulary) in batches of 32 conversations of 750 tokens needed 25 GB and was killed.
LOGITS_BUDGET = 2**29


def default_batch_tokens(device: str | torch.device) -> int:
    """Tokens per forward of :meth:`LMScorer.grouped_logprobs` when the caller names none: one row
    of 512 on a CPU, :data:`CUDA_BATCH_TOKENS` on a GPU (padded rows; the logits of the scored
    positions take about ``0.75 * batch_tokens * vocabulary * 8`` bytes, 10 GB for SmolLM2)."""
    return CUDA_BATCH_TOKENS if torch.device(device).type == "cuda" else CPU_BATCH_TOKENS


def _log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """Log-softmax over the vocabulary in float32, or float64 for a float64 model."""
    return torch.log_softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)


class LMScorer:
    """Batched log-probabilities of token-id sequences under a causal LM.

    ``batch_size`` sequences (or packed continuations, at most ``pack_tokens`` tokens unless one is
    longer) go through the model per call. ``max_length`` defaults to the model's window. ``dtype``
    (e.g. ``torch.float16``/``bfloat16`` on CUDA) casts the model, ``precision`` (:mod:`dialeval.core.precision`,
    kept as :attr:`precision`) reduces it after; log-softmax and sums are at least float32.
    ``share_prefix=False`` makes :meth:`continuation_logprobs` score every ``prefix + c`` in full
    (same numbers, slower); that path is also taken automatically for models whose cache is not a
    plain ``DynamicCache`` or whose attention is neither ``eager`` nor ``sdpa`` (no 4D masks).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        batch_size: int = 16,
        device: str | torch.device | None = None,
        max_length: int | None = None,
        dtype: torch.dtype | None = None,
        share_prefix: bool = True,
        pack_tokens: int = 2048,
        precision: str = "float32",
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.device = torch.device(device) if device is not None else next(model.parameters()).device
        self.model, self.precision = with_precision(model.to(device=self.device, dtype=dtype).eval(), precision, self.device)
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length or model_window(model)
        if self.max_length < 2:
            raise ValueError(f"max_length must be >= 2, got {self.max_length}")
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = pad if pad is not None else 0
        self.share_prefix = share_prefix
        self.pack_tokens = pack_tokens
        base = model.get_base_model() if hasattr(model, "get_base_model") else model  # a PEFT wrapper
        parameters = inspect.signature(base.forward).parameters
        self._keeps_logits = "logits_to_keep" in parameters
        self._keeps_mask = self._keeps_logits  # a boolean logits_to_keep (transformers 5.2x); checked on first use
        # transformers 5.2x names the key/value cache ``cache`` (``past_key_values`` warns there)
        self._cache_keyword = "cache" if "cache" in parameters else "past_key_values"

    # -- public API ---------------------------------------------------------------------------

    @torch.no_grad()
    def continuation_logprobs(
        self, prefix_ids: Sequence[int], continuations: Sequence[Sequence[int]], with_prefix: bool = False
    ) -> list[LogProb]:
        """``(log P(c | prefix), len(c))`` for every continuation ``c``; the prefix is encoded once.

        With ``with_prefix=True`` each result covers the whole sequence ``prefix + c`` instead:
        ``(sum_{t=1}^{n-1} log P(x_t | x_<t), n - 1)``, i.e. ``-count * loss`` of ``model(x, labels=x)``.
        Truncation as in :meth:`prefix_and_continuation_logprobs`.
        """
        prefix_lp, conts = self.prefix_and_continuation_logprobs(prefix_ids, continuations, with_prefix)
        if prefix_lp is None:
            return conts
        return [(prefix_lp[0] + lp, prefix_lp[1] + n) for lp, n in conts]

    @torch.no_grad()
    def prefix_and_continuation_logprobs(
        self, prefix_ids: Sequence[int], continuations: Sequence[Sequence[int]], prefix_logprob: bool = True
    ) -> tuple[LogProb | None, list[LogProb]]:
        """``(log P(prefix), [log P(c | prefix) for c in continuations])`` from one prefix pass.

        ``log P(prefix) = (sum_{t=1}^{P-1} log P(p_t | p_<t), P - 1)`` over the (possibly truncated)
        prefix, ``None`` when ``prefix_logprob=False`` (then the model's LM head runs on the last
        prefix position only, where the model supports ``logits_to_keep``). Each continuation gives
        ``(sum_j log P(c_j | prefix, c_<j), len(c))``; ``log P(prefix) + log P(c | prefix)`` is the
        whole-sequence sum of :meth:`continuation_logprobs` with ``with_prefix=True``.

        Truncation, so that ``prefix + c`` fits ``max_length`` for the longest ``c``: a continuation
        longer than ``max_length - 1`` keeps its first ``max_length - 1`` tokens; the prefix is
        left-truncated, keeping its first token (the BOS/EOS callers start with) and its last tokens.
        All continuations of one call share the same truncated prefix.
        """
        prefix, conts = self._fit(list(prefix_ids), continuations)
        if self.share_prefix:
            keep = {} if prefix_logprob or not self._keeps_logits else {"logits_to_keep": 1}
            out = self.model(input_ids=self._tensor([prefix]), use_cache=True, **keep)
            if not self._can_share(_cache_of(out)):
                self.share_prefix = False
            elif self._within_windows(_cache_of(out), len(prefix) + max(len(c) for c in conts)):
                return self._shared_prefix(prefix, conts, out, prefix_logprob)
        scored = self._batch_logprobs([prefix + c for c in conts], [len(prefix)] * len(conts))
        return (self._batch_logprobs([prefix], [1])[0] if prefix_logprob else None), scored

    def _shared_prefix(
        self, prefix: list[int], conts: list[list[int]], out: Any, prefix_logprob: bool
    ) -> tuple[LogProb | None, list[LogProb]]:
        """Continuations packed against the prefix cache of ``out`` (see ``_packed_logprobs``)."""
        kv = [(layer.keys, layer.values) for layer in _cache_of(out).layers]
        logprobs = _log_softmax(out.logits[0])  # (P, V), or (1, V) with logits_to_keep=1
        prefix_lp: LogProb | None = None
        if prefix_logprob:
            targets = self._tensor([prefix[1:]])[0]
            prefix_lp = (logprobs[:-1].gather(-1, targets[:, None]).sum().item(), len(prefix) - 1)
        first = logprobs[-1]  # predicts the first continuation token
        results: list[LogProb | None] = [None] * len(conts)
        for batch in self._packs(conts):
            sums = self._packed_logprobs([conts[i] for i in batch], kv, len(prefix), first)
            for i, value in zip(batch, sums):
                results[i] = (value, len(conts[i]))
        return prefix_lp, results  # type: ignore[return-value]

    @torch.no_grad()
    def sequence_logprobs(self, sequences: Sequence[Sequence[int]], progress: bool = True) -> list[LogProb]:
        """``(sum_{t=1}^{n-1} log P(x_t | x_<t), n - 1)`` for every sequence (``(0.0, 0)`` when n = 1).

        A sequence longer than ``max_length`` keeps its first ``max_length`` tokens.
        """
        given = self._check_ids(sequences, "sequences")
        seqs = [list(s)[: self.max_length] for s in given]
        cut = sum(len(s) - len(kept) for s, kept in zip(given, seqs))
        if cut:
            warnings.warn(f"the LM's window is {self.max_length} tokens: {cut} token(s) cut from the end of "
                          "the scored text(s)", stacklevel=2)
        return self._batch_logprobs(seqs, [1] * len(seqs), progress)

    @torch.no_grad()
    def pair_logprobs(
        self, prefixes: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]], progress: bool = True
    ) -> list[LogProb]:
        """``(log P(c_i | p_i), len(c_i))`` for many (prefix, continuation) pairs, batched.

        One prefix per continuation (holistic coherence: ``log P(r | q)`` for many queries); for many
        continuations of one prefix use :meth:`continuation_logprobs`. Pairs are packed whole into
        rows (:meth:`grouped_logprobs`) where the attention takes a 4D mask, else right-padded into
        batches of ``batch_size``. Truncation per pair as there: a
        continuation keeps its first ``max_length - 1`` tokens, a prefix is left-truncated keeping its
        first token.
        """
        if len(prefixes) != len(continuations):
            raise ValueError(f"{len(prefixes)} prefixes but {len(continuations)} continuations")
        if self._packs_groups():  # whole pairs packed into rows: no padding, the LM head on the response only
            pairs = list(zip(self._check_ids(prefixes, "prefixes"), [[c] for c in continuations]))
            return [conts[0] for _, conts in self.grouped_logprobs(pairs, progress=progress)]
        fitted = [self._fit(list(p), [c]) for p, c in zip(self._check_ids(prefixes, "prefixes"), continuations)]
        seqs = [prefix + conts[0] for prefix, conts in fitted]
        return self._batch_logprobs(seqs, [len(prefix) for prefix, _ in fitted], progress)

    @torch.no_grad()
    def grouped_logprobs(
        self, groups: Sequence[tuple[Sequence[int], Sequence[Sequence[int]]]], prefix_logprob: bool = False,
        row_tokens: int = 512, batch_tokens: int | None = None, progress: bool = True,
    ) -> list[tuple[LogProb | None, list[LogProb]]]:
        """:meth:`prefix_and_continuation_logprobs` of many ``(prefix, continuations)`` groups (FED's
        conversations with their follow-ups), with the work of several groups in one forward.

        Each group is truncated as there. Groups are laid out whole, the prefix followed by its
        continuations as a token trie (:class:`ContinuationTrie`: tokens that several continuations
        begin with are fed once), into rows of at most ``row_tokens`` tokens, longest first; rows go
        through the model in batches of at most ``batch_tokens`` tokens (right-padded; default
        :func:`default_batch_tokens`: one row of 512 on a CPU, where that measured fastest, 32,768 on a
        GPU) under a block mask, with positions restarting per group (:mod:`dialeval.core.grouped_layout`),
        so each continuation is scored exactly as ``prefix + c`` alone (the sum over its path; equal to
        the one-group path up to float rounding). The LM head runs only on the positions whose next
        token is scored. Models whose attention takes no 4D mask fall back to one
        :meth:`prefix_and_continuation_logprobs` call per group; so does a group whose prefix plus
        longest continuation is longer than a sliding window (Gemma 3's 512 tokens), where the block
        mask would not be exact. Progress counts the groups of each batch
        (:mod:`dialeval.core.progress`; ``progress=False``: none).
        """
        fitted = [self._fit(list(prefix), conts) for prefix, conts in groups]
        with Progress(len(fitted), "lm", unit="group", enabled=progress) as bar:
            if not self._packs_groups():
                return [self.prefix_and_continuation_logprobs(p, c, prefix_logprob) for p, c in bar.each(fitted)]
            results: list[Any] = [None] * len(fitted)
            window = sliding_window(self.model.config)
            laid = {}  # what each group feeds, for the groups that fit the sliding window
            for i, (prefix, conts) in enumerate(fitted):
                if fits_window(len(prefix) + max(map(len, conts)), window):
                    laid[i] = (prefix, ContinuationTrie(conts))
                else:  # beyond a sliding window the block mask is not exact: the one-group path
                    results[i] = self.prefix_and_continuation_logprobs(*fitted[i], prefix_logprob)
                    bar.update(1)
            order = list(laid)
            budget = default_batch_tokens(self.device) if batch_tokens is None else batch_tokens
            for batch in group_batches([len(p) + len(trie) for p, trie in laid.values()], row_tokens, budget):
                rows = [[(order[j], *laid[order[j]]) for j in row] for row in batch]
                for g, value in self._grouped_forward(rows, prefix_logprob):
                    results[g] = value
                bar.update(sum(map(len, batch)))
        return results  # type: ignore[return-value]

    @torch.no_grad()
    def target_logprobs(self, source_ids: Sequence[int], targets: Sequence[Sequence[int]]) -> list[LogProb]:
        """``(log P(t | source), len(t))`` for every decoder target ``t`` of an encoder-decoder model.

        ``log P(t | source) = sum_j log P(t_j | source, t_<j)``: the decoder reads
        ``[decoder_start] + t[:-1]`` and every token of ``t`` is scored (HF's ``model(input_ids=source,
        labels=t).loss`` is ``-log P / len(t)``). A source longer than ``max_length`` keeps its first
        ``max_length`` tokens (right-side truncation, as a tokenizer's ``truncation=True`` does), a
        target its first ``max_length``. The source is encoded once and the targets decoded in padded
        batches of ``batch_size`` against its hidden states; ``share_prefix=False`` runs a full
        forward per target instead (same numbers up to float rounding).
        """
        if not is_encoder_decoder(self.model):
            raise ValueError(f"target_logprobs needs an encoder-decoder model, not {type(self.model).__name__}")
        source = list(self._check_ids([source_ids], "source_ids")[0])
        given = self._check_ids(targets, "targets")
        kept = [list(t)[: self.max_length] for t in given]
        cut = len(source) - self.max_length
        if cut > 0 or any(len(t) > len(k) for t, k in zip(given, kept)):
            warnings.warn(f"the model's window is {self.max_length} tokens: {max(cut, 0)} token(s) cut from the end "
                          "of the source and the targets cut to the window", stacklevel=2)
        source = source[: self.max_length]
        start = self._decoder_start()
        source_tensor = self._tensor([source])
        if not self.share_prefix:  # the plain way: encoder and decoder per target
            return [self._decoded([t], start, {"input_ids": source_tensor})[0] for t in kept]
        hidden = self.model.get_encoder()(input_ids=source_tensor).last_hidden_state
        results: list[LogProb | None] = [None] * len(kept)
        for batch in self._batches(kept):
            encoded = {"encoder_outputs": (hidden.expand(len(batch), -1, -1),)}
            for i, value in zip(batch, self._decoded([kept[i] for i in batch], start, encoded)):
                results[i] = value
        return results  # type: ignore[return-value]

    # -- internals ------------------------------------------------------------------------------

    def _decoder_start(self) -> int:
        config = self.model.config
        start = getattr(config, "decoder_start_token_id", None)
        if start is None:
            start = getattr(getattr(self.model, "generation_config", None), "decoder_start_token_id", None)
        if start is None:
            raise ValueError(f"{type(self.model).__name__} has no decoder_start_token_id in its config")
        return int(start)

    def _decoded(self, targets: list[list[int]], start: int, source: dict[str, Any]) -> list[LogProb]:
        """Summed log-probs of right-padded ``targets`` decoded after one source, given as ``input_ids``
        (encoded here) or as its ``encoder_outputs`` (one row per target)."""
        ids, mask = self._padded(targets)
        inputs = torch.cat([ids.new_full((len(targets), 1), start), ids[:, :-1]], dim=1)
        logits = self.model(**source, decoder_input_ids=inputs, decoder_attention_mask=mask, use_cache=False).logits
        token_lp = _log_softmax(logits).gather(-1, ids[..., None])[..., 0]
        sums = token_lp.masked_fill(mask == 0, 0.0).sum(dim=1).tolist()
        return [(value, len(t)) for value, t in zip(sums, targets)]


    def _tensor(self, rows: list[list[int]]) -> torch.Tensor:
        return torch.tensor(rows, dtype=torch.long, device=self.device)

    @staticmethod
    def _check_ids(items: Sequence[Sequence[int]], name: str) -> list[Sequence[int]]:
        if len(items) == 0:
            raise ValueError(f"{name} is empty: pass at least one token-id list")
        for i, ids in enumerate(items):
            if len(ids) == 0:
                raise ValueError(f"{name}[{i}] is an empty token-id list")
        return list(items)

    def _fit(self, prefix: list[int], continuations: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
        if not prefix:
            raise ValueError("prefix_ids is empty: it needs at least one token (e.g. BOS/EOS)")
        limit = self.max_length
        given = self._check_ids(continuations, "continuations")
        conts = [list(c)[: limit - 1] for c in given]
        room = limit - max(len(c) for c in conts)
        cut_prefix = max(0, len(prefix) - room)
        if cut_prefix:
            prefix = prefix[:1] + prefix[len(prefix) - room + 1 :]
        cut_continuations = sum(len(c) - len(kept) for c, kept in zip(given, conts))
        if cut_prefix or cut_continuations:
            warnings.warn(f"the LM's window is {limit} tokens: {cut_continuations} token(s) cut from the end of the "
                          f"scored text(s), {cut_prefix} from the start of the context before them", stacklevel=3)
        return prefix, conts

    def _batches(self, seqs: list[list[int]], progress: bool = True) -> Any:
        """Index batches of similar lengths, longest first: runs of the sequences sorted by length, at
        most ``batch_size`` each, cut where the padded positions plus a per-call cost are fewest
        (:func:`dialeval.core.batching.length_batches`), each split until its padded logits stay within
        :data:`LOGITS_BUDGET` values (Gemma-3's 262k vocabulary: 2 rows of 750 tokens); progress per sequence."""
        lengths = [len(s) for s in seqs]
        vocab = getattr(self.model.get_output_embeddings(), "out_features", None) or self.model.config.vocab_size  # int8 too
        with Progress(len(seqs), "lm", unit="sequence", enabled=progress) as bar:
            for batch in reversed(length_batches(lengths, self.batch_size, default_overhead(self.device))):
                rows = max(1, LOGITS_BUDGET // (max(lengths[i] for i in batch) * vocab))
                for start in range(0, len(batch), rows):
                    yield batch[start : start + rows]
                    bar.update(len(batch[start : start + rows]))

    def _padded(self, rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(r) for r in rows)
        ids = self._tensor([r + [self.pad_id] * (width - len(r)) for r in rows])
        mask = self._tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
        return ids, mask

    def _can_share(self, cache: Any) -> bool:
        """Packing needs a plain per-layer key/value cache (full or sliding-window layers, as Gemma 3's)
        and an attention that takes a 4D float mask."""
        from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer

        layers = (DynamicLayer, DynamicSlidingWindowLayer)
        plain = isinstance(cache, DynamicCache) and all(type(layer) in layers for layer in cache.layers)
        return plain and getattr(self.model.config, "_attn_implementation", None) in ("eager", "sdpa")

    @staticmethod
    def _within_windows(cache: Any, length: int) -> bool:
        """Whether a prefix plus its longest continuation, ``length`` tokens, fit every sliding-window
        layer of ``cache`` whole: then such a layer attends to all of them as a full one does and keeps
        the whole prefix, so the packed path is exact; a longer call takes the plain path."""
        from transformers.cache_utils import DynamicSlidingWindowLayer

        return all(length <= layer.sliding_window for layer in cache.layers if isinstance(layer, DynamicSlidingWindowLayer))

    def _packs(self, conts: list[list[int]]) -> Any:
        """Consecutive index groups of at most ``batch_size`` continuations and ``pack_tokens`` tokens."""
        group: list[int] = []
        tokens = 0
        for i, cont in enumerate(conts):
            if group and (len(group) == self.batch_size or tokens + len(cont) > self.pack_tokens):
                yield group
                group, tokens = [], 0
            group.append(i)
            tokens += len(cont)
        yield group

    def _packs_groups(self) -> bool:
        """Whether several sequences can share a row: the attention must take a 4D float mask and every
        layer attend fully or through a sliding window (:mod:`dialeval.core.grouped_layout`; a group
        longer than the window is scored alone, :meth:`grouped_logprobs`)."""
        config = self.model.config
        kinds = set(getattr(config, "layer_types", None) or ()) <= {"full_attention", "sliding_attention"}
        return self.share_prefix and kinds and getattr(config, "_attn_implementation", None) in ("eager", "sdpa")

    def _grouped_forward(
        self, rows: list[list[Group]], prefix_logprob: bool
    ) -> list[tuple[int, tuple[LogProb | None, list[LogProb]]]]:
        """One forward over right-padded rows of whole groups (:class:`GroupedRows`)."""
        layout = GroupedRows(rows, prefix_logprob, self.pad_id, self.device, self.model.dtype)
        out = self._kept_logits(layout.input_ids, layout.mask, layout.position_ids, layout.keep)
        return layout.results(_log_softmax(out)[layout.scored].tolist())

    def _kept_logits(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor,
                     keep: torch.Tensor) -> torch.Tensor:
        """The logits at the ``keep`` positions, ``(keep.sum(), V)`` in row-major order: the LM head runs
        on those positions only where the model takes a boolean ``logits_to_keep``."""
        if self._keeps_mask:
            try:
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False,
                                    logits_to_keep=keep).logits
                if logits.dim() == 2 and logits.shape[0] == int(keep.sum()):
                    return logits
            except (IndexError, RuntimeError, TypeError):
                pass
            self._keeps_mask = False  # an older transformers reads positions, not a mask
        logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits
        return logits[keep]

    def _packed_logprobs(
        self, conts: list[list[int]], kv: list[tuple[torch.Tensor, torch.Tensor]], n_prefix: int, first: torch.Tensor
    ) -> list[float]:
        """Summed log-probs of continuations packed into one row ``c_1 c_2 ... c_k`` after the prefix cache.

        Position ids restart at ``n_prefix`` for every ``c_i`` and a block-causal additive mask lets a
        token see the prefix and the earlier tokens of its own continuation only, so each ``c_i`` is
        scored exactly as ``prefix + c_i`` alone; the prefix keys/values are neither recomputed nor copied
        per continuation.
        """
        from transformers.cache_utils import DynamicCache

        dev = self.device
        lengths = torch.tensor([len(c) for c in conts], device=dev)
        ids = torch.tensor([t for c in conts for t in c], dtype=torch.long, device=dev)
        segment = torch.repeat_interleave(torch.arange(len(conts), device=dev), lengths)
        index = torch.arange(len(ids), device=dev)
        offset = index - (torch.cumsum(lengths, 0) - lengths)[segment]  # position within its continuation
        own = (segment[:, None] == segment[None, :]) & (index[None, :] <= index[:, None])
        sees = torch.cat([own.new_ones(len(ids), n_prefix), own], dim=1)
        dtype = self.model.dtype
        mask = torch.zeros(sees.shape, dtype=dtype, device=dev).masked_fill_(~sees, torch.finfo(dtype).min)
        logits = self.model(
            input_ids=ids[None],
            attention_mask=mask[None, None],
            position_ids=(n_prefix + offset)[None],
            **{self._cache_keyword: DynamicCache(kv)},  # fresh: the forward call appends to it
            use_cache=True,
        ).logits[0]
        following = _log_softmax(logits[:-1]).gather(-1, ids[1:, None])[:, 0]  # log P(ids[i] | ..., ids[i-1])
        token_lp = torch.where(offset == 0, first[ids], torch.cat([following.new_zeros(1), following]))
        return torch.zeros(len(conts), dtype=token_lp.dtype, device=dev).index_add_(0, segment, token_lp).tolist()

    def _batch_logprobs(self, seqs: list[list[int]], starts: list[int], progress: bool = True) -> list[LogProb]:
        """``sum_{t=start}^{n-1} log P(x_t | x_<t)`` and ``n - start`` per sequence, batched."""
        results: list[LogProb | None] = [None] * len(seqs)
        for batch in self._batches(seqs, progress):
            ids, mask = self._padded([seqs[i] for i in batch])
            positions = torch.arange(ids.shape[1], device=self.device).expand_as(ids)
            keep = torch.zeros_like(mask, dtype=torch.bool)  # positions whose next token is scored
            for row, i in enumerate(batch):
                keep[row, starts[i] - 1 : len(seqs[i]) - 1] = True
            if not keep.any():  # one-token sequences: nothing to score
                for i in batch:
                    results[i] = (0.0, len(seqs[i]) - starts[i])
                continue
            logits = self._kept_logits(ids, mask, positions, keep)  # the LM head on the kept positions only
            targets = ids[:, 1:][keep[:, :-1]]
            token_lp = _log_softmax(logits).gather(-1, targets[:, None])[:, 0]
            row_of = torch.arange(len(batch), device=self.device)[:, None].expand_as(keep)[keep]
            sums = torch.zeros(len(batch), dtype=token_lp.dtype, device=self.device).index_add_(0, row_of, token_lp)
            for row, i in enumerate(batch):
                results[i] = (sums[row].item(), len(seqs[i]) - starts[i])
        return results  # type: ignore[return-value]


def lm_scorer(
    model: str | os.PathLike | tuple[Any, Any], device: str | None = None, dtype: torch.dtype | None = None,
    encoder_decoder: bool = False, **options: Any,
) -> tuple[LMScorer, str]:
    """An :class:`LMScorer` over ``model`` and the name result signatures report
    (:func:`causal_lm_and_name`). A name/path loads on ``device``, or with ``device=None`` on CUDA when
    available, else CPU; a loaded ``(model, tokenizer)`` pair stays on its device unless ``device`` is
    given (checked: ``"cuda"`` without CUDA is a ``ValueError``). ``options`` (``batch_size``,
    ``max_length``, ``share_prefix``, ...) go to :class:`LMScorer`."""
    device = check_device(device)
    load_on = device if device is not None or isinstance(model, tuple) else default_device()
    lm, tokenizer, name = causal_lm_and_name(model, load_on, dtype, encoder_decoder=encoder_decoder)
    return LMScorer(lm, tokenizer, device=device, dtype=dtype, **options), name
