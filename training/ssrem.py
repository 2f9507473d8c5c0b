"""Train SSREM's ``f(c, r) = v(c)^T M v(r)`` (Bak & Oh 2020, Section 3.3) on a speaker-tagged corpus.

Each training step takes ``--batch-size`` (context, true response) pairs of the training split and,
for each, a candidate set: the true response plus ``--per-type`` negatives of each speaker-sensitive
type (same conversation SC, same partner SP, same speaker SS, random RN; see
:class:`dialeval.ssrem.scorer.NegativeSampler`, which falls back SC -> SP -> SS -> RN when a pool is
empty); the loss is ``-log softmax`` of the true candidate over the candidates' ``f``. With
``--negatives random`` every negative is random (RSREM, the paper's ablation; same candidate-set size).

Corpus: ``--corpus chitchat`` (PyPI ``chitchat-dataset``: 4,017 two-party conversations with a
reply, 1,195 persistent sender ids; the authors' Twitter corpus is not public) or any JSONL of
``{"turns": [{"speaker", "text"}, ...]}``. Split 80/10/10 by conversation
(:func:`dialeval.ssrem.scorer.split_of`, a content hash, so it does not depend on the corpus order).
``v(.)`` is frozen (GloVe average or MiniLM-L6, ``--encoder``), so every utterance and context is
encoded once (cached under ``$DIALEVAL_CACHE/ssrem``) and only ``M`` is trained: CPU minutes. A word
average is centred on the mean average of the training utterances (stored as ``center`` in
``config.json``; ``--no-center`` keeps the raw average). Negative pools hold only utterances with
at least ``--min-tokens`` word tokens (default 3). SSREM and RSREM differ only in ``--negatives``:
train both with the same ``--max-steps`` and no ``--minutes`` limit for identical budgets.

After training: the min-max constants of ``f`` and ``g`` (1st / 99th percentiles over the
validation split's candidates; ``g`` of each negative against the true response, per mover mode)
go into ``config.json``; Section 6's held-out comparison (:func:`dialeval.ssrem.scorer.heldout_negatives`
on the test split) into the report ``dialeval_training.json``. ``--output`` is a hub-ready folder
(safetensors + config + report; ``--card`` writes the model card of the bundled folder from the
reports and the saved benchmark results).

Examples::

    python training/ssrem.py --negatives random --threads 1              # -> hub/ssrem-chitchat/ablation-rsrem
    python training/ssrem.py --threads 1                                 # -> hub/ssrem-chitchat (+ card)
    python training/ssrem.py --card                                      # rewrite hub/ssrem-chitchat/README.md
    python training/ssrem.py --tiny --corpus convs.jsonl --output OUT    # tests
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch

from dialeval.ssrem import scorer as ssrem
from dialeval.models.hub import HUB_ROOT, Measured, write_card
from dialeval.core.resources import cache_dir
from dialeval.core.training import STATE_FILE, add_loop_arguments, load_state, prepare_run, run_steps

BUNDLED = HUB_ROOT / "ssrem-chitchat"
ABLATION = ssrem.ABLATION
RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def default_output(negatives: str) -> Path:
    return BUNDLED if negatives == "speaker" else BUNDLED / ABLATION


def encode_cached(encoder, texts: list[str], what: str) -> np.ndarray:
    """``encoder.encode(texts)``, cached by encoder and content (MiniLM takes minutes on one CPU)."""
    key = hashlib.sha256("\n".join([encoder.name, what, *texts]).encode()).hexdigest()[:16]
    path = cache_dir() / "ssrem" / f"{encoder.name}-{what}-{key}.npy"
    if path.is_file():
        return np.load(path)
    vectors = encoder.encode(texts, progress=len(texts) > 1000)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def batches(n: int, batch_size: int, seed: int) -> Iterator[list[int]]:
    """Endless batches of pair indices, reshuffled every epoch (seeded, so a resumed run can skip)."""
    for epoch in itertools.count():
        order = list(range(n))
        random.Random(f"{seed}-{epoch}").shuffle(order)
        yield from (order[i : i + batch_size] for i in range(0, n - batch_size + 1, batch_size))


def percentiles(values: Sequence[float]) -> list[float]:
    return [float(np.percentile(values, 1)), float(np.percentile(values, 99))]


def minmax_constants(scorer: ssrem.SSREMScorer, conversations: list, limit: int, per_type: int,
                     min_tokens: int = 0) -> dict:
    """1st / 99th percentiles of ``f`` over validation candidates (true + negatives) and of ``g``
    (each mover mode) between every negative and its true response."""
    sampler = ssrem.NegativeSampler(conversations, min_tokens)
    splits = [ssrem.split_of(c) for c in conversations]
    targets = [t for t in sampler.responses() if splits[sampler.utterances[t].conversation] == "validation"]
    random.Random("ssrem-minmax").shuffle(targets)
    contexts, responses, negatives, truths = [], [], [], []
    for t in targets[:limit]:
        ids, _ = sampler.candidates(t, per_type, "speaker", random.Random(f"minmax-{t}"))
        context = sampler.context(t, scorer.context_turns)
        contexts += [context] * len(ids)
        responses += [sampler.utterances[i].text for i in ids]
        negatives += [sampler.utterances[i].text for i in ids[1:]]
        truths += [[sampler.utterances[t].text]] * (len(ids) - 1)
    f = scorer.f(contexts, responses)
    g = {mode: percentiles(scorer.g(negatives, truths, mode)) for mode in ssrem.MOVER_MODES}
    return {"f": percentiles(f), "g": g, "pairs": min(limit, len(targets)), "split": "validation",
            "statistic": "1st and 99th percentiles"}


def train(args: argparse.Namespace, output: Path) -> dict:
    started = time.time()
    conversations = ssrem.load_corpus(args.corpus)
    if args.tiny or args.max_conversations:
        conversations = conversations[: 60 if args.tiny else args.max_conversations]
    train_convs = ssrem.split_corpus(conversations)["train"]
    sampler = ssrem.NegativeSampler(train_convs, args.min_tokens)
    targets = sampler.responses()
    if len(targets) < args.batch_size:
        raise ValueError(f"{args.corpus}: {len(targets)} training pairs, fewer than --batch-size {args.batch_size}")
    encoder = ssrem.make_encoder(args.encoder, args.device)
    texts = [u.text for u in sampler.utterances]
    U = torch.from_numpy(encode_cached(encoder, texts, "utterances"))
    C = torch.from_numpy(encode_cached(
        encoder, [" ".join(sampler.context(t, args.context_turns)) for t in targets], f"contexts{args.context_turns}"))
    center = None
    if args.center and isinstance(encoder, ssrem.WordAverageEncoder):  # v - mean v over training utterances
        known = U.abs().sum(1) > 0
        center = [round(float(x), 7) for x in U[known].double().mean(0)]  # as stored in config.json
        shift = torch.tensor(center, dtype=U.dtype)
        U = torch.where(known[:, None], U - shift, U)
        C = torch.where((C.abs().sum(1) > 0)[:, None], C - shift, C)

    module = ssrem.load_module(output) if args.resume and (output / ssrem.WEIGHTS_FILE).is_file() \
        else ssrem.bilinear_module(encoder.dim)
    config = {"architecture": "ssrem-bilinear", "encoder": args.encoder, "dim": encoder.dim,
              "context_turns": args.context_turns, "negatives": args.negatives, "per_type": args.per_type,
              "min_tokens": args.min_tokens, "corpus": args.corpus, "split_seed": ssrem.SPLIT_SEED}
    if center is not None:
        config["center"] = center
    state = load_state(output, args.resume, args, lambda: {
        "corpus": {"conversations": len(conversations), "train_conversations": len(train_convs),
                   "train_pairs": len(targets), "speakers": len({u.speaker for u in sampler.utterances})},
        "drawn_types": {},
    })
    print(f"{len(targets)} training pairs from {len(train_convs)} conversations; encoder {encoder.name} "
          f"({encoder.dim}-d); negatives {args.negatives}", flush=True)

    plan = itertools.islice(batches(len(targets), args.batch_size, args.seed), state["step"], None)

    def step_loss(step: int) -> torch.Tensor:
        rng = random.Random(f"{args.seed}-step-{step}")
        rows, counts = [], state["drawn_types"]
        for k in next(plan):
            ids, types = sampler.candidates(targets[k], args.per_type, args.negatives, rng)
            rows.append((k, ids))
            for t in types[1:]:
                counts[t] = counts.get(t, 0) + 1
        c = C[[k for k, _ in rows]]
        r = U[torch.tensor([ids for _, ids in rows])]
        return ssrem.candidate_loss(module(c, r))

    def save() -> None:
        ssrem.save_model(output, module, config)
        (output / STATE_FILE).write_text(json.dumps(state, indent=1))

    run_steps(module, step_loss, state, save, lr=args.lr, warmup=args.warmup, max_steps=args.max_steps,
              minutes=args.minutes, save_every=args.save_every)
    save()

    scorer = ssrem.SSREMScorer(output, device=args.device)
    config["minmax"] = minmax_constants(scorer, conversations, 60 if args.tiny else args.minmax_pairs, args.per_type,
                                        args.min_tokens)
    save()
    scorer = ssrem.SSREMScorer(output, device=args.device)
    state["heldout"] = ssrem.heldout_negatives(scorer, conversations, "test",
                                               limit=40 if args.tiny else args.heldout_pairs)
    state["wall_minutes"] = round(state.get("wall_minutes", 0.0) + (time.time() - started) / 60, 2)
    save()
    return state


def report_line(state: dict) -> str:
    held = state["heldout"]
    f = ", ".join(f"{k} {v['mean']:.3f}" for k, v in held["f"].items())
    wins = ", ".join(f"{k} {v['mean']:.3f}" for k, v in held["win_rate"].items())
    return f"held-out {held['pairs']} pairs: mean f {f}; P(f(true) > f(neg)) {wins}"


# --------------------------------------------------------------------------- the model card


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def card_body(name: str, main: dict, ablation: dict | None, benchmarks: dict[str, dict],
              heldout: dict | None = None) -> str:
    """The card text: what the model is, how it was trained, the measured tables (``heldout``: the
    saved ``ssrem-heldout`` benchmark, else the training reports)."""
    from dialeval.ssrem.benchmark import compare_lines, format_heldout_rows, format_table4_rows, gradient_line, verdict

    if heldout is None:
        heldout = {"ssrem": main["heldout"], "rsrem": (ablation or {}).get("heldout")}
    held = "\n".join(format_heldout_rows(heldout))
    corr = "\n\n".join(format_table4_rows(r) for r in benchmarks.values()) or "(no benchmark saved yet)"
    args = main["args"]
    comparison = ("  \n".join(compare_lines(heldout)) if heldout.get("ssrem_minus_rsrem")
                  else compare(main, ablation))
    centred = "centred " if args.get("center") == "True" else ""
    return f"""
