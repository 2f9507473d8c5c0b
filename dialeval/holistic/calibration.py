"""The stored cutoffs of holistic coherence and fluency (Pang et al. 2020): calibration of a model.

A model's cutoff for an aspect and reduction (:func:`dialeval.holistic.scorer.cutoff_key`: ``coherence``,
``coherence_sum``, ``fluency``, ``fluency_sum``) is the 5th percentile of its raw scores over
``n_pairs`` DailyDialog validation (query, response) pairs drawn with ``random.Random(0)``, the
pairs ``training/finetune_lm.py --preset dailydialog`` calibrates on. A trained model stores them
beside its weights (``dialeval_holistic.json``); the un-tuned local SmolLM2, built from a GGUF on
first use, cannot, so its entry lives in ``dialeval/holistic/cutoffs.json``::

    python -m dialeval.holistic.calibration --model smollm2-135m-instruct            # prints the cutoffs
    python -m dialeval.holistic.calibration --model smollm2-135m-instruct --write     # ... into that table
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any, Sequence

from dialeval.holistic.scorer import KNOWN_CUTOFFS_FILE, PERCENTILE, REDUCTIONS, cutoff_key, percentile_cutoff, reduce_logprobs

N_PAIRS = 1000
ASPECTS = ("coherence", "fluency")


def validation_pairs(n_pairs: int = N_PAIRS, seed: int = 0) -> list[tuple[str, str]]:
    """``n_pairs`` (query, response) pairs of consecutive DailyDialog validation turns, sampled with ``seed``."""
    from dialeval.data import corpora

    pairs = list(corpora.iter_pairs(corpora.dailydialog("validation")))
    return random.Random(seed).sample(pairs, min(n_pairs, len(pairs)))


def calibration_cutoffs(scorer: Any, pairs: Sequence[tuple[str, str]],
                        aspects: Sequence[str] = ASPECTS) -> dict[str, float]:
    """The stored cutoffs (both reductions of each aspect) of a :class:`~dialeval.holistic.scorer.LikelihoodScorer`;
    one LM pass per aspect (the sum and the mean come from the same log-probabilities)."""
    queries, responses = [q for q, _ in pairs], [r for _, r in pairs]
    cutoffs = {}
    for aspect in aspects:
        logprobs = scorer.logprobs(aspect, responses, queries)
        for reduction in REDUCTIONS:
            cutoffs[cutoff_key(aspect, reduction)] = percentile_cutoff(reduce_logprobs(logprobs, reduction))
    return cutoffs


def write_model_cutoffs(model: Any, tokenizer: Any, output: Path, n_pairs: int = N_PAIRS) -> dict[str, float]:
    """Store the 5th-percentile cutoffs of raw coherence and fluency (both reductions, mean and sum)
    on DailyDialog validation pairs beside a trained checkpoint (``training/finetune_lm.py --preset
    dailydialog``), so that any number of items is normalised the same way (``cutoff="model"``, the
    default of the holistic metric)."""
    from dialeval.holistic.scorer import CUTOFFS_FILE, LikelihoodScorer

    pairs = validation_pairs(n_pairs)
    cutoffs = calibration_cutoffs(LikelihoodScorer((model.eval(), tokenizer)), pairs)
    (output / CUTOFFS_FILE).write_text(json.dumps({
        "cutoffs": cutoffs, "source": f"5th percentile over {len(pairs)} DailyDialog validation pairs (random.Random(0))",
    }, indent=1))
    return cutoffs


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    from dialeval.holistic.scorer import LikelihoodScorer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="the model name (the table's key)")
    parser.add_argument("--pairs", type=int, default=N_PAIRS)
    parser.add_argument("--aspects", nargs="+", choices=ASPECTS, default=list(ASPECTS))
    parser.add_argument("--write", action="store_true", help=f"store the result in {KNOWN_CUTOFFS_FILE.name}")
    args = parser.parse_args(argv)
    scorer = LikelihoodScorer(args.model, device="cpu")
    pairs = validation_pairs(args.pairs)
    cutoffs = calibration_cutoffs(scorer, pairs, args.aspects)
    entry = {"cutoffs": cutoffs, "weights": scorer.model_name,
             "source": f"{PERCENTILE:g}th percentile over {len(pairs)} DailyDialog validation pairs (random.Random(0))"}
    print(json.dumps(entry, indent=1))
    if args.write:
        table = json.loads(KNOWN_CUTOFFS_FILE.read_text(encoding="utf-8")) if KNOWN_CUTOFFS_FILE.is_file() else {}
        previous = table.get(args.model, {})
        if previous.get("weights") == entry["weights"]:  # same weights: keep the aspects not recomputed
            entry["cutoffs"] = {**previous.get("cutoffs", {}), **cutoffs}
        table[args.model] = entry
        KNOWN_CUTOFFS_FILE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return cutoffs


if __name__ == "__main__":
    main()
