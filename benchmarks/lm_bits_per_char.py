"""Which base language model reads dialogue best, without a human rating (issue 33, item 3).

The criterion: bits per character on DailyDialog *validation* conversations written as FED and
FULL's ``dialogue`` variants read them (:func:`dialeval.core.lm.conversation_text`,
``eos t1 eos t2 ...``). Models with different tokenizers are compared per character, not per token:

    bits/char = sum over the text's tokens after the first of -log2 P(token | earlier tokens)
                / number of characters of the turns (each turn plus one separating space)

The ``eos`` separators are predicted (ending a turn is part of the job) but their characters are not
counted, since the models spell ``eos`` differently (``<|im_end|>``, ``<eos>``). A conversation longer
than ``--max-tokens`` is skipped (and counted in the row). Prints one row per model; ``--save
FILE.json`` keeps the table, adding to the rows of other models already there (same text and ``--n``
only).

``--text pairs`` is holistic coherence's criterion instead: the response given its query, as the
``dailydialog`` preset trains and :mod:`dialeval.holistic.scorer` reads them, over the ``--n``
DailyDialog validation pairs its cutoffs are calibrated on
(:func:`dialeval.holistic.calibration.validation_pairs`):

    bits/char = sum over pairs of -log2 P(" " + r + eos | eos + q) / sum over pairs of (len(r) + 1)

    python benchmarks/lm_bits_per_char.py smollm2-135m-instruct dialeval/smollm2-dialogue gemma3-270m \\
        /work/gemma3-dialogue --n 200 --save benchmarks/results/lm-bits-per-char.json
    python benchmarks/lm_bits_per_char.py dialeval/smollm2-dailydialog smollm2-135m-instruct dialeval/smollm2-dialogue \\
        gemma3-270m dialeval/gemma3-dailydialog dialeval/gemma3-dialogue \\
        --text pairs --n 1000 --save benchmarks/results/lm-bits-per-char-pairs.json

``--text responses`` is USL-H's L criterion instead: each response alone after the tokenizer's EOS,
as :class:`dialeval.usl.likelihood.ResponseNLL` reads it (no end-of-turn token), over the distinct
responses of the same ``--n`` validation pairs:

    bits/char = sum over responses of -log2 P(r | eos) / sum over responses of len(r)

    python benchmarks/lm_bits_per_char.py dialeval/smollm2-dailydialog dialeval/gemma3-dailydialog \\
        dialeval/smollm2-dialogue dialeval/gemma3-dialogue --text responses --n 1000 \\
        --save benchmarks/results/lm-bits-per-char-responses.json

The optional 1.5B base (``dialeval install-bases qwen1.5b``, issue 56) untuned, beside the others, on
the first 40 dialogues (one model at a time, each freed before the next: the 1.5B one is 7.1 GB in
float32; 14.5 s a dialogue on one loaded CPU thread, 4x Gemma-3-270M's, so 200 would take 50 minutes):

    OMP_NUM_THREADS=1 python benchmarks/lm_bits_per_char.py qwen2.5-coder-1.5b-instruct gemma3-270m \\
        dialeval/gemma3-dialogue smollm2-135m-instruct --n 40 --save benchmarks/results/lm-bits-per-char-n40.json
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import time
from pathlib import Path

from dialeval.core.lm import LMScorer, conversation_text, load_causal_lm
from dialeval.data import corpora
from dialeval.holistic.calibration import validation_pairs


def bits_per_char(name: str, dialogues: list[list[str]], max_tokens: int) -> dict:
    """One model's bits per character over ``dialogues`` (summed log-probabilities from the LM core's
    :meth:`~dialeval.core.lm.LMScorer.sequence_logprobs`, batched)."""
    model, tokenizer = load_causal_lm(name)
    start = time.perf_counter()
    encoded = [(turns, tokenizer(conversation_text(turns, tokenizer.eos_token), add_special_tokens=False)["input_ids"])
               for turns in dialogues]
    kept = [(turns, ids) for turns, ids in encoded if len(ids) <= max_tokens]
    scored = LMScorer(model, tokenizer, batch_size=8).sequence_logprobs([ids for _, ids in kept])
    nats = -sum(lp for lp, _ in scored)
    tokens = sum(n for _, n in scored)
    chars = sum(sum(len(turn) + 1 for turn in turns) - 1 for turns, _ in kept)
    return {"model": name, "weights": getattr(model, "dialeval_weights_id", name),
            "bits_per_char": nats / math.log(2) / chars, "tokens_per_char": tokens / chars,
            "dialogues": len(kept), "skipped": len(dialogues) - len(kept),
            "seconds": round(time.perf_counter() - start, 1)}


def pair_bits_per_char(name: str, pairs: list[tuple[str, str]]) -> dict:
    """One model's bits per character of the responses given their queries (``--text pairs``), from
    the LM core's :meth:`~dialeval.core.lm.LMScorer.pair_logprobs`."""
    model, tokenizer = load_causal_lm(name)
    start = time.perf_counter()
    eos = tokenizer.eos_token

    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    scored = LMScorer(model, tokenizer, batch_size=8).pair_logprobs(
        [ids(eos + q) for q, _ in pairs], [ids(f" {r}{eos}") for _, r in pairs])
    nats = -sum(lp for lp, _ in scored)
    chars = sum(len(r) + 1 for _, r in pairs)
    return {"model": name, "weights": getattr(model, "dialeval_weights_id", name),
            "bits_per_char": nats / math.log(2) / chars, "tokens_per_char": sum(n for _, n in scored) / chars,
            "dialogues": len(pairs), "skipped": 0, "seconds": round(time.perf_counter() - start, 1)}


