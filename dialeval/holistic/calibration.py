"""The stored cutoffs of holistic coherence and fluency (Pang et al. 2020): calibration of a model.

A model's cutoff for an aspect and reduction (:func:`dialeval.holistic.normalisation.cutoff_key`: ``coherence``,
``coherence_sum``, ``fluency``, ``fluency_sum``) is the 5th percentile of its raw scores over
``n_pairs`` DailyDialog validation (query, response) pairs drawn with ``random.Random(0)``, the
pairs ``training/finetune_lm.py --preset dailydialog`` calibrates on. A trained model stores them
beside its weights (``dialeval_holistic.json``, with the pairs' log-probabilities below); the un-tuned
local SmolLM2, built from a GGUF on first use, cannot, so its entry lives in
``dialeval/holistic/cutoffs.json``::

    python -m dialeval.holistic.calibration --model smollm2-135m-instruct            # prints the cutoffs
    python -m dialeval.holistic.calibration --model smollm2-135m-instruct --write     # ... into that table

Weighted PMI coherence (``pmi_weight=``, :func:`dialeval.holistic.normalisation.pmi_raw`) is normalised with
the quartiles of its raw values over the same pairs, for any weight: the pairs' summed
log-probabilities and token counts, with and without the query. A model trained by
``training/finetune_lm.py --preset dailydialog`` keeps them in its ``dialeval_holistic.json``; for a
folder trained before that, ``--write-folder`` adds them there. The bundled models' are kept per model
and weights in ``dialeval/holistic/calibration_logprobs.json``, so that their folders keep their hash::

    python -m dialeval.holistic.calibration --model dialeval/gemma3-dailydialog --logprobs --write
    python -m dialeval.holistic.calibration --model path/to/my-lm --logprobs --write-folder
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any, Sequence

from dialeval.holistic.normalisation import (
    CALIBRATION_LOGPROBS_FILE, KNOWN_CUTOFFS_FILE, PERCENTILE, REDUCTIONS, cutoff_key, percentile_cutoff, reduce_logprobs,
)

N_PAIRS = 1000
ASPECTS = ("coherence", "fluency")


def validation_pairs(n_pairs: int = N_PAIRS, seed: int = 0) -> list[tuple[str, str]]:
    """``n_pairs`` (query, response) pairs of consecutive DailyDialog validation turns, sampled with ``seed``."""
    from dialeval.data import corpora

    pairs = list(corpora.iter_pairs(corpora.dailydialog("validation")))
    return random.Random(seed).sample(pairs, min(n_pairs, len(pairs)))


def cutoffs_of(logprobs: dict[str, Sequence[tuple[float, int]]]) -> dict[str, float]:
    """The stored cutoffs (both reductions of each aspect) from the calibration pairs' log-probabilities."""
    return {cutoff_key(aspect, reduction): percentile_cutoff(reduce_logprobs(values, reduction))
            for aspect, values in logprobs.items() for reduction in REDUCTIONS}


def calibration_cutoffs(scorer: Any, pairs: Sequence[tuple[str, str]],
                        aspects: Sequence[str] = ASPECTS) -> dict[str, float]:
    """The stored cutoffs (both reductions of each aspect) of a :class:`~dialeval.holistic.scorer.LikelihoodScorer`;
    one LM pass per aspect (the sum and the mean come from the same log-probabilities)."""
    return cutoffs_of(calibration_logprobs(scorer, pairs, aspects))


def calibration_logprobs(scorer: Any, pairs: Sequence[tuple[str, str]],
                         aspects: Sequence[str] = ASPECTS) -> dict[str, list[list[float]]]:
    """Per aspect, ``[summed log-probability (4 decimals), token count]`` of every pair's response:
    what :func:`dialeval.holistic.normalisation.pmi_anchors` takes the quartiles of, for any weight."""
    queries, responses = [q for q, _ in pairs], [r for _, r in pairs]
    return {aspect: [[round(lp, 4), n] for lp, n in scorer.logprobs(aspect, responses, queries)]
            for aspect in aspects}


def _update_table(path: Path, name: str, entry: dict[str, Any], merge: str | None = None,
                  indent: int | None = 1) -> None:
    """Store ``entry`` under ``name`` in the JSON table ``path``; with ``merge``, an entry for the same
    weights keeps the ``merge`` values not recomputed; ``indent=None`` writes one compact line."""
    table = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    previous = table.get(name, {})
    if merge and previous.get("weights") == entry["weights"]:
        entry[merge] = {**previous.get(merge, {}), **entry[merge]}
    table[name] = entry
    separators = None if indent else (",", ":")
    path.write_text(json.dumps(table, indent=indent, sort_keys=True, separators=separators) + "\n", encoding="utf-8")


