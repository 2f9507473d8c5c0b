"""What one GRADE run trains (:class:`Trainee`: the head and, with LoRA, the encoder's adapter) and
the training loop of one head (:func:`train_head`: margin ranking loss, held-out accuracy at every save)."""

from __future__ import annotations

import argparse
import itertools
import random
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch
from torch import nn

from dialeval.core.training import run_steps
from dialeval.grade.encoder import PairEncoder, dual_features
from dialeval.grade.model import GradeConfig, GradeHead, encoder_adapter_dir, ranking_loss, weights_file
from dialeval.grade.training.accuracy import heldout_accuracy
from dialeval.grade.training.examples import DEGENERATE_KINDS, KINDS
from dialeval.grade.training.split import Split


class Trainee(nn.Module):
    """What one run trains: the GRADE head and, with ``encoder_lora``, the encoder's LoRA adapter."""

    def __init__(self, head: GradeHead, encoder: PairEncoder | None, pair_encoding: str) -> None:
        super().__init__()
        self.head, self.pair_encoding = head, pair_encoding
        self.pair_encoder = encoder
        self.encoder = encoder.model if encoder is not None else None  # registered: its LoRA weights train

    def utterance_inputs(self, split: Split, kinds: Sequence[str], idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """The encoder inputs of the head for each kind of response (contexts embedded once per batch)."""
        if self.pair_encoder is None:
            return {k: split.encodings(k, idx) for k in kinds}
        ids = idx.tolist()
        contexts = [split.contexts[i] for i in ids]
        if self.pair_encoding == "dual":
            c = self.pair_encoder.pooled([" ".join(x) for x in contexts], normalize=True)
            r = self.pair_encoder.pooled([split.texts[k][i] for k in kinds for i in ids], normalize=True)
            return {k: dual_features(c, part) for k, part in zip(kinds, r.split(len(ids)))}
        return {k: self.pair_encoder.features(contexts, [split.texts[k][i] for i in ids], "cross") for k in kinds}

    def scores(self, split: Split, kinds: Sequence[str], idx: torch.Tensor, graph_order: torch.Tensor | None = None,
               utterance: bool = True) -> dict[str, torch.Tensor]:
        """Head scores of the pairs ``idx`` per kind of response; ``graph_order``: score pair ``i``
        with the keyword graph of pair ``graph_order[i]`` (the shuffled-graph control);
        ``utterance=False``: the utterance branch zeroed (the graph branch alone)."""
        out = {}
        device = self.device
        keep = self.head.utterance_keep(len(idx)) if utterance else torch.zeros(len(idx))  # one draw per context
        keep = keep.to(device) if keep is not None else None
        for kind, enc in self.utterance_inputs(split, kinds, idx).items():
            if not self.head.use_graph:
                out[kind] = self.head(enc.to(device))
                continue
            graph_idx = idx if graph_order is None else graph_order[idx]
            graph = [t.to(device) for t in split.graph_batch(kind, graph_idx)]
            out[kind] = self.head(enc.to(device), *graph, keep=keep)
        return out

    @property
    def device(self) -> torch.device:
        """Where the head's weights are: the split's tensors (on the CPU) are moved there per batch."""
        return next(self.head.parameters()).device

    def save(self, output: Path, encoder_hub_id: str, packages: dict[str, str]) -> None:
        """The head and, if fine-tuned, the encoder's adapter with its base record (:mod:`dialeval.models.hub`)."""
        self.head.save(output)
        if self.pair_encoder is None:
            return
        from dialeval.models import hub
        from dialeval.core.training import save_adapter

        folder = output / encoder_adapter_dir(self.head.use_graph)
        folder.mkdir(exist_ok=True)
        save_adapter(folder, self.encoder, encoder_hub_id)
        hub.write_base(folder, hub.BaseRecord(encoder_hub_id, self.pair_encoder.name, packages, self.pair_encoder.base_hash))


def lora_config(args: argparse.Namespace) -> Any:
    """LoRA on every attention and feed-forward projection of the encoder's layers (not the unused pooler)."""
    from peft import LoraConfig

    return LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                      target_modules=r".*encoder\.layer\.\d+\..*(query|key|value|dense)$", task_type="FEATURE_EXTRACTION")


