"""Training USL-H's parts on DailyDialog (``training/usl.py`` parses the options and calls :func:`train`).

* **U** (valid utterance prediction): responses of the training split (every turn after the first, at
  least one word, distinct), each as its positive and, from 3 tokens on, its negative
  (:mod:`dialeval.usl.perturb`); a head on the frozen single-text features learns to tell them apart.
* **S** (next utterance prediction): (context, response) pairs of the training split (the context:
  up to the :data:`CONTEXT_TURNS` turns before the response), each with its true response (label 1)
  and a random response of the training pool (label 0; the authors' ``NUPDataset`` draws it uniformly
  from all training responses); a head on the frozen pair features.
* **L**: the NLL of the validation split's responses under the LM (:mod:`dialeval.usl.likelihood`); its
  quartiles are L's normalisation (the authors' ``normalize.py`` on the validation responses).

The same recipe on the validation split gives the held-out accuracies that choose the head's hidden
size (:data:`HIDDEN_CHOICES`) and stopping epoch, per part; no human rating is read. Features are
cached under ``$DIALEVAL_CACHE/usl`` in chunks saved as they are done, so an interrupted run (or one
stopped by ``--minutes``) resumes where it stopped; so is the LM's NLL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from dialeval.core.chunk_cache import ChunksPaused, cached_chunks
from dialeval.core.resources import cache_dir
from dialeval.core.training import STATE_FILE
from dialeval.data.corpora import dailydialog
from dialeval.usl import perturb
from dialeval.usl.features import FrozenEncoder
from dialeval.usl.formula import quartiles
from dialeval.usl.heads import head, save_folder
from dialeval.usl.likelihood import ResponseNLL

CONTEXT_TURNS = 3
CHUNK = 256  # texts (or pairs) per cached chunk
HIDDEN_CHOICES = (0, 256)  # 0: the paper's linear layer
EPOCHS = 30
BATCH = 64


TimeUp = ChunksPaused  # ``--minutes`` ran out; the cached chunks stay and the same command goes on


def responses_of(dialogues: list[list[str]]) -> list[tuple[list[str], str]]:
    """Every (context, response) of the dialogues: the up to :data:`CONTEXT_TURNS` turns before each
    turn after the first."""
    return [(turns[max(0, i - CONTEXT_TURNS):i], turns[i]) for turns in dialogues for i in range(1, len(turns))]


def u_examples(responses: Sequence[str], rng: random.Random) -> tuple[list[str], list[int], list[str]]:
    """``(texts, labels, kinds)``: each response's positive, then its negative when it has one."""
    texts, labels, kinds = [], [], []
    for response in responses:
        kind, text = perturb.positive(response, rng)
        texts.append(text), labels.append(1), kinds.append(kind)
        corrupted = perturb.negative(response, rng)
        if corrupted is not None:
            texts.append(corrupted[1]), labels.append(0), kinds.append(corrupted[0])
    return texts, labels, kinds


def s_examples(pairs: Sequence[tuple[list[str], str]], pool: Sequence[str], rng: random.Random
               ) -> tuple[list[list[str]], list[str], list[int]]:
    """``(contexts, responses, labels)``: each pair with its true response (1) and a random one of ``pool`` (0)."""
    contexts, responses, labels = [], [], []
    for context, response in pairs:
        contexts += [context, context]
        responses += [response, pool[rng.randrange(len(pool))]]
        labels += [1, 0]
    return contexts, responses, labels


def cached(name: str, rows: Sequence, compute: Callable[[Sequence], np.ndarray], deadline: float | None) -> np.ndarray:
    """``compute(rows)`` in chunks of :data:`CHUNK`, each saved under ``$DIALEVAL_CACHE/usl/<name>-<hash>/``
    when done and reused by the next run (:func:`dialeval.core.chunk_cache.cached_chunks`); :class:`TimeUp`
    when ``deadline`` passes before a missing chunk."""
    key = hashlib.sha256(json.dumps([name, list(rows)]).encode()).hexdigest()[:16]
    parts = cached_chunks(cache_dir() / "usl" / f"{name}-{key}", rows, compute, CHUNK, deadline, f"usl {name}")
    return np.concatenate([np.load(p) for p in parts])


def fit_head(x: np.ndarray, y: np.ndarray, xv: np.ndarray, yv: np.ndarray, hidden: int, lr: float, seed: int
             ) -> tuple[torch.nn.Module, list[float]]:
    """A head trained on ``(x, y)`` for :data:`EPOCHS` epochs (Adam, weight decay 1e-5 as the authors),
    kept at the epoch of best validation accuracy; ``(head, validation accuracy per epoch)``."""
    torch.manual_seed(seed)
    module = head(x.shape[1], hidden)
    optimiser = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=1e-5)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    xvt, yvt = torch.from_numpy(xv), torch.from_numpy(yv).long()
    generator = torch.Generator().manual_seed(seed)
    best, best_state, curve = -1.0, None, []
    for _ in range(EPOCHS):
        module.train()
        for idx in torch.randperm(len(xt), generator=generator).split(BATCH):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(module(xt[idx]), yt[idx]).backward()
            optimiser.step()
        module.eval()
        with torch.no_grad():
            accuracy = float((module(xvt).argmax(-1) == yvt).float().mean())
        curve.append(round(accuracy, 4))
        if accuracy > best:
            best, best_state = accuracy, {k: v.clone() for k, v in module.state_dict().items()}
    module.load_state_dict(best_state)
    return module.eval(), curve


