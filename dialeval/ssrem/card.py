"""The card of an SSREM bundled folder (``hub/ssrem-chitchat-mpnet``, the default, and
``hub/ssrem-chitchat``): what the model is, how it was trained, Section 6's held-out numbers and the
Table 4 correlations, from the folder's training reports and the saved
``benchmarks/results/[<folder>/]ssrem-*.json`` measured with its weights
(:func:`dialeval.models.hub.folder_results`). Declared as the folder's
``CardSpec.content`` (:mod:`dialeval.ssrem.spec`) and written by :func:`dialeval.publish.write_model_card`.
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.core.spec import CardContent
from dialeval.models.hub import Measured, folder_results
from dialeval.models.shipped import CHECKOUT_ROOT
from dialeval.ssrem.checkpoint import ABLATION
from dialeval.ssrem.encoders import MINILM, MPNET, SENTENCE_ENCODERS

RESULTS = CHECKOUT_ROOT / "benchmarks" / "results"
REPORT_FILE = "dialeval_training.json"  # dialeval.core.training.STATE_FILE (which imports torch)


def _load(path: Path) -> dict | None:
    """The JSON file at ``path``, ``None`` when there is none."""
    return json.loads(path.read_text()) if path.is_file() else None


def card_body(name: str, main: dict, ablation: dict | None, benchmarks: dict[str, dict],
              heldout: dict | None = None) -> str:
    """The card text: what the model is, how it was trained, the measured tables (``heldout``: the
    saved ``ssrem-heldout`` benchmark, else the training reports)."""
    from dialeval.ssrem.benchmark import compare_lines, format_heldout_rows, format_table4_rows, gradient_line, verdict

    if heldout is None:
        heldout = {"ssrem": main["heldout"], "rsrem": (ablation or {}).get("heldout")}
    held = "\n".join(format_heldout_rows(heldout))
    corr = "\n\n".join(format_table4_rows(r) for r in benchmarks.values()) or (
        "(the paper-layout benchmark has not been run with these weights; the metric card gives their "
        "meta-evaluation grid)")
    args = main["args"]
    sentence = args.get("encoder") in SENTENCE_ENCODERS
    note = f"\n{main['heldout_note'][0].upper()}{main['heldout_note'][1:]}.\n" if main.get("heldout_note") else ""
    comparison = ("  \n".join(compare_lines(heldout)) if heldout.get("ssrem_minus_rsrem")
                  else compare(main, ablation))
    return f"""
# dialeval/{name}