# dialeval/{name}

The learned part of **SSREM** (Bak & Oh 2020, *Speaker Sensitive Response Evaluation Model*, ACL):
`f(c, r) = v(c)^T M v(r)` (the paper's bilinear form; no `tanh`) with `v(.)` the {centred}average GloVe
6B 50d vector of a text's tokens (the paper: GloVe Twitter 200d, uncentred; here minus the mean average
of the training utterances, stored as `center` in `config.json`, encoder `glove-6b-50d-centered` in the
signature: raw 50-d averages of any two chit-chat utterances have cosine ~0.9, which hides the
differences between negative levels) over the last {args['context_turns']} context turns, trained on the
chit-chat corpus (PyPI `chitchat-dataset`; {main['corpus']['speakers']:,} speakers in the training split)
in place of the authors' Twitter corpus, which is not public. The metric `dialeval/ssrem` loads it by default and
combines it with `g`, a word-vector mover's similarity with the best-matching reference (ELMo, which the paper
uses for sentence mover's similarity, is not available offline), as `h = (minmax(f) + minmax(g)) / 2`.
Scaling: by default (module, CLI and the benchmarks below) the min-max constants stored in
`config.json` (1st/99th percentiles on the validation split; outside values clipped), so a score does
not depend on the other items scored with it; `scaling="set"` is the paper's min-max over the scored set.

