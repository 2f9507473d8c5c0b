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
   does not apply to, NaN, are left out), beside each directed one ``<metric>_<sub-metric>_unflagged``
   (the mean over the generations no degenerate-response flag caught), ``<metric>_flagged`` (how
   many were caught; the reading of :mod:`dialeval.core.results`) and ``skipped_rows``, which
   ``Trainer`` logs as ``eval_<metric>_<sub-metric>`` and so on. A sub-score with no value for any item
   (holistic diversity when no two generations share a group; an unflagged mean when every
   generation is flagged) is left out, with a warning for the mean, never logged as NaN.

Empty generations (a model early in training often produces them) are scored, not rejected: like
every degenerate response (:mod:`dialeval.core.degenerate`) they get each sub-score's worst value
(a bound, or the declared floor of an unbounded score), so they lower the logged means and are
never left out of them; ``<metric>_flagged`` counts them. A row without a reference (a label row
fully masked to ``-100``, or empty ``references``) is scored by the reference-free metrics
(:func:`needs_references`) when ``contexts`` are given (one that reads references when it has them,
the combined metric, scores such rows in a call of their own, so that the other rows keep the
scores they get with their references); the metrics that need references, and every metric without
``contexts``, skip it, with a warning, and it is counted in the logged ``skipped_rows``.

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
from dialeval.core.results import FLAGGED, directed, flag_summary, flags_of
from dialeval.scoring.runners import RUNNERS, get_runner

SKIPPED = "skipped_rows"  # logged as eval_skipped_rows: rows without a reference, not scored


def needs_references(metric: str) -> bool:
    """Whether ``metric`` cannot score an item without references: as its spec declares for the demo,
    one of its choices (:attr:`dialeval.core.spec.DemoChoice.needs`) needs them."""
    return any("references" in choice.needs for choice in registry.spec(metric).demo)


def logged_means(metric: str, per_item: Mapping[str, Sequence[float]], flags: Sequence[Sequence[str]]
                 ) -> dict[str, float]:
    """``<metric>_<sub>`` (the mean, NaN left out), ``<metric>_<sub>_unflagged`` beside each directed
    one and ``<metric>_flagged``; a value that is NaN (no item has one) is left out, the mean with a
    warning."""
    out: dict[str, float] = {}
    readings = flag_summary(per_item, flags, directed(per_item, registry.spec(metric).scales()))
    for sub, values in per_item.items():
        kept = [v for v in values if not math.isnan(v)]
        if not kept:
            warnings.warn(f"{metric} {sub}: no item has a value (e.g. diversity needs several "
                          "generations per group); left out of the logged metrics", stacklevel=3)
            continue
        out[f"{metric}_{sub}"] = float(np.mean(kept))
        unflagged = readings.get(f"{sub}_unflagged", math.nan)
        if not math.isnan(unflagged):
            out[f"{metric}_{sub}_unflagged"] = float(unflagged)
    out[f"{metric}_{FLAGGED}"] = float(readings[FLAGGED])
    return out


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
        with_references = [it for it in items if it["references"]]
        unreferenced = len(items) - len(with_references)
        skipping = [name for name in names if contexts is None or needs_references(name)]
        out: dict[str, float] = {SKIPPED: float(unreferenced if skipping else 0)}
        if unreferenced and skipping:
            scored_by = [name for name in names if name not in skipping]
            warnings.warn(f"{unreferenced} of {len(items)} evaluation rows have no reference (a label row fully "
                          f"masked to {ignore_index}, or empty references); skipped by {', '.join(skipping)}"
                          + (f" (scored by {', '.join(scored_by)}, which need none)" if scored_by else "")
                          + f", counted in '{SKIPPED}'", stacklevel=2)
        without_references = [it for it in items if not it["references"]]
        for name in names:
            if name in skipping:
                groups = [with_references]
            elif registry.spec(name).behaviour.reads_references:  # its scores change with references: a call
                groups = [with_references, without_references]   # per kind, so that rows without one change
            else:                                                 # nothing for the rows with one
                groups = [items]
            per_item: dict[str, list[float]] = {}
            flags: list[list[str]] = []
            for group in (g for g in groups if g):
                scores = get_runner(name)(group, **options.get(name, {}))
                for sub, values in scores[0].items():
                    per_item.setdefault(sub, []).extend(values)
                flags += flags_of(scores, group)
            if flags:
                out.update(logged_means(name, per_item, flags))
        return out

    return score
