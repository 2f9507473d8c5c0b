"""The card of SSREM's bundled folder (``hub/ssrem-chitchat``): what the model is, how it was
trained, Section 6's held-out numbers and the Table 4 correlations, from the folder's training
reports and the saved ``benchmarks/results/ssrem-*.json``. Declared as the folder's
``CardSpec.content`` (:mod:`dialeval.ssrem.spec`) and written by :func:`dialeval.publish.write_model_card`.
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.core.spec import CardContent
from dialeval.models.hub import Measured
from dialeval.models.shipped import CHECKOUT_ROOT
from dialeval.ssrem.checkpoint import ABLATION
from dialeval.ssrem.encoders import MINILM, MPNET

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
    return {MINILM: "384 x 384, MiniLM-L6", MPNET: "768 x 768, all-mpnet-base-v2"}.get(args.get("encoder"), "50 x 50")


def card_content(folder: Path) -> CardContent:
    """The card of ``folder`` from its report, the ablation's and the saved benchmark results."""
    main = _load(folder / REPORT_FILE)
    if main is None or "heldout" not in main:
        raise FileNotFoundError(f"{folder}: no finished training report; train first")
    ablation = _load(folder / ABLATION / REPORT_FILE)
    loaded = {p.stem: _load(p) for p in sorted(RESULTS.glob("ssrem-*.json"))}
    saved_heldout = loaded.get("ssrem-heldout")
    benchmarks = {k: v for k, v in loaded.items() if v and "rows" in v}  # one Table 4 set per file
    measured = [
        Measured(dataset=result["dataset"], metric="spearman", value=result["rows"]["SSREM"]["spearman"],
                 dataset_name=result["dataset"])
        for result in benchmarks.values() if "SSREM" in result["rows"]
    ]
    return CardContent(card_body(folder.name, main, ablation, benchmarks, saved_heldout), measured)