def encoder_base(name: str) -> tuple[str, dict[str, str]]:
    """``(Hub id, pinned packages)`` of the encoder an adapter is trained over, for its base record."""
    from dialeval.models import hub
    from dialeval.core.nli import PYPI_ENCODERS

    if name in PYPI_ENCODERS:
        hub_id, distributions = PYPI_ENCODERS[name]
        return hub_id, hub.package_versions(*distributions)
    return name, {}


def weighted_loss(terms: Sequence[tuple[str, torch.Tensor]], extension_weight: float = 1.0) -> torch.Tensor:
    """The weighted mean of the kinds' ranking losses: weight 1 for the paper's kinds,
    ``extension_weight`` for :data:`DEGENERATE_KINDS` (``--extension-weight``; 1: the plain mean)."""
    weights = [extension_weight if kind in DEGENERATE_KINDS else 1.0 for kind, _ in terms]
    return sum(w * loss for w, (_, loss) in zip(weights, terms)) / sum(weights)


def shuffled_batches(n: int, batch_size: int, seed: str) -> Iterator[list[int]]:
    """Endless batches of ``batch_size`` indices of ``range(n)``: each pass a fresh shuffle by one
    ``random.Random(seed)``, its last partial batch dropped (one batch of all ``n`` when
    ``n < batch_size``). Batch ``s`` is the same whether a run starts at step 0 or resumes at ``s``
    (:func:`train_head` skips the batches of the steps already done)."""
    rng = random.Random(seed)
    while True:
        order = list(range(n))
        rng.shuffle(order)
        yield from (order[i : i + batch_size] for i in range(0, max(n - batch_size, 0) + 1, batch_size))


def train_head(args: argparse.Namespace, config: GradeConfig, graph: bool, train: Split, val: Split, state: dict,
               output: Path, save_all) -> GradeHead:
    key = "graph" if graph else "nograph"
    sub = state["heads"].setdefault(key, {"step": 0, "losses": []})
    torch.manual_seed(args.seed)
    head = GradeHead(config, graph)
    resume = args.resume and (output / weights_file(graph)).is_file() and sub["step"] > 0
    if resume:
        head = GradeHead.load(output, graph, config)
    encoder = None
    if config.encoder_lora:
        adapter = output / encoder_adapter_dir(graph) if resume else None
        encoder = PairEncoder(config.encoder, config.max_length, args.device, adapter=adapter,
                              lora=None if resume else lora_config(args), train=True)
    model = Trainee(head, encoder, config.pair_encoding).to(args.device)
    base = encoder_base(config.encoder)
    kinds = KINDS[args.negatives]
    order = itertools.islice(shuffled_batches(train.n, args.batch_size, f"{args.seed}-{key}"), sub["step"], None)

    def step_loss(step: int) -> torch.Tensor:
        idx = torch.tensor(next(order))
        scores = model.scores(train, ("positive", *kinds), idx)
        terms = []
        for kind in kinds:  # a kind missing for some contexts (salads) is averaged over the others
            keep = train.present(kind, idx).to(model.device)
            if keep.any():
                terms.append((kind, ranking_loss(scores["positive"][keep], scores[kind][keep])))
        return weighted_loss(terms, args.extension_weight)

    def save() -> None:
        sub.setdefault("heldout_curve", []).append([sub["step"], round(heldout_accuracy(model, val)["mean"], 4)])
        model.train()
        model.save(output, *base)
        save_all()

    t = time.time()
    run_steps(model, step_loss, sub, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=args.minutes, save_every=args.save_every, weight_decay=0.01)
    sub["heldout_accuracy"] = heldout_accuracy(model, val)
    sub["train_seconds"] = round(time.time() - t, 1)
    print(f"{key} head: held-out accuracy {sub['heldout_accuracy']}", flush=True)
    save()
    return head