def response_bits_per_char(name: str, responses: list[str]) -> dict:
    """One model's bits per character of ``responses`` read alone (``--text responses``): USL-H's L,
    :meth:`dialeval.usl.likelihood.ResponseNLL.logprobs`, summed."""
    from dialeval.usl.likelihood import ResponseNLL

    lm = ResponseNLL(name, batch_size=8)
    start = time.perf_counter()
    scored = lm.logprobs(responses)
    nats = -sum(lp for lp, _ in scored)
    chars = sum(len(r) for r in responses)
    return {"model": name, "weights": lm.model_name, "bits_per_char": nats / math.log(2) / chars,
            "tokens_per_char": sum(n for _, n in scored) / chars, "dialogues": len(responses), "skipped": 0,
            "seconds": round(time.perf_counter() - start, 1)}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="names, hub ids or folders (load_causal_lm)")
    parser.add_argument("--text", choices=("conversations", "pairs", "responses"), default="conversations",
                        help="conversations: FED/FULL's eos-joined dialogues; pairs: holistic's response given its query; "
                             "responses: USL-H's L, each response alone")
    parser.add_argument("--n", type=int, default=200,
                        help="the first N DailyDialog validation dialogues (--text pairs, responses: N calibration pairs)")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args(argv)
    if args.text == "pairs":
        texts = validation_pairs(args.n)
        print(f"DailyDialog validation, {len(texts)} calibration pairs, response given eos + query")
    elif args.text == "responses":
        texts = list(dict.fromkeys(r for _, r in validation_pairs(args.n)))
        print(f"DailyDialog validation, {len(texts)} distinct responses of {args.n} calibration pairs, each after eos")
    else:
        texts = corpora.dailydialog("validation")[: args.n]
        print(f"DailyDialog validation, first {len(texts)} dialogues, conversation_text (eos-joined)")
    rows = []
    print(f"{'model':<40} {'weights':<44} {'bits/char':>9} {'tok/char':>8} {'n':>4} {'s':>6}")
    for name in args.models:
        if args.text == "pairs":
            row = pair_bits_per_char(name, texts)
        elif args.text == "responses":
            row = response_bits_per_char(name, texts)
        else:
            row = bits_per_char(name, texts, args.max_tokens)
        rows.append(row)
        gc.collect()  # the model is gone with its function's frame; no two models held at once
        print(f"{name:<40} {row['weights']:<44} {row['bits_per_char']:>9.4f} {row['tokens_per_char']:>8.3f} "
              f"{row['dialogues']:>4} {row['seconds']:>6}", flush=True)
    if args.save:
        table = {"dataset": "dailydialog-validation", "text": args.text, "n": len(texts),
                 "max_tokens": args.max_tokens, "rows": []}
        if args.save.is_file():
            old = json.loads(args.save.read_text())
            settings = (old.get("text", "conversations"), old["n"], old["max_tokens"])
            if settings != (table["text"], table["n"], table["max_tokens"]):
                raise ValueError(f"{args.save} holds rows for text={settings[0]}, n={settings[1]}, "
                                 f"max_tokens={settings[2]}: pass the same or another file")
            table["rows"] = [row for row in old["rows"] if row["model"] not in args.models]
        table["rows"] += rows
        args.save.write_text(json.dumps(table, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