Files: `model.safetensors` (`M`, {main_dim(args)}), `config.json` (encoder, centre, context turns,
pool rule, min-max constants), `dialeval_training.json` (arguments, loss curve, held-out numbers).
`{ABLATION}/` holds RSREM, the paper's ablation: the same model trained with random negatives only,
same steps, batch, learning rate and candidate-set size.

## Training

{main['corpus']['train_pairs']:,} (context, response) pairs of {main['corpus']['train_conversations']:,}
training conversations (80/10/10 split by conversation); per pair the true response and
{args['per_type']} negatives of each type: same conversation (SC), same partner (SP), same speaker
with other partners (SS), random (RN), drawn from pools of utterances with at least
{args.get('min_tokens', 0)} word tokens ("lol", "yes" occur at every level alike); an empty pool falls back
to the next wider one. Loss: `-log softmax` of the true candidate (Section 3.3). {main['step']} steps of
{args['batch_size']} pairs, AdamW lr {args['lr']}: {main.get('minutes', 'n/a')} minutes of optimisation,
{main.get('wall_minutes', 'n/a')} minutes in all (one CPU thread, shared machine). Negative types drawn
(after fallback; {int(args['per_type']) * main['step'] * int(args['batch_size']):,} asked of each type): {main.get('drawn_types')}.

