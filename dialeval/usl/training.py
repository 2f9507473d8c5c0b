"""Training USL-H's parts on DailyDialog (``training/usl.py`` parses the options and calls :func:`train`).

* **U** (valid utterance prediction): responses of the training split (every turn after the first, at
  least one word, distinct), each as its positive and, from 3 tokens on, its negative
  (:mod:`dialeval.usl.perturb`); a head on the frozen single-text features learns to tell them apart,
  and, with ``--u-lora`` (the default), a LoRA adapter on the encoder's top ``--u-top`` layers with a
  linear head learns it over the cached states entering them (:mod:`dialeval.usl.u_tuning`): that U is
  the folder's, the frozen head's accuracy kept beside it in the report.
* **S** (next utterance prediction): (context, response) pairs of the training split (the context:
  up to the :data:`CONTEXT_TURNS` turns before the response), each with its true response (label 1)
  and a random response (label 0) drawn uniformly from the responses of the sampled pairs (the
  authors' ``NUPDataset`` draws from all training responses; the sampled pairs' responses are a
  uniform sample of them, and their features are computed already); a head on the frozen dual
  features ``[c; r; c*r; |c-r|]`` (``--s-input dual``, :func:`dialeval.usl.features.dual`) or on
  the pair read together (``pair``).
* **L**: the NLL of the validation split's responses under the LM (:mod:`dialeval.usl.likelihood`); its
  quartiles are L's normalisation (the authors' ``normalize.py`` on the validation responses).

The same recipe on the validation split (drawn first, so the same items whatever the training sizes)
gives the held-out accuracies that choose the head's hidden size (:data:`HIDDEN_CHOICES`) and
stopping epoch, per part; no human rating is read. Each distinct text (U's texts and S's responses
share one table) and context is encoded once; the features are cached under ``$DIALEVAL_CACHE/usl``
in chunks saved as they are done, so an interrupted run (or one stopped by ``--minutes``) resumes
where it stopped; so is the LM's NLL.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from dialeval.core.chunk_cache import ChunksPaused, cached_array
from dialeval.core.progress import Progress
from dialeval.core.resources import cache_dir
from dialeval.core.training import STATE_FILE
from dialeval.data.corpora import dailydialog
from dialeval.usl import perturb
from dialeval.usl.features import FrozenEncoder, dual
from dialeval.usl.formula import quartiles
from dialeval.usl.heads import head, save_folder, stored
from dialeval.usl.likelihood import ResponseNLL
from dialeval.usl.tuned import ADAPTER_DIR, save_tuned_top

CONTEXT_TURNS = 3
CHUNK = 256  # texts (or pairs) per cached chunk
HIDDEN_CHOICES = (0, 256)  # 0: the paper's linear layer
EPOCHS = 30
BATCH = 64
# the bundled model's training responses for U and pairs for S (training/usl.py's defaults): on
# all-mpnet-base-v2, 20,000 beat 4,000 in validation accuracy (benchmarks/results/usl-choices.md)
TRAINING_SIZE = 20000


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


def s_examples(pairs: Sequence[tuple[list[str], str]], rng: random.Random
               ) -> tuple[list[list[str]], list[str], list[int]]:
    """``(contexts, responses, labels)``: each pair with its true response (1) and the response of a
    uniformly drawn pair (0)."""
    contexts, responses, labels = [], [], []
    for context, response in pairs:
        contexts += [context, context]
        responses += [response, pairs[rng.randrange(len(pairs))][1]]
        labels += [1, 0]
    return contexts, responses, labels


def distinct_rows(rows: Sequence) -> tuple[list, np.ndarray]:
    """``(table, index)``: the distinct rows in first-seen order and each row's place in it."""
    keys = [json.dumps(row) for row in rows]
    places = dict.fromkeys(keys)
    for n, key in enumerate(places):
        places[key] = n
    table = [json.loads(key) for key in places]
    return table, np.fromiter((places[k] for k in keys), dtype=np.int64, count=len(keys))


