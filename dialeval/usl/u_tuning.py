"""Training U's own top encoder layers (:mod:`dialeval.usl.tuned`) over cached hidden states, resumable by epoch.

The paper fine-tunes BERT for U. Here the encoder below U's top ``top`` layers stays frozen, so the
hidden states entering them are computed once per text and cached in float16 (:func:`cached_states`,
in chunks a later run resumes); then a LoRA adapter on those layers (:func:`dialeval.usl.tuned.lora_config`)
and U's linear head over the same ``[max; mean]`` pooling learn together (:func:`run_epochs`: AdamW,
weight decay 0.01, length batches of at most :data:`BATCH` texts, their order shuffled again each epoch,
cross-entropy). After each epoch U's validation accuracy is read as the scorer reads U (the frozen
encoder's forward, then the tuned top, in float32: :meth:`dialeval.usl.features.FrozenEncoder.single`)
and the epoch is saved (adapter, head, optimiser and random state), so an interrupted run, or one
stopped by its deadline, goes on from its last epoch with the same command and the same result. The
kept epoch is the first of best validation accuracy (:func:`tune_u`); no human rating is read.

On all-mpnet-base-v2's top layer (rank 16, lr 5e-4; ``benchmarks/results/usl-finetune.md``): 19.6 min
of states on two threads, then 4.3-4.9 min an epoch; validation accuracy 0.806 (the frozen head) -> 0.874.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from dialeval.core.chunk_cache import ChunksPaused, cached_array
from dialeval.core.progress import Progress
from dialeval.core.resources import cache_dir

BATCH = 32
STATES_CHUNK = 256  # texts per cached chunk of states (as dialeval.usl.training.CHUNK: the same chunk files)
WEIGHT_DECAY = 0.01
STATE = "state.pt"  # an epoch's optimiser, random state and validation accuracy
KEY_FORMAT = 1  # of the settings that key a run's saved epochs (tune_u)


def cached_states(encoder: Any, texts: Sequence[str], top: int, deadline: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(states, lengths)``: :meth:`dialeval.usl.features.FrozenEncoder.top_inputs` of each text (already
    cut: :meth:`~dialeval.usl.features.FrozenEncoder.cut_response` or ``cut_context``), padded to the
    longest, at least a cut response's ``[CLS]`` + :data:`dialeval.usl.features.RESPONSE_TOKENS` +
    ``[SEP]``; cached in chunks under ``$DIALEVAL_CACHE/usl`` (:func:`dialeval.core.chunk_cache.cached_array`);
    and each text's token count."""
    from dialeval.usl.features import RESPONSE_TOKENS

    lengths = encoder.token_counts(texts)
    width = max(int(lengths.max()), RESPONSE_TOKENS + 2)
    name = f"{encoder.name}-states-top{top}" + ("" if width == RESPONSE_TOKENS + 2 else f"-width{width}")
    states = cached_array(cache_dir() / "usl", name, list(texts), lambda rows: encoder.top_inputs(rows, top, False, width),
                          STATES_CHUNK, deadline, f"usl {name}")
    return states, lengths


def validation_correct(encoder: Any, learner: Any, top: int, head: torch.nn.Module, texts: Sequence[str],
                       labels: Sequence[int]) -> np.ndarray:
    """Whether ``head`` over U's tuned top (``learner`` on the top ``top`` layers) classifies each text as
    ``labels`` says, U read as the scorer reads it (:meth:`dialeval.usl.features.FrozenEncoder.single`)."""
    with torch.no_grad():
        tuned = encoder.single(texts, progress=False, tuned=(learner, top))[1]
        return head(torch.from_numpy(tuned)).argmax(-1).numpy() == np.asarray(labels)