## Section 6: held-out test split (mean f; P(f(GT) > f(negative)) and cosine of v(negative) with v(GT), bootstrap 95 % intervals; the paper's Table 2 beside)

{held}

Difficulty gradient (cosine of the negatives with the true response; `>`: bootstrap intervals apart,
`~`: overlapping): centred average {gradient_line(heldout) or "n/a"}; raw average (the paper's measure)
{gradient_line(heldout, "similarity_raw") or "n/a"}; paper Table 2 (Twitter): SC > SP > SS > RN. Same
conversation is clearly the hardest level and random the easiest; in this corpus (about 6
conversations per speaker; 27 % of the test pairs have no SP pool at all) a partner met again
brings no more similar replies than other partners, so SP and SS are not told apart.

{comparison}

**Verdict.** {verdict(heldout) if heldout.get("ssrem_minus_rsrem") else "not measured"}

## Correlation with human judgment (Spearman / Pearson, the paper's Table 4 layout)

{corr}

## Limitations

Trained on a small corpus of English chit-chat between crowd workers (not Twitter); `v(.)` is a
50-d word average, `g` uses GloVe instead of ELMo. Scores are comparable only under one signature.
"""


def compare(main: dict, ablation: dict | None) -> str:
    """Whether speaker-sensitive negatives (SSREM) beat random ones (RSREM) at telling the true
    response from each negative type: the difference of ``P(f(GT) > f(negative))`` and whether it
    exceeds the sum of the two 95 % CI half-widths."""
    if not ablation or "heldout" not in ablation:
        return "RSREM not trained: no comparison."
    parts = []
    for kind, ours in main["heldout"]["win_rate"].items():
        theirs = ablation["heldout"]["win_rate"][kind]
        diff = ours["mean"] - theirs["mean"]
        verdict = "beyond" if abs(diff) > ours["ci95"] + theirs["ci95"] else "within"
        parts.append(f"{kind} {diff:+.3f} ({verdict} the CIs)")
    return "SSREM - RSREM, P(f(GT) > f(negative)): " + "; ".join(parts) + "."


def main_dim(args: dict) -> str:
    return "384 x 384, MiniLM-L6" if args.get("encoder") == ssrem.MINILM else "50 x 50"


def write_model_card(folder: Path = BUNDLED) -> Path:
    """Write the bundled folder's card from its report, the ablation's and saved benchmark results."""
    main = _load(folder / STATE_FILE)
    if main is None or "heldout" not in main:
        raise FileNotFoundError(f"{folder}: no finished training report; train first")
    ablation = _load(folder / ABLATION / STATE_FILE)
    loaded = {p.stem: _load(p) for p in sorted(RESULTS.glob("ssrem-*.json"))}
    saved_heldout = loaded.get("ssrem-heldout")
    benchmarks = {k: v for k, v in loaded.items() if v and "rows" in v}  # one Table 4 set per file
    measured = [
        Measured(dataset=result["dataset"], metric="spearman", value=result["rows"]["SSREM"]["spearman"],
                 dataset_name=result["dataset"])
        for result in benchmarks.values() if "SSREM" in result["rows"]
    ]
    return write_card(
        folder, name=folder.name, body=card_body(folder.name, main, ablation, benchmarks, saved_heldout),
        library_name="dialeval", license="apache-2.0", tags=["dialogue-evaluation", "ssrem"],
        measured=measured, base_model=None, datasets=["chitchat-dataset"],
    )


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="chitchat", help="'chitchat' or a JSONL of speaker-tagged conversations")
    parser.add_argument("--negatives", choices=ssrem.NEGATIVE_MODES, default="speaker",
                        help="speaker: SC/SP/SS/RN (SSREM); random: RN only (RSREM)")
    parser.add_argument("--encoder", default=None,
                        help=f"v(.): None = GloVe 6B 50d average, a word-vector file, or {ssrem.MINILM!r}")
    parser.add_argument("--per-type", type=int, default=2, help="negatives of each type per pair")
    parser.add_argument("--context-turns", type=int, default=3)
    parser.add_argument("--min-tokens", type=int, default=ssrem.MIN_TOKENS,
                        help="negative pools hold only utterances with at least this many word tokens")
    parser.add_argument("--no-center", dest="center", action="store_false",
                        help="keep the raw word average (default: centred on the training utterances' mean)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--minmax-pairs", type=int, default=300)
    parser.add_argument("--heldout-pairs", type=int, default=None, help="default: every test pair")
    parser.add_argument("--max-conversations", type=int, default=None, help="use only the corpus' first N")
    parser.add_argument("--output", type=Path, help=f"default: {BUNDLED} (random: .../{ABLATION})")
    parser.add_argument("--card", action="store_true", help="only rewrite the bundled folder's model card")
    add_loop_arguments(parser, lr=3e-3, warmup=100, max_steps=3000, what_tiny="the first 60 conversations")
    args = parser.parse_args(argv)
    if args.card:
        print(write_model_card())
        return BUNDLED
    for name in ("per_type", "context_turns", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.tiny:
        args.max_steps, args.save_every, args.warmup, args.batch_size = min(args.max_steps, 30), 10, 1, 8
    output = prepare_run(args, args.output or default_output(args.negatives))
    state = train(args, output)
    print(f"saved {output} after {state['step']} steps ({state.get('minutes')} min); {report_line(state)}", flush=True)
    if output == BUNDLED:
        write_model_card(output)
    if args.push_to_hub:
        from huggingface_hub import HfApi

        HfApi().upload_folder(folder_path=str(output), repo_id=f"dialeval/{output.name}")
    return output


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