def cached(name: str, rows: Sequence, compute: Callable[[Sequence], np.ndarray], deadline: float | None) -> np.ndarray:
    """``compute(rows)`` in chunks of :data:`CHUNK`, each saved under ``$DIALEVAL_CACHE/usl/<name>-<hash>/``
    when done and reused by the next run (:func:`dialeval.core.chunk_cache.cached_array`); :class:`TimeUp`
    when ``deadline`` passes before a missing chunk."""
    return cached_array(cache_dir() / "usl", name, rows, compute, CHUNK, deadline, f"usl {name}")


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
    with Progress(EPOCHS, f"usl head (hidden {hidden})", unit="epoch") as bar:  # shown once it has taken 10 s
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
            bar.update(1)
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


@dataclass
class Drawn:
    """The examples of a run: U's texts and labels, S's rows and labels, training and validation, L's texts."""

    ut: list[str]
    uy: list[int]
    uvt: list[str]
    uvy: list[int]
    uv_kinds: list[str]
    sc: list[list[str]]
    sr: list[str]
    sy: list[int]
    svc: list[list[str]]
    svr: list[str]
    svy: list[int]
    nll_texts: list[str]
    train_pool: int


def draw(args: argparse.Namespace) -> Drawn:
    """The examples of ``args`` (module docstring), the validation ones drawn first: the same validation
    items whatever ``--u-responses`` and ``--s-pairs``."""
    rng = random.Random(args.seed)
    train_dialogues, valid_dialogues = dailydialog("train"), dailydialog("validation")
    if args.tiny:
        train_dialogues, valid_dialogues = train_dialogues[:40], valid_dialogues[:20]
    train_pairs, valid_pairs = responses_of(train_dialogues), responses_of(valid_dialogues)
    valid_pool = list(dict.fromkeys(r for _, r in valid_pairs))
    u_valid, s_valid = sample(valid_pool, args.valid, rng), sample(valid_pairs, args.valid, rng)
    uvt, uvy, uv_kinds = u_examples(u_valid, rng)
    svc, svr, svy = s_examples(s_valid, rng)
    nll_texts = sample(valid_pool, args.nll_responses, rng)
    pool = list(dict.fromkeys(r for _, r in train_pairs))
    u_train, s_train = sample(pool, args.u_responses, rng), sample(train_pairs, args.s_pairs, rng)
    ut, uy, _ = u_examples(u_train, rng)
    sc, sr, sy = s_examples(s_train, rng)
    return Drawn(ut, uy, uvt, uvy, uv_kinds, sc, sr, sy, svc, svr, svy, nll_texts, len(pool))


def encode(args: argparse.Namespace, encoder: FrozenEncoder, d: Drawn, deadline: float | None
           ) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """``({"u", "uv", "s", "sv"}: features, counts of the texts and contexts encoded)``, each distinct text
    and context encoded once and cached (:func:`cached`)."""
    texts, text_at = distinct_rows(d.ut + d.uvt + (d.sr + d.svr if args.s_input == "dual" else []))
    x_text = cached(f"{args.encoder}-texts", texts, lambda rows: encoder.single(list(rows), progress=False), deadline)
    n_u, n_uv = len(d.ut), len(d.uvt)
    x = {"u": x_text[text_at[:n_u]], "uv": x_text[text_at[n_u:n_u + n_uv]]}
    counts = {"encoded_texts": len(texts), "encoded_contexts": 0}
    if args.s_input == "dual":
        contexts, context_at = distinct_rows(d.sc[::2] + d.svc[::2])  # each pair's two rows share the context
        x_context = cached(f"{args.encoder}-contexts", contexts,
                           lambda rows: encoder.contexts(list(rows), progress=False), deadline)
        both = dual(x_context[np.repeat(context_at, 2)], x_text[text_at[n_u + n_uv:]])
        x["s"], x["sv"] = both[:len(d.sc)], both[len(d.sc):]
        counts["encoded_contexts"] = len(contexts)
    else:
        paired = lambda rows: encoder.pairs([c for c, _ in rows], [r for _, r in rows], progress=False)  # noqa: E731
        x["s"] = cached(f"{args.encoder}-s-train", list(zip(d.sc, d.sr)), paired, deadline)
        x["sv"] = cached(f"{args.encoder}-s-valid", list(zip(d.svc, d.svr)), paired, deadline)
    return x, counts