def choose_head(name: str, x, y, xv, yv, lr: float, seed: int) -> tuple[torch.nn.Module, dict]:
    """The head of best validation accuracy over :data:`HIDDEN_CHOICES`, and every choice's curve."""
    tried = {hidden: fit_head(x, y, xv, yv, hidden, lr, seed) for hidden in HIDDEN_CHOICES}
    hidden = max(tried, key=lambda h: max(tried[h][1]))
    report = {"hidden": hidden, "accuracy": max(tried[hidden][1]),
              "curves": {str(h): curve for h, (_, curve) in tried.items()}}
    print(f"{name}: hidden {hidden}, validation accuracy {report['accuracy']:.4f} "
          f"(tried {', '.join(f'{h}: {max(c):.4f}' for h, (_, c) in tried.items())})", flush=True)
    return tried[hidden][0], report


def accuracy_by(kinds: Sequence[str], correct: np.ndarray) -> dict[str, float]:
    """Validation accuracy per perturbation kind."""
    out = {}
    for kind in sorted(set(kinds)):
        mask = np.array([k == kind for k in kinds])
        out[kind] = {"n": int(mask.sum()), "accuracy": round(float(correct[mask].mean()), 4)}
    return out


def sample(rows: list, n: int | None, rng: random.Random) -> list:
    """``n`` of ``rows`` drawn without replacement (all when ``n`` is None or larger)."""
    return list(rows) if n is None or n >= len(rows) else rng.sample(rows, n)


def train(args: argparse.Namespace, output: Path) -> dict:
    """The whole run (see the module docstring); writes the folder and returns its report."""
    started = time.time()
    deadline = started + 60 * args.minutes if args.minutes else None
    rng = random.Random(args.seed)
    train_dialogues, valid_dialogues = dailydialog("train"), dailydialog("validation")
    if args.tiny:
        train_dialogues, valid_dialogues = train_dialogues[:40], valid_dialogues[:20]
    train_pairs, valid_pairs = responses_of(train_dialogues), responses_of(valid_dialogues)
    pool = list(dict.fromkeys(r for _, r in train_pairs))
    u_train = sample(pool, args.u_responses, rng)
    u_valid = sample(list(dict.fromkeys(r for _, r in valid_pairs)), args.valid, rng)
    s_train, s_valid = sample(train_pairs, args.s_pairs, rng), sample(valid_pairs, args.valid, rng)
    valid_pool = list(dict.fromkeys(r for _, r in valid_pairs))
    ut, uy, _ = u_examples(u_train, rng)
    uvt, uvy, uv_kinds = u_examples(u_valid, rng)
    sc, sr, sy = s_examples(s_train, pool, rng)
    svc, svr, svy = s_examples(s_valid, valid_pool, rng)
    nll_texts = sample(valid_pool, args.nll_responses, rng)

    encoder = FrozenEncoder(args.encoder, args.device)
    single = lambda rows: encoder.single(list(rows), progress=False)  # noqa: E731
    paired = lambda rows: encoder.pairs([c for c, _ in rows], [r for _, r in rows], progress=False)  # noqa: E731
    x_u = cached(f"{args.encoder}-u-train", ut, single, deadline)
    x_uv = cached(f"{args.encoder}-u-valid", uvt, single, deadline)
    x_s = cached(f"{args.encoder}-s-train", list(zip(sc, sr)), paired, deadline)
    x_sv = cached(f"{args.encoder}-s-valid", list(zip(svc, svr)), paired, deadline)
    lm = ResponseNLL(args.lm, args.device)
    nll = cached("nll-" + lm.model_name.replace("/", "_"), nll_texts, lambda rows: np.asarray(lm.nll(list(rows), progress=False)),
                 deadline)

    u_head, u_report = choose_head("U", x_u, np.asarray(uy), x_uv, np.asarray(uvy), args.lr, args.seed)
    s_head, s_report = choose_head("S", x_s, np.asarray(sy), x_sv, np.asarray(svy), args.lr, args.seed)
    with torch.no_grad():
        u_correct = (u_head(torch.from_numpy(x_uv)).argmax(-1).numpy() == np.asarray(uvy))
    u_report["by_kind"] = accuracy_by(uv_kinds, u_correct)
    low, high = quartiles(nll.tolist())
    config = {"encoder": args.encoder, "dim": int(x_u.shape[1]), "hidden_u": u_report["hidden"],
              "hidden_s": s_report["hidden"], "lm": args.lm, "lm_id": lm.model_name, "nll_quartiles": [low, high]}
    save_folder(output, {"u": u_head, "s": s_head}, config)
    report = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "data": {"u_train_texts": len(ut), "u_valid_texts": len(uvt), "s_train_pairs": len(sc),
                 "s_valid_pairs": len(svc), "nll_responses": len(nll_texts), "train_pool": len(pool)},
        "u": u_report, "s": s_report,
        "l": {"quartiles": [round(low, 4), round(high, 4)], "median": round(float(np.median(nll)), 4)},
        "wall_minutes": round((time.time() - started) / 60, 1),
    }
    (output / STATE_FILE).write_text(json.dumps(report, indent=1) + "\n")
    return report
