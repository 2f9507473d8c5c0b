"""Training SSREM's ``f(c, r) = v(c)^T M v(r)`` (Bak & Oh 2020, Section 3.3): the run behind
``training/ssrem.py`` (which only parses its options; see its docstring for the method and the
command lines).

Every utterance and context of the training split is encoded once with the frozen ``v(.)`` (cached
under ``$DIALEVAL_CACHE/ssrem``, in chunks saved as they are done, so that a sentence encoder's CPU
hours span several runs: :func:`encode_cached`), so only ``M`` trains: per batch of (context, true response) pairs
a candidate set from :class:`dialeval.ssrem.negatives.NegativeSampler` and :func:`candidate_loss`.
After training, the min-max constants of ``f`` and ``g`` go into ``config.json`` and the held-out
comparison (:func:`dialeval.ssrem.heldout.heldout_negatives`) into the report.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import shutil
import time
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch

from dialeval.core.chunk_cache import ChunksPaused, cached_chunks
from dialeval.core.resources import cache_dir
from dialeval.core.training import STATE_FILE, load_state, run_steps
from dialeval.models.hub import HUB_ROOT
from dialeval.ssrem.checkpoint import ABLATION, WEIGHTS_FILE, bilinear_module, load_module, save_model
from dialeval.ssrem.corpus import SPLIT_SEED, load_corpus, split_corpus, split_of
from dialeval.ssrem.encoders import WordAverageEncoder, check_pooling, make_encoder, pool_turns
from dialeval.ssrem.heldout import heldout_negatives
from dialeval.ssrem.mover import MOVER_MODES
from dialeval.ssrem.negatives import NegativeSampler, word_count
from dialeval.ssrem.scorer import SSREMScorer
from dialeval.ssrem.spec import BUILDS

BUNDLED = HUB_ROOT / "ssrem-chitchat"  # what the default arguments (GloVe) rebuild
BUNDLED_FOLDERS = tuple(HUB_ROOT / folder for folder in BUILDS)  # the folders with a card, the default first


def candidate_loss(scores):
    """Section 3.3: ``-log softmax(f(c, candidates))`` of the true candidate (column 0), batch mean."""
    import torch

    return -torch.log_softmax(scores, dim=1)[:, 0].mean()


class IdentityAnchored(torch.nn.Module):
    """Training-only view of the bilinear ``f`` for ``--identity-penalty``: ``M`` starts at the identity
    (``f`` = the frozen encoder's cosine, the untrained baseline), the loss adds
    ``penalty * ||M - I||_F^2``, and the candidate logits are ``f`` times a learned scale (a ranking
    does not depend on it, so only ``M`` is saved: the checkpoint format is unchanged)."""

    def __init__(self, bilinear: torch.nn.Module, penalty: float, log_scale: float = 0.0):
        super().__init__()
        self.bilinear, self.penalty = bilinear, penalty
        self.log_scale = torch.nn.Parameter(torch.tensor(float(log_scale)))

    @property
    def M(self) -> torch.nn.Parameter:
        return self.bilinear.M

    def forward(self, c: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return self.bilinear(c, r) * self.log_scale.exp()

    def regularizer(self) -> torch.Tensor:
        return self.penalty * (self.M - torch.eye(self.M.shape[0], dtype=self.M.dtype)).pow(2).sum()


def default_output(negatives: str) -> Path:
    """The bundled folder of SSREM (``negatives="speaker"``) or of its RSREM ablation."""
    return BUNDLED if negatives == "speaker" else BUNDLED / ABLATION


ENCODE_CHUNK = 8192  # texts per saved chunk of encode_cached (mpnet: 5.5 minutes of two threads, measured)


EncodingPaused = ChunksPaused  # the name training/ssrem.py catches


def encode_cached(encoder, texts: list[str], what: str, deadline: float | None = None) -> np.ndarray:
    """``encoder.encode(texts)``, cached by encoder and content. Built in chunks of
    :data:`ENCODE_CHUNK` texts, each saved when done (``<cache>.parts/``,
    :func:`dialeval.core.chunk_cache.cached_chunks`), so that an interrupted run resumes at the first
    missing chunk (MiniLM takes an hour of one CPU over the chit-chat corpus, mpnet several);
    :class:`EncodingPaused` when ``deadline`` (a ``time.time()``) has passed before a missing chunk.
    The chunks are joined into one file when all are done."""
    key = hashlib.sha256("\n".join([encoder.name, what, *texts]).encode()).hexdigest()[:16]
    path = cache_dir() / "ssrem" / f"{encoder.name}-{what}-{key}.npy"
    if path.is_file():
        return np.load(path)
    single = len(texts) <= ENCODE_CHUNK
    names = cached_chunks(path.with_suffix(".parts"), texts,
                          lambda chunk: encoder.encode(list(chunk), progress=single and len(texts) > 1000),
                          ENCODE_CHUNK, deadline, f"{encoder.name} {what}")
    vectors = np.concatenate([np.load(name) for name in names]) if names else np.zeros((0, encoder.dim), np.float32)
    np.save(path, vectors)
    shutil.rmtree(path.with_suffix(".parts"))
    return vectors


def batches(n: int, batch_size: int, seed: int) -> Iterator[list[int]]:
    """Endless batches of pair indices, reshuffled every epoch (seeded, so a resumed run can skip)."""
    for epoch in itertools.count():
        order = list(range(n))
        random.Random(f"{seed}-{epoch}").shuffle(order)
        yield from (order[i : i + batch_size] for i in range(0, n - batch_size + 1, batch_size))


def percentiles(values: Sequence[float]) -> list[float]:
    """The 1st and 99th percentiles of ``values``."""
    return [float(np.percentile(values, 1)), float(np.percentile(values, 99))]


def minmax_constants(scorer: SSREMScorer, conversations: list, limit: int, per_type: int,
                     min_tokens: int = 0) -> dict:
    """1st / 99th percentiles of ``f`` over validation candidates (true + negatives) and of ``g``
    (each mover mode) between every negative and its true response."""
    sampler = NegativeSampler(conversations, min_tokens)
    splits = [split_of(c) for c in conversations]
    targets = [t for t in sampler.responses() if splits[sampler.utterances[t].conversation] == "validation"]
    random.Random("ssrem-minmax").shuffle(targets)
    contexts, responses, negatives, truths = [], [], [], []
    for t in targets[:limit]:
        ids, _ = sampler.candidates(t, per_type, "speaker", random.Random(f"minmax-{t}"))
        context = sampler.context(t, scorer.context_turns)
        contexts += [context] * len(ids)
        responses += [sampler.utterances[i].text for i in ids]
        negatives += [sampler.utterances[i].text for i in ids[1:]]
        truths += [[sampler.utterances[t].text]] * (len(ids) - 1)
    f = scorer.f(contexts, responses)
    g = {mode: percentiles(scorer.g(negatives, truths, mode)) for mode in MOVER_MODES}
    return {"f": percentiles(f), "g": g, "pairs": min(limit, len(targets)), "split": "validation",
            "statistic": "1st and 99th percentiles"}


def train(args: argparse.Namespace, output: Path) -> dict:
    """One training run as ``training/ssrem.py`` parses its options: ``M`` trained with the candidate
    loss, then the min-max constants and the held-out comparison; returns the training report."""
    started = time.time()
    conversations = load_corpus(args.corpus)
    if args.tiny or args.max_conversations:
        conversations = conversations[: 60 if args.tiny else args.max_conversations]
    train_convs = split_corpus(conversations)["train"]
    sampler = NegativeSampler(train_convs, args.min_tokens)
    targets = [t for t in sampler.responses() if word_count(sampler.utterances[t].text) >= args.target_min_tokens]
    if len(targets) < args.batch_size:
        raise ValueError(f"{args.corpus}: {len(targets)} training pairs, fewer than --batch-size {args.batch_size}")
    encoder = make_encoder(args.encoder, args.device)
    texts = [u.text for u in sampler.utterances]
    deadline = started + 60 * args.minutes if args.minutes else None  # the run's budget covers the encoding
    check_pooling(encoder, args.context_pooling)
    utterance_vectors = encode_cached(encoder, texts, "utterances", deadline)
    if args.context_pooling == "turns":  # v(c) from the utterance table: no context is encoded again
        contexts = pool_turns(utterance_vectors, [sampler.context_ids(t, args.context_turns) for t in targets])
    else:
        contexts = encode_cached(encoder, [" ".join(sampler.context(t, args.context_turns)) for t in targets],
                                 f"contexts{args.context_turns}", deadline)
    U, C = torch.from_numpy(utterance_vectors), torch.from_numpy(contexts)
    center = None
    if args.center and isinstance(encoder, WordAverageEncoder):  # v - mean v over training utterances
        known = U.abs().sum(1) > 0
        center = [round(float(x), 7) for x in U[known].double().mean(0)]  # as stored in config.json
        shift = torch.tensor(center, dtype=U.dtype)
        U = torch.where(known[:, None], U - shift, U)
        C = torch.where((C.abs().sum(1) > 0)[:, None], C - shift, C)

    resumed = args.resume and (output / WEIGHTS_FILE).is_file()
    module = load_module(output) if resumed else bilinear_module(encoder.dim)
    config = {"architecture": "ssrem-bilinear", "encoder": args.encoder, "dim": encoder.dim,
              "context_turns": args.context_turns, "context_pooling": args.context_pooling,
              "negatives": args.negatives, "per_type": args.per_type, "min_tokens": args.min_tokens,
              "target_min_tokens": args.target_min_tokens, "corpus": args.corpus, "split_seed": SPLIT_SEED}
    if center is not None:
        config["center"] = center
    if args.identity_penalty:
        config["identity_penalty"] = args.identity_penalty
    state = load_state(output, args.resume, args, lambda: {
        "corpus": {"conversations": len(conversations), "train_conversations": len(train_convs),
                   "train_pairs": len(targets), "speakers": len({u.speaker for u in sampler.utterances})},
        "drawn_types": {},
    })
    print(f"{len(targets)} training pairs from {len(train_convs)} conversations; encoder {encoder.name} "
          f"({encoder.dim}-d); negatives {args.negatives}", flush=True)

    trained = module
    if args.identity_penalty:
        if not resumed:
            with torch.no_grad():
                module.M.copy_(torch.eye(encoder.dim))
        trained = IdentityAnchored(module, args.identity_penalty, state.get("log_scale", 0.0))
    plan = itertools.islice(batches(len(targets), args.batch_size, args.seed), state["step"], None)

    def step_loss(step: int) -> torch.Tensor:
        rng = random.Random(f"{args.seed}-step-{step}")
        rows, counts = [], state["drawn_types"]
        for k in next(plan):
            ids, types = sampler.candidates(targets[k], args.per_type, args.negatives, rng)
            rows.append((k, ids))
            for t in types[1:]:
                counts[t] = counts.get(t, 0) + 1
        c = C[[k for k, _ in rows]]
        r = U[torch.tensor([ids for _, ids in rows])]
        loss = candidate_loss(trained(c, r))
        return loss + trained.regularizer() if trained is not module else loss

    def save() -> None:
        if trained is not module:
            state["log_scale"] = round(float(trained.log_scale), 6)
        save_model(output, module, config)
        (output / STATE_FILE).write_text(json.dumps(state, indent=1))

    left = None if deadline is None else max(1e-3, (deadline - time.time()) / 60)  # what the encoding left
    run_steps(trained, step_loss, state, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=left, save_every=args.save_every)
    save()

    scorer = SSREMScorer(output, device=args.device)
    config["minmax"] = minmax_constants(scorer, conversations, 60 if args.tiny else args.minmax_pairs, args.per_type,
                                        args.min_tokens)
    save()
    scorer = SSREMScorer(output, device=args.device)
    state["heldout"] = heldout_negatives(scorer, conversations, "test",
                                               limit=40 if args.tiny else args.heldout_pairs)
    state["wall_minutes"] = round(state.get("wall_minutes", 0.0) + (time.time() - started) / 60, 2)
    save()
    return state


def report_line(state: dict) -> str:
    """One line of the report's held-out numbers."""
    held = state["heldout"]
    f = ", ".join(f"{k} {v['mean']:.3f}" for k, v in held["f"].items())
    wins = ", ".join(f"{k} {v['mean']:.3f}" for k, v in held["win_rate"].items())
    return f"held-out {held['pairs']} pairs: mean f {f}; P(f(true) > f(neg)) {wins}"