The learned part of **SSREM** (Bak & Oh 2020, *Speaker Sensitive Response Evaluation Model*, ACL):
`f(c, r) = v(c)^T M v(r)` (the paper's bilinear form; no `tanh`) with {encoder_text(args)}, trained on the
chit-chat corpus (PyPI `chitchat-dataset`; {main['corpus']['speakers']:,} speakers in the training split)
in place of the authors' Twitter corpus, which is not public. {role_text(name)} The metric `dialeval/ssrem`
combines `f` with `g`, a word-vector mover's similarity with the best-matching reference (ELMo, which the paper
uses for sentence mover's similarity, is not available offline), as `h = (minmax(f) + minmax(g)) / 2`.
Scaling: by default (module, CLI and the benchmarks below) the min-max constants stored in
`config.json` (1st/99th percentiles on the validation split; outside values clipped), so a score does
not depend on the other items scored with it; `scaling="set"` is the paper's min-max over the scored set.

Files: `model.safetensors` (`M`, {main_dim(args)}), `config.json` (encoder, {"context pooling" if sentence else "centre"}, context turns,
pool rule, min-max constants), `dialeval_training.json` (arguments, loss curve, held-out numbers).
`{ABLATION}/` holds RSREM, the paper's ablation: the same model trained with random negatives only,
same steps, batch, learning rate and candidate-set size.

## Training

{main['corpus']['train_pairs']:,} (context, response) pairs of {main['corpus']['train_conversations']:,}
training conversations (80/10/10 split by conversation); per pair the true response and
{args['per_type']} negatives of each type: same conversation (SC), same partner (SP), same speaker
with other partners (SS), random (RN), drawn from pools of utterances with at least
{args.get('min_tokens', 0)} word tokens ("lol", "yes" occur at every level alike); an empty pool falls back
to the next wider one.{target_text(args)} Loss: `-log softmax` of the true candidate (Section 3.3){penalty_text(args)}. {main['step']} steps of
{args['batch_size']} pairs, AdamW lr {args['lr']}: {main.get('minutes', 'n/a')} minutes of optimisation,
{main.get('wall_minutes', 'n/a')} minutes in all (one CPU thread, shared machine). Negative types drawn
(after fallback; {int(args['per_type']) * main['step'] * int(args['batch_size']):,} asked of each type): {main.get('drawn_types')}.

## Section 6: held-out test split (mean f; P(f(GT) > f(negative)) and cosine of v(negative) with v(GT), bootstrap 95 % intervals; the paper's Table 2 beside)
{note}
{held}

Difficulty gradient (cosine of the negatives with the true response; `>`: bootstrap intervals apart,
`~`: overlapping): {"the encoder's cosine" if sentence else "centred average"} {gradient_line(heldout) or "n/a"}; raw average (the paper's measure)
{gradient_line(heldout, "similarity_raw") or "n/a"}; paper Table 2 (Twitter): SC > SP > SS > RN. Same
conversation is clearly the hardest level and random the easiest; in this corpus (about 6
conversations per speaker; 27 % of the test pairs have no SP pool at all) a partner met again
brings no more similar replies than other partners, so SP and SS are not told apart.

{comparison}

**Verdict.** {verdict(heldout) if heldout.get("ssrem_minus_rsrem") else "not measured"}

## Correlation with human judgment (Spearman / Pearson, the paper's Table 4 layout)

{corr}

## Limitations

Trained on a small corpus of English chit-chat between crowd workers (not Twitter); `v(.)` is
{"a frozen sentence encoder, not the paper's word average" if sentence else "a 50-d word average"}, `g` uses GloVe instead of ELMo. Scores are comparable only under one signature.
"""


def encoder_text(args: dict) -> str:
    """What ``v(.)`` is in the folder trained with ``args`` (the report's string-valued arguments)."""
    turns = args["context_turns"]
    if args.get("encoder") in SENTENCE_ENCODERS:
        name = "all-mpnet-base-v2" if args["encoder"] == MPNET else "all-MiniLM-L6-v2"
        context = (f"`v(c)` the mean of the last {turns} context turns' own vectors, rescaled to unit length (signature "
                   f"`ctx:{turns}+mean`; the turns come from the table of encoded utterances, so no context is "
                   "encoded again in training)" if args.get("context_pooling") == "turns"
                   else f"`v(c)` the embedding of the last {turns} context turns joined into one text")
        return (f"`v(.)` the frozen {name} sentence embedding (mean-pooled, L2-normalised; the paper's future work, "
                f"in place of its GloVe Twitter 200d word average) and {context}")
    centred = "centred " if args.get("center") == "True" else ""
    return (f"`v(.)` the {centred}average GloVe 6B 50d vector of a text's tokens (the paper: GloVe Twitter 200d, "
            "uncentred; here minus the mean average of the training utterances, stored as `center` in `config.json`, "
            "encoder `glove-6b-50d-centered` in the signature: raw 50-d averages of any two chit-chat utterances have "
            f"cosine ~0.9, which hides the differences between negative levels) over the last {turns} context turns")


def role_text(name: str) -> str:
    """Which bundled folder this is: the metric's default, or an option."""
    from dialeval.ssrem.checkpoint import DEFAULT_MODEL

    if f"dialeval/{name}" == DEFAULT_MODEL:
        return "It is the default of the metric `dialeval/ssrem`."
    return f"An option (`model=\"dialeval/{name}\"`); the default is `{DEFAULT_MODEL}`."


def target_text(args: dict) -> str:
    """The length rule on the true responses, when the run set one (a departure from the paper)."""
    n = int(args.get("target_min_tokens") or 0)
    return (f" The true responses obey the same rule (at least {n} word tokens; not in the paper): otherwise a "
            "short generic reply is never a negative and `f` learns to prefer it.") if n else ""


def penalty_text(args: dict) -> str:
    """The identity anchor of ``M``, when the run set one (a departure from the paper)."""
    penalty = float(args.get("identity_penalty") or 0)
    return (f", plus `{penalty:g} * ||M - I||^2` with `M` starting at the identity, so that `f` starts as the "
            "encoder's cosine (the untrained baseline) and training corrects it (not in the paper; a learned scale "
            "sets the softmax temperature and is not saved)") if penalty else ""


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
    return {MINILM: "384 x 384, MiniLM-L6", MPNET: "768 x 768, all-mpnet-base-v2"}.get(args.get("encoder"), "50 x 50")


def card_content(folder: Path) -> CardContent:
    """The card of ``folder`` from its report, the ablation's and the saved benchmark results."""
    main = _load(folder / REPORT_FILE)
    if main is None or "heldout" not in main:
        raise FileNotFoundError(f"{folder}: no finished training report; train first")
    ablation = _load(folder / ABLATION / REPORT_FILE)
    from dialeval.ssrem.spec import TABLE4_SETS

    stems = sorted(["ssrem-heldout", *(f"ssrem-{name}" for name in TABLE4_SETS)])
    loaded = {stem: folder_results(folder, RESULTS, stem) for stem in stems}
    saved_heldout = loaded.get("ssrem-heldout")
    benchmarks = {k: v for k, v in loaded.items() if v and "rows" in v}  # one Table 4 set per file
    measured = [
        Measured(dataset=result["dataset"], metric="spearman", value=result["rows"]["SSREM"]["spearman"],
                 dataset_name=result["dataset"])
        for result in benchmarks.values() if "SSREM" in result["rows"]
    ]
    return CardContent(card_body(folder.name, main, ablation, benchmarks, saved_heldout), measured)