def pooled_states(learner: Any, states: np.ndarray, lengths: np.ndarray, idx: np.ndarray) -> torch.Tensor:
    """``[max; mean]`` of ``learner``'s last states over the cached states of rows ``idx`` (float32)."""
    from dialeval.usl.features import max_mean

    width = int(lengths[idx].max())
    hidden = torch.from_numpy(states[idx, :width].astype(np.float32))
    mask = torch.from_numpy((np.arange(width)[None, :] < lengths[idx][:, None]).astype(np.int64))
    return max_mean(learner(inputs_embeds=hidden, attention_mask=mask).last_hidden_state, mask)


def save_epoch(folder: Path, learner: Any, head: torch.nn.Module, optimiser: Any, accuracy: float,
               minutes: float) -> None:
    """Epoch ``folder``: the adapter (``u_encoder/``), U's head (``u_head.safetensors``) and :data:`STATE`
    (the optimiser, the random state, the validation accuracy and the epoch's wall minutes; written last:
    an epoch without it is not done)."""
    from safetensors.torch import save_file

    from dialeval.usl.tuned import ADAPTER_DIR

    folder.mkdir(parents=True, exist_ok=True)
    learner.save_pretrained(str(folder / ADAPTER_DIR))
    save_file({k: v.contiguous() for k, v in head.state_dict().items()}, str(folder / "u_head.safetensors"))
    torch.save({"optimiser": optimiser.state_dict(), "rng": torch.get_rng_state(), "accuracy": accuracy,
                "minutes": minutes}, folder / STATE)


