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

Without the Hub, :data:`LOCAL_NLI` is the offline stand-in: MiniLM-L6-H384 fine-tuned on local NLI
pairs by ``python training/nli.py`` and saved as ``models_dir()/minilm-nli``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from dialeval.models import resolve_model
from dialeval.text import check_same_length, check_texts

DEFAULT_NLI = "roberta-large-mnli"
LOCAL_NLI = "minilm-nli"


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


class NLIScorer:
    """Batched ``P(label | premise, hypothesis)`` from a sequence-classification NLI model.

    ``model`` is resolved by :func:`dialeval.models.resolve_model` (local directory, name under
    ``$DIALEVAL_MODELS`` such as :data:`LOCAL_NLI`, or Hub id). Pairs are truncated to
    ``max_length`` tokens (at most the model's and tokenizer's limits; longest side first, so
    both texts keep their beginnings), sorted by length and padded per batch of
    ``batch_size``; results come back in input order and do not depend on the batch size beyond
    float rounding.
    """

    def __init__(
        self, model: str = DEFAULT_NLI, device: str | None = None, batch_size: int = 32, max_length: int = 256
    ):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_length < 4:
            raise ValueError(f"max_length must be >= 4, got {max_length}")
        self.model_name = str(model)  # as given, for result signatures
        resolved = resolve_model(model, what="NLI classifier")
        local = Path(resolved).is_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(resolved, local_files_only=local)
        classifier = AutoModelForSequenceClassification.from_pretrained(resolved, local_files_only=local)
        self.labels = [classifier.config.id2label[i] for i in range(classifier.config.num_labels)]
        self.contradiction = contradiction_index(classifier.config.id2label)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model = classifier.to(self.device).eval()
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
        order = sorted(range(n), key=lambda i: len(features[i]["input_ids"]))
        out = torch.empty(n, len(self.labels), dtype=torch.float64)
        for start in range(0, n, self.batch_size):
            idx = order[start : start + self.batch_size]
            batch = self.tokenizer.pad([features[i] for i in idx], return_tensors="pt").to(self.device)
            logits = self.model(**batch).logits
            probs = torch.softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
            out[idx] = probs.to("cpu", torch.float64)
        return out
