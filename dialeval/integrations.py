"""``transformers.Trainer`` integration: score a model's generations with dialeval metrics while it trains.

:func:`compute_metrics` returns the function ``Trainer(compute_metrics=...)`` /
``Seq2SeqTrainer(compute_metrics=...)`` calls after each evaluation loop. It

1. turns ``EvalPrediction.predictions`` into token ids (a tuple's first element; logits are reduced
   with ``argmax``; ``-100`` is replaced by the pad id) and decodes them with ``skip_special_tokens``;
2. takes the references from ``references`` (several per item allowed) or, when none are given,
   decodes ``EvalPrediction.label_ids`` the same way (one reference per item);
3. scores every decoded generation with each chosen metric through :mod:`dialeval.scoring.runners` (the
   scorers are loaded once per process and cached there, so evaluating every N steps reloads
   nothing), and
4. returns flat floats named ``<metric>_<sub-metric>`` (the mean over items; only items a sub-score
   does not apply to, NaN, are left out) and ``skipped_rows``,
   which ``Trainer`` logs as ``eval_<metric>_<sub-metric>``. A sub-score with no value for any item
   (holistic diversity when no two generations share a group) is left out with a warning, never
   logged as NaN.

Empty generations (a model early in training often produces them) are scored, not rejected: like
every degenerate response (:mod:`dialeval.core.degenerate`) they get each sub-score's worst value
(a bound, or the declared floor of an unbounded score), so they lower the logged means and are
never left out of them. A row without a reference (a label row fully masked to ``-100``, or empty
``references``) is skipped, with a warning, and counted in the logged ``skipped_rows``.

Example (``Seq2SeqTrainingArguments(predict_with_generate=True)``; for a causal LM ``Trainer`` pass
``preprocess_logits_for_metrics=lambda logits, labels: logits.argmax(-1)``)::

    from dialeval.integrations import compute_metrics
    trainer = Seq2SeqTrainer(..., compute_metrics=compute_metrics(tokenizer, metrics=["multiref"]))
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from dialeval import registry
from dialeval.core.options import check_names
from dialeval.scoring.runners import RUNNERS, get_runner

SKIPPED = "skipped_rows"  # logged as eval_skipped_rows: rows without a reference, not scored


def decode(tokenizer: Any, ids: Any, ignore_index: int = -100) -> list[str]:
    """Token ids (or logits, reduced with argmax) -> stripped texts, special tokens removed."""
    if isinstance(ids, tuple):  # (generated ids, other model outputs...)
        ids = ids[0]
    array = np.asarray(ids)
    if array.dtype.kind == "f":
        array = array.argmax(-1)
    if array.ndim != 2:
        raise ValueError(f"expected a (batch, length) array of token ids, got shape {array.shape}")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    array = np.where(array == ignore_index, pad, array)
    return [text.strip() for text in tokenizer.batch_decode(array.tolist(), skip_special_tokens=True)]


def compute_metrics(
    tokenizer: Any,
    metrics: str | Sequence[str] | None = None,
    references: Sequence[Sequence[str]] | None = None,
    contexts: Sequence[Sequence[str]] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    ignore_index: int = -100,
) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics`` function for ``transformers.Trainer`` scoring generations with dialeval.

    ``metrics`` defaults to the reference-based word-overlap metrics (``MetricSpec.trainer_default``:
    multiref, which needs only the labels). ``references[i]`` / ``contexts[i]`` belong to the ``i``-th
    example of the evaluation set (its order is kept by ``Trainer``); ``options`` maps a metric name
    to its runner options, e.g. ``{"multiref": {"metrics": ["bleu2", "rougeL"]}}``.
    """
    if metrics is None:
        metrics = [spec.name for spec in registry.specs() if spec.trainer_default]
    names = check_names("metrics", metrics, sorted(RUNNERS))
    options = dict(options or {})
    extra = sorted(set(options) - set(names))
    if extra:
        raise ValueError(f"options given for metrics that are not computed: {extra} (metrics={list(names)})")

    def score(eval_prediction: Any) -> dict[str, float]:
        predictions = decode(tokenizer, eval_prediction.predictions, ignore_index)
        refs = references if references is not None else [
            [r] for r in decode(tokenizer, eval_prediction.label_ids, ignore_index)
        ]
        for given, what in ((refs, "references"), (contexts, "contexts")):
            if given is not None and len(given) != len(predictions):
                raise ValueError(f"{len(given)} {what} for {len(predictions)} evaluation examples")
        items = [
            {"context": list(contexts[i]) if contexts is not None else [], "response": text,
             "references": [r for r in ([refs[i]] if isinstance(refs[i], str) else refs[i]) if r.strip()]}
            for i, text in enumerate(predictions)
        ]
        kept = [it for it in items if it["references"]]
        out: dict[str, float] = {SKIPPED: float(len(items) - len(kept))}
        if len(kept) < len(items):
            warnings.warn(f"{len(items) - len(kept)} of {len(items)} evaluation rows have no reference (a label "
                          f"row fully masked to {ignore_index}, or empty references); skipped, counted in "
                          f"'{SKIPPED}'", stacklevel=2)
        if not kept:
            return out
        items = kept
        for name in names:
            per_item, _signature = get_runner(name)(items, **options.get(name, {}))
            for sub, values in per_item.items():
                kept = [v for v in values if not math.isnan(v)]
                if kept:
                    out[f"{name}_{sub}"] = float(np.mean(kept))
                else:
                    warnings.warn(f"{name} {sub}: no item has a value (e.g. diversity needs several "
                                  "generations per group); left out of the logged metrics", stacklevel=2)
        return out

    return score