def load_epoch(folder: Path, learner: Any, head: torch.nn.Module) -> dict:
    """The adapter and head of epoch ``folder`` into ``learner`` and ``head``; its :data:`STATE`."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    from dialeval.usl.tuned import ADAPTER_DIR

    set_peft_model_state_dict(learner, load_file(str(folder / ADAPTER_DIR / "adapter_model.safetensors")))
    head.load_state_dict(load_file(str(folder / "u_head.safetensors")))
    return torch.load(folder / STATE, weights_only=False)


def done_epochs(folder: Path | None) -> list[Path]:
    """The saved epochs under ``folder`` (``epoch-1``, ``epoch-2``, ...), in order, each with its :data:`STATE`."""
    found = []
    while folder is not None and (folder / f"epoch-{len(found) + 1}" / STATE).is_file():
        found.append(folder / f"epoch-{len(found) + 1}")
    return found


def run_epochs(learner: Any, head: torch.nn.Module, pooled: Callable[[np.ndarray], torch.Tensor],
               labels: Sequence[int], batches: list[list[int]], validate: Callable[[], float], *, epochs: int,
               lr: float, folder: Path | None = None, deadline: float | None = None, what: str = "usl U tuning"
               ) -> list[tuple[float, float]]:
    """Train ``learner``'s trainable weights and ``head`` on ``head(pooled(rows))`` against ``labels`` for
    ``epochs`` epochs (module docstring); ``validate()`` after each. With ``folder`` each epoch is saved
    there and a run finding saved epochs goes on after the last; past ``deadline`` (``time.time()``)
    between epochs it stops with :class:`dialeval.core.chunk_cache.ChunksPaused`; ``what`` names the run in
    its progress. ``(validation accuracy, wall minutes)`` per epoch."""
    params = [p for p in learner.parameters() if p.requires_grad] + list(head.parameters())
    optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=WEIGHT_DECAY)
    saved = done_epochs(folder)[:epochs]
    kept = [torch.load(epoch_dir / STATE, weights_only=False) for epoch_dir in saved]
    curve = [(state["accuracy"], state["minutes"]) for state in kept]
    order = list(batches)
    for epoch in range(len(saved)):  # each epoch shuffles the previous epoch's order
        random.Random(epoch).shuffle(order)
    if saved:
        state = load_epoch(saved[-1], learner, head)
        optimiser.load_state_dict(state["optimiser"])
        torch.set_rng_state(state["rng"])
        print(f"resumed after epoch {len(saved)} ({saved[-1]})", flush=True)
    target = torch.tensor(list(labels))
    for epoch in range(len(saved), epochs):
        if deadline is not None and time.time() > deadline:
            where = f"saved in {folder}; run the same command again to go on" if folder else "nothing saved"
            raise ChunksPaused(f"time is up after epoch {epoch} of {epochs}, {where}")
        random.Random(epoch).shuffle(order)
        started = time.time()
        learner.train(), head.train()
        with Progress(len(order), f"{what}, epoch {epoch + 1}/{epochs}", unit="batch") as bar:
            for batch in order:
                idx = np.array(batch)
                loss = torch.nn.functional.cross_entropy(head(pooled(idx)), target[idx])
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                bar.update(1)
        learner.eval(), head.eval()
        accuracy = validate()
        curve.append((accuracy, round((time.time() - started) / 60, 2)))
        print(f"epoch {epoch + 1}: validation accuracy {accuracy:.4f} ({curve[-1][1]} min)", flush=True)
        if folder is not None:
            save_epoch(folder / f"epoch-{epoch + 1}", learner, head, optimiser, *curve[-1])
    return curve


def tune_u(encoder: Any, texts: Sequence[str], labels: Sequence[int], valid_texts: Sequence[str],
           valid_labels: Sequence[int], *, top: int, rank: int, lr: float, epochs: int, seed: int = 0,
           deadline: float | None = None) -> tuple[Any, torch.nn.Module, dict]:
    """U's tuned top (rank-``rank`` LoRA on ``encoder``'s top ``top`` layers) and linear head, trained on
    ``texts`` (module docstring) and kept at the first epoch of best validation accuracy:
    ``(learner in eval mode, head, report)``; the report has the accuracy per epoch and the one kept.
    Epochs are saved under ``$DIALEVAL_CACHE/usl/u-tuning-<key>`` (the key hashes the texts, labels and
    every setting the result depends on). On the CPU (``training/usl.py`` refuses another device)."""
    from peft import get_peft_model

    from dialeval.core.batching import length_batches
    from dialeval.usl.heads import DROPOUT, head as fresh_head
    from dialeval.usl.tuned import lora_config, top_model

    texts = [encoder.cut_response(t) for t in texts]
    config = lora_config(rank)  # its alpha, dropout and target maps key the saved epochs too
    settings = [KEY_FORMAT, encoder.name, top, rank, config.lora_alpha, config.lora_dropout, str(config.target_modules),
                DROPOUT, BATCH, WEIGHT_DECAY, lr, seed, list(texts), list(labels), list(valid_texts), list(valid_labels)]
    key = hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:16]
    folder = cache_dir() / "usl" / f"u-tuning-{key}"
    states, lengths = cached_states(encoder, texts, top, deadline)
    torch.manual_seed(seed)
    for p in encoder.model.parameters():
        p.requires_grad = False
    learner = get_peft_model(top_model(encoder.model, top), config)
    head = fresh_head(encoder.dim, 0)
    batches = length_batches(lengths.tolist(), BATCH)

    def validate() -> float:
        return float(validation_correct(encoder, learner, top, head, valid_texts, valid_labels).mean())

    curve = run_epochs(learner, head, lambda idx: pooled_states(learner, states, lengths, idx), labels, batches,
                       validate, epochs=epochs, lr=lr, folder=folder, deadline=deadline)
    accuracies = [accuracy for accuracy, _ in curve]
    best = int(np.argmax(accuracies))  # the first of the best
    load_epoch(folder / f"epoch-{best + 1}", learner, head)
    report = {"top": top, "rank": rank, "lr": lr, "epochs": epochs, "curve": [round(a, 4) for a in accuracies],
              "epoch": best + 1, "accuracy": round(accuracies[best], 4), "states_texts": len(texts),
              "epoch_minutes": [minutes for _, minutes in curve]}
    return learner.eval(), head.eval(), report