def write_folder_calibration(output: Path, logprobs: dict[str, list[list[float]]], n_pairs: int) -> dict[str, float]:
    """Store in a model folder's ``dialeval_holistic.json`` the calibration pairs' log-probabilities
    and the cutoffs taken from them (the file's other keys kept); returns the cutoffs."""
    from dialeval.holistic.normalisation import CUTOFFS_FILE

    path = Path(output) / CUTOFFS_FILE
    stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    cutoffs = cutoffs_of(logprobs)
    stored.update(cutoffs=cutoffs, logprobs=logprobs,
                  source=f"{PERCENTILE:g}th percentile (cutoffs) and summed log-probability and token count of "
                         f"each response (logprobs) over {n_pairs} DailyDialog validation pairs (random.Random(0))")
    path.write_text(json.dumps(stored, indent=None, separators=(",", ":")) + "\n", encoding="utf-8")
    return cutoffs


def write_model_calibration(model: Any, tokenizer: Any, output: Path, n_pairs: int = N_PAIRS) -> dict[str, float]:
    """Store the calibration of a trained checkpoint (``training/finetune_lm.py --preset dailydialog``)
    beside it: the 5th-percentile cutoffs of raw coherence and fluency (both reductions), so that any
    number of items is normalised the same way (``cutoff="model"``), and the pairs' log-probabilities,
    which weighted PMI coherence (the default coherence) takes its quartiles from; one LM pass per aspect."""
    from dialeval.holistic.scorer import LikelihoodScorer

    pairs = validation_pairs(n_pairs)
    logprobs = calibration_logprobs(LikelihoodScorer((model.eval(), tokenizer)), pairs)
    return write_folder_calibration(output, logprobs, len(pairs))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from dialeval.holistic.scorer import LikelihoodScorer
    from dialeval.models.hub import tensor_hash

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="the model name (the table's key)")
    parser.add_argument("--pairs", type=int, default=N_PAIRS)
    parser.add_argument("--aspects", nargs="+", choices=ASPECTS, default=list(ASPECTS))
    parser.add_argument("--logprobs", action="store_true",
                        help=f"the pairs' log-probabilities for weighted PMI ({CALIBRATION_LOGPROBS_FILE.name}) "
                             "instead of the cutoffs")
    parser.add_argument("--write", action="store_true", help="store the result in its table")
    parser.add_argument("--write-folder", action="store_true",
                        help="store the cutoffs and the log-probabilities in the model folder's dialeval_holistic.json "
                             "(a local folder, e.g. one trained before its training run wrote them)")
    args = parser.parse_args(argv)
    if args.write_folder and not Path(args.model).is_dir():
        raise FileNotFoundError(f"--write-folder: {args.model!r} is not a local model folder; pass its path, or "
                                "use --write for the table of a named model")
    scorer = LikelihoodScorer(args.model, device="cpu")
    pairs = validation_pairs(args.pairs)
    source = f"over {len(pairs)} DailyDialog validation pairs (random.Random(0))"
    if args.write_folder:
        cutoffs = write_folder_calibration(Path(args.model), calibration_logprobs(scorer, pairs), len(pairs))
        print(json.dumps({"cutoffs": cutoffs, "folder": args.model}, indent=1))
        return cutoffs
    tensors = tensor_hash(scorer.scorer.model)  # matches a GGUF build whose files differ (normalisation.shipped_entry)
    if args.logprobs:
        entry = {"logprobs": calibration_logprobs(scorer, pairs), "weights": scorer.model_name, "tensors": tensors,
                 "source": f"summed log-probability and token count of each response {source}"}
        print(json.dumps({k: v for k, v in entry.items() if k != "logprobs"}, indent=1))
        if args.write:
            _update_table(CALIBRATION_LOGPROBS_FILE, args.model, entry, indent=None)  # 2,000 pairs of numbers
        return entry
    cutoffs = calibration_cutoffs(scorer, pairs, args.aspects)
    entry = {"cutoffs": cutoffs, "weights": scorer.model_name, "tensors": tensors,
             "source": f"{PERCENTILE:g}th percentile {source}"}
    print(json.dumps(entry, indent=1))
    if args.write:  # same weights: keep the aspects not recomputed
        _update_table(KNOWN_CUTOFFS_FILE, args.model, entry, merge="cutoffs")
    return cutoffs


if __name__ == "__main__":
    main()