def tune_u(args: argparse.Namespace, encoder: FrozenEncoder, d: Drawn, deadline: float | None
           ) -> tuple[Any, torch.nn.Module, np.ndarray, dict]:
    """U's own LoRA-tuned top layers and head (:func:`dialeval.usl.u_tuning.tune_u`, ``--u-lora`` rank on the
    top ``--u-top`` layers), the head as the folder keeps it: ``(tuned top, head, correct per validation
    text, report)``."""
    from dialeval.usl import u_tuning

    learner, u_head, report = u_tuning.tune_u(encoder, d.ut, d.uy, d.uvt, d.uvy, top=args.u_top, rank=args.u_lora,
                                              lr=args.u_lr, epochs=args.u_epochs, seed=args.seed, deadline=deadline)
    u_head = stored(u_head)
    correct = u_tuning.validation_correct(encoder, learner, args.u_top, u_head, d.uvt, d.uvy)
    print(f"U tuned: epoch {report['epoch']} of {args.u_epochs}, validation accuracy {report['accuracy']:.4f} "
          f"(curve {report['curve']})", flush=True)
    return learner, u_head, correct, report


def train(args: argparse.Namespace, output: Path) -> dict:
    """The whole run (see the module docstring); writes the folder and returns its report."""
    started = time.time()
    deadline = started + 60 * args.minutes if args.minutes else None
    d = draw(args)
    encoder = FrozenEncoder(args.encoder, args.device)
    x, counts = encode(args, encoder, d, deadline)
    lm = ResponseNLL(args.lm, args.device)
    nll = cached("nll-" + lm.model_name.replace("/", "_"), d.nll_texts,
                 lambda rows: np.asarray(lm.nll(list(rows))), deadline)
    tuned = tune_u(args, encoder, d, deadline) if args.u_lora else None

    u_head, u_report = choose_head("U", x["u"], np.asarray(d.uy), x["uv"], np.asarray(d.uvy), args.lr, args.seed)
    s_head, s_report = choose_head("S", x["s"], np.asarray(d.sy), x["sv"], np.asarray(d.svy), args.lr, args.seed)
    u_head, s_head = stored(u_head), stored(s_head)  # as the folder keeps them (float16)
    with torch.no_grad():
        u_correct = (u_head(torch.from_numpy(x["uv"])).argmax(-1).numpy() == np.asarray(d.uvy))
        s_correct = (s_head(torch.from_numpy(x["sv"])).argmax(-1).numpy() == np.asarray(d.svy))
    u_report["stored_accuracy"] = round(float(u_correct.mean()), 4)
    s_report["stored_accuracy"] = round(float(s_correct.mean()), 4)
    u_report["by_kind"] = accuracy_by(d.uv_kinds, u_correct)
    low, high = quartiles(nll.tolist())
    config = {"encoder": args.encoder, "dim": int(x["u"].shape[1]), "s_input": args.s_input,
              "hidden_u": u_report["hidden"], "hidden_s": s_report["hidden"], "lm": args.lm, "lm_id": lm.model_name,
              "nll_quartiles": [low, high]}
    if tuned is not None:  # U reads its tuned top: the frozen head's numbers stay in the report beside it
        learner, u_head, u_correct, tuning = tuned
        u_report = {"frozen_head": u_report, "tuned": tuning, "accuracy": tuning["accuracy"], "hidden": 0,
                    "stored_accuracy": round(float(u_correct.mean()), 4),
                    "by_kind": accuracy_by(d.uv_kinds, u_correct)}
        config.update(hidden_u=0, u_top=args.u_top)
    save_folder(output, {"u": u_head, "s": s_head}, config)
    adapter = output / ADAPTER_DIR
    shutil.rmtree(adapter, ignore_errors=True)  # a former run's adapter never outlives its config
    if tuned is not None:
        save_tuned_top(output, tuned[0], encoder, args.u_top)
    report = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "data": {"u_train_texts": len(d.ut), "u_valid_texts": len(d.uvt), "s_train_pairs": len(d.sc),
                 "s_valid_pairs": len(d.svc), "nll_responses": len(d.nll_texts), "train_pool": d.train_pool, **counts},
        "u": u_report, "s": s_report,
        "l": {"quartiles": [round(low, 4), round(high, 4)], "median": round(float(np.median(nll)), 4)},
        "wall_minutes": round((time.time() - started) / 60, 1),
    }
    (output / STATE_FILE).write_text(json.dumps(report, indent=1) + "\n")
    return report
