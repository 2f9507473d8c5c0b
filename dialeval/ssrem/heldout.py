"""SSREM's Section 6 on a held-out split: how often ``f`` prefers the true response to each
level of negative, how similar each level is to the true response, and SSREM against RSREM."""

from __future__ import annotations

import random
from typing import Any, Sequence

import numpy as np

from dialeval.data.corpora import Turn
from dialeval.ssrem.corpus import split_of
from dialeval.ssrem.encoders import WordAverageEncoder
from dialeval.ssrem.negatives import NEGATIVE_TYPES, NegativeSampler, text_key
from dialeval.ssrem.scorer import SSREMScorer
from dialeval.stats.bootstrap import mean_boot, mean_ci

_EPS = 1e-9


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.where(denom > _EPS, (a * b).sum(1) / np.maximum(denom, _EPS), 0.0)


def heldout_draws(conversations: Sequence[Sequence[Turn]], split: str = "test", limit: int | None = None,
                  seed: int = 0, min_tokens: int = 0) -> tuple[NegativeSampler, list[int], dict[str, list]]:
    """``(sampler, targets, {type: [(target, negative), ...]})``: for each (context, true response)
    pair of ``split``'s conversations one negative of each type from its own pool only (no
    fallback; a type whose pool is empty is skipped for that pair). Pools span the whole corpus.
    Deterministic: two models evaluated with the same arguments see the same pairs."""
    sampler = NegativeSampler(conversations, min_tokens)
    rng = random.Random(f"ssrem-heldout-{seed}")
    splits = [split_of(c) for c in conversations]
    targets = [i for i in sampler.responses() if splits[sampler.utterances[i].conversation] == split]
    rng.shuffle(targets)
    targets = targets[:limit] if limit else targets
    drawn: dict[str, list[tuple[int, int]]] = {k: [] for k in NEGATIVE_TYPES}
    for t in targets:
        avoid = {text_key(sampler.utterances[t].text)}
        for kind in NEGATIVE_TYPES:
            i = sampler.draw_from(kind, t, rng, avoid)
            if i is not None:
                drawn[kind].append((t, i))
    return sampler, targets, drawn


def heldout_wins(scorer: SSREMScorer, sampler: NegativeSampler, targets: list[int],
                 drawn: dict[str, list]) -> tuple[dict[str, float], dict[str, list[float]], dict[str, list[float]]]:
    """``(f of each true response, {type: f of each negative}, {type: [1.0 if f(true) > f(negative)]})``.
    One call of ``scorer.f`` for every pair, so that each context is encoded once, not once per level."""
    texts = [u.text for u in sampler.utterances]
    pairs = [(t, t) for t in targets] + [pair for kind_pairs in drawn.values() for pair in kind_pairs]
    f = scorer.f([sampler.context(t, scorer.context_turns) for t, _ in pairs], [texts[i] for _, i in pairs])
    true_f = dict(zip(targets, f[: len(targets)]))
    f_neg, wins, start = {}, {}, len(targets)
    for kind, kind_pairs in drawn.items():
        f_neg[kind], start = f[start : start + len(kind_pairs)], start + len(kind_pairs)
        wins[kind] = [float(true_f[t] > v) for (t, _), v in zip(kind_pairs, f_neg[kind])]
    return true_f, f_neg, wins


def heldout_negatives(scorer: SSREMScorer, conversations: Sequence[Sequence[Turn]], split: str = "test",
                      limit: int | None = None, seed: int = 0, min_tokens: int | None = None) -> dict[str, Any]:
    """Section 6 on a held-out split (pairs from :func:`heldout_draws`, pools with the checkpoint's
    ``min_tokens`` unless given). Returns per type (GT, SC, SP, SS, RN) the mean ``f``, the mean
    cosine of ``v(negative)`` with ``v(true response)`` (the paper's Table 2 measure, with the
    scorer's encoder) and how often ``f(true) > f(negative)`` (``win_rate``); every mean with its
    normal 95 % CI (``ci95``) and bootstrap 95 % interval (``low``, ``high``)."""
    if min_tokens is None:
        min_tokens = int(scorer.config.get("min_tokens", 0))
    sampler, targets, drawn = heldout_draws(conversations, split, limit, seed, min_tokens)
    true_f, f_neg, wins = heldout_wins(scorer, sampler, targets, drawn)
    texts = [u.text for u in sampler.utterances]
    out: dict[str, Any] = {"split": split, "pairs": len(targets), "min_tokens": min_tokens,
                           "encoder": scorer.encoder.name, "f": {"GT": mean_ci(list(true_f.values()))},
                           "similarity": {}, "win_rate": {}}
    for kind, pairs in drawn.items():
        if not pairs:
            out["f"][kind] = mean_ci([])
            continue
        out["f"][kind] = mean_ci(f_neg[kind])
        out["win_rate"][kind] = mean_boot(wins[kind], seed)
        true_v = scorer.encoder.encode([texts[t] for t, _ in pairs])
        neg_v = scorer.encoder.encode([texts[i] for _, i in pairs])
        out["similarity"][kind] = mean_boot(cosine_rows(true_v, neg_v).tolist(), seed)
        if getattr(scorer.encoder, "center", None) is not None:  # also the paper's raw (uncentred) average
            raw = WordAverageEncoder(scorer.encoder.vectors, "raw")
            out.setdefault("similarity_raw", {})[kind] = mean_boot(cosine_rows(
                raw.encode([texts[t] for t, _ in pairs]), raw.encode([texts[i] for _, i in pairs])).tolist(), seed)
    return out


def heldout_compare(a: SSREMScorer, b: SSREMScorer, conversations: Sequence[Sequence[Turn]], split: str = "test",
                    limit: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Paired comparison of two checkpoints (SSREM ``a`` vs RSREM ``b``) on the same held-out pairs
    (``a``'s ``min_tokens``): per type the difference of ``P(f(true) > f(negative))`` with its paired
    bootstrap 95 % interval, and the cosine between the two ``M`` matrices (flattened)."""
    sampler, targets, drawn = heldout_draws(conversations, split, limit, seed, int(a.config.get("min_tokens", 0)))
    _, _, wins_a = heldout_wins(a, sampler, targets, drawn)
    _, _, wins_b = heldout_wins(b, sampler, targets, drawn)
    out: dict[str, Any] = {"split": split, "pairs": len(targets), "difference": {}}
    for kind in NEGATIVE_TYPES:
        if drawn[kind]:
            diff = (np.asarray(wins_a[kind]) - np.asarray(wins_b[kind])).tolist()
            out["difference"][kind] = mean_boot(diff, seed)
    out["parameter_cosine"] = parameter_cosine(a.module, b.module)
    return out


def parameter_cosine(a, b) -> float:
    """Cosine between two bilinear modules' flattened ``M``."""
    x = a.M.detach().double().flatten()
    y = b.M.detach().double().flatten()
    return float(x @ y / max(float(x.norm() * y.norm()), _EPS))
