"""The card of the bundled ``hub/usl-dailydialog`` folder: what the model is, how it was trained, its
validation accuracies and the departures from the paper, from the folder's training report and the
saved ``benchmarks/results/usl-<set>.json`` measured with its weights
(:func:`dialeval.models.hub.folder_results`). Declared as the folder's ``CardSpec.content``
(:mod:`dialeval.usl.spec`) and written by :func:`dialeval.publish.write_model_card`.
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.core.spec import CardContent
from dialeval.models.hub import Measured, folder_results
from dialeval.models.shipped import CHECKOUT_ROOT
from dialeval.usl.heads import BUILD as BUILD_COMMAND

RESULTS = CHECKOUT_ROOT / "benchmarks" / "results"
REPORT_FILE = "dialeval_training.json"  # dialeval.core.training.STATE_FILE (which imports torch)
COST_FILE = "usl-cost-1thread.json"
FROM_EMPTY_CACHE_MINUTES = 56.0  # the bundled recipe's run that encoded every feature, two threads (usl-choices.md)
STATES_MINUTES = 19.6  # the states under U's top layer from an empty cache, two threads (usl-finetune.md)
ENCODER_NAMES = {"minilm-l6": "all-MiniLM-L6-v2 (6 layers, 384 dims)", "mpnet-base": "all-mpnet-base-v2 (BERT-base size)"}


def accuracy(report: dict, part: str) -> float:
    """A part's validation accuracy as the folder stores it (float16 heads; a report without it: the fit's)."""
    return report[part].get("stored_accuracy", report[part]["accuracy"])


def kinds_text(by_kind: dict) -> str:
    """U's validation accuracy per perturbation kind."""
    return ", ".join(f"{kind} {entry['accuracy']:.3f} (n={entry['n']})" for kind, entry in by_kind.items())


def yeh_rows(results: dict[str, dict]) -> str:
    """The Markdown rows of the measured correlations beside Yeh et al.'s."""
    from dialeval.usl.spec import YEH

    rows = ["| set | USL-H here (Spearman) | U | S | L | the paper's H | Yeh et al. USL-H |", "|---|---|---|---|---|---|---|"]
    for name, published in YEH.items():
        result = results.get(name)
        cells = ([f"{result['rows'][p]['spearman']:.3f}" if p in result["rows"] else "-"
                  for p in ("usl", "usl_u", "usl_s", "usl_l", "usl[H]")] if result else ["not run"] + [""] * 4)
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {published:.3f} |")
    measured = {name: r["rows"]["usl"]["spearman"] for name, r in results.items()}
    above = sum(value >= YEH[name] for name, value in measured.items())
    below = [name for name, value in measured.items() if value < YEH[name]]
    s_above = [name for name in below if results[name]["rows"]["usl_s"]["spearman"] >= YEH[name]]
    summary = (f"\nAt or above Yeh et al.'s USL-H on {above} of the {len(measured)} sets measured. The ratings were "
               "read only to fill this table: no choice of the weights read them, and the default hierarchy is the "
               "authors' scorer's.")
    if s_above:
        summary += (f" Of the {len(below)} set{'s' * (len(below) != 1)} below, S alone reads at or above Yeh's "
                    f"USL-H on {len(s_above)} ({', '.join(s_above)}): there U and L pull the fixed combination down.")
    rows.append(summary)
    return "\n".join(rows)


def cost_text() -> str:
    """The scoring cost per item on one CPU thread, from ``benchmarks/results/usl-cost-1thread.json``
    (``benchmarks/grid_cost.py --jobs usl``: the sets' seconds per item weighted by their sizes)."""
    path = RESULTS / COST_FILE
    if not path.is_file():
        return "Scoring cost: not measured."
    sets = [s for s in json.loads(path.read_text())["jobs"]["usl"]["sets"].values() if "seconds_per_item" in s]
    per_item = sum(s["full_set_seconds"] for s in sets) / sum(s["set_size"] for s in sets)
    return (f"Scoring cost: {per_item:.3f} s per item on one shared CPU thread, the encoder and L's LM loaded "
            f"(`benchmarks/results/{COST_FILE}`, `python benchmarks/grid_cost.py --jobs usl --n 10 --threads 1`).")


def time_text(report: dict) -> str:
    """How long the recipe takes from an empty cache, and how a stopped run goes on."""
    text = ("the features, NLLs and states are cached in chunks and U's tuning by epoch, so a run stopped by "
            "`--minutes` goes on with the same command and a rerun reads them: from an empty cache the features "
            f"and heads took {FROM_EMPTY_CACHE_MINUTES} minutes on two threads (`benchmarks/results/usl-choices.md`)")
    if "tuned" in report["u"]:
        minutes = sum(report["u"]["tuned"]["epoch_minutes"])
        text += (f", the states under U's top layer {STATES_MINUTES} (`benchmarks/results/usl-finetune.md`) and U's "
                 f"{report['u']['tuned']['epochs']} tuning epochs {minutes:.1f}")
    return text


def u_text(report: dict) -> str:
    """U's encoder: its own LoRA-tuned top layer (a report with ``u.tuned``) or the frozen features."""
    if "tuned" not in report["u"]:
        return ("- **U's encoder**: the frozen features, as S's. A LoRA on the top layer reads U better "
                "(`benchmarks/results/usl-finetune.md`) and is not in this folder.")
    tuned, frozen = report["u"]["tuned"], report["u"]["frozen_head"]
    return (f"- **U's encoder**: as the paper fine-tunes BERT for U, U reads its own copy of the encoder's top "
            f"{tuned['top']} layer{'s' * (tuned['top'] != 1)} with a LoRA adapter (rank {tuned['rank']}, `u_encoder/`) "
            f"over the frozen lower layers' states, from the same forward as S's features (one layer more per "
            f"response, not a second encoder); adapter and linear head learnt together over cached states (lr "
            f"{tuned['lr']}, {tuned['epochs']} epochs, the first of best validation accuracy kept: epoch "
            f"{tuned['epoch']}, curve {', '.join(f'{a:.3f}' for a in tuned['curve'])}). Validation accuracy "
            f"{tuned['accuracy']:.3f} against {frozen['accuracy']:.3f} for the best head on the frozen features "
            f"(hidden {frozen['hidden']}); USL-H on the six sets moved little either way "
            "(`benchmarks/results/usl-finetune.md`).")


def s_input_text(config: dict) -> str:
    """The departure of S's input (``config["s_input"]``, the pair when absent)."""
    if config.get("s_input", "pair") == "pair":
        return ("- **S's input**: the context (its last 64 tokens) and the response (its first 32) read together, "
                "as the paper's `[CLS] c [SEP] r [SEP]`.")
    return ("- **S's input**: the context (its last 64 tokens) and the response (its first 32) encoded apart, the head "
            "reading `[c; r; c*r; |c-r|]` of their features (a siamese classifier) instead of the pair read together "
            "(the paper's `[CLS] c [SEP] r [SEP]` through a fine-tuned BERT): a frozen sentence encoder compares two "
            "texts' features better than it pools a pair it was never trained on (validation accuracy below). "
            "The response's features are U's, so S costs one context encoding more.")


def card_body(report: dict, config: dict, results: dict[str, dict]) -> str:
    args, data = report["args"], report["data"]
    encoder = ENCODER_NAMES.get(config["encoder"], config["encoder"])
    tuned = "tuned" in report["u"]  # U reads its own LoRA-tuned top layers (u_encoder/)
    adapter_file = ("`u_encoder/` (U's LoRA adapter on the encoder's top layer, peft's layout with its base record), "
                    if tuned else "")
    tuned_layers = "U's tuned layers, " if tuned else ""
    return f"""
# dialeval/usl-dailydialog

**USL-H** (Phy, Zhao & Aizawa 2020, *Deconstruct to Reconstruct a Configurable Evaluation Metric for
Open-Domain Dialogue Systems*, COLING), trained on DailyDialog alone, the default of the metric
`dialeval/usl`: a response's **U**nderstandability (valid utterance prediction), **S**ensibleness
(next utterance prediction given the context) and specificity (**L**, its negative log-likelihood),
combined hierarchically as the authors' released scorer does: `USL-H = 0.33*U + 0.33*S + 0.34*S*L` (their
`Scorer.get_score` reports it as USL-HS, and Yeh et al. 2021 read that value for every USL-H number below;
`hierarchy="H"` gives the paper's and the authors' README's `0.33*U + 0.33*U*S + 0.34*U*S*L`, its column
below). The default follows the authors' code so that our numbers and the published ones are one formula (both
columns were seen when the default changed: CHANGELOG).

Files: `heads.safetensors` (the U and S classifier heads), {adapter_file}`config.json` (encoder, S's input, head
sizes, {tuned_layers}L's LM and its NLL quartiles), `dialeval_training.json` (arguments, data sizes,
accuracies per epoch).

## Departures from the paper (named, none reads a human rating)

- **Encoder**: the paper fine-tunes BERT-base under U and S; here {encoder} stays frozen under S, and the
  heads learn over `[max; mean]` of its last hidden states (the paper max-pools), so training is CPU minutes
  over cached features. Each head's hidden size (0, the paper's linear layer, or 256) and stopping epoch were
  chosen by accuracy on DailyDialog's validation split, and so were the encoder (all-mpnet-base-v2 on 4,000
  training responses against all-MiniLM-L6-v2 on 20,000: U 0.763 vs 0.738, S 0.825 vs 0.810) and the training
  size on it (20,000 responses / pairs against 4,000: U 0.806 vs 0.763, S 0.843 vs 0.825;
  `benchmarks/results/usl-choices.md`). S's own LoRA-tuned top layer (U's recipe, shared by context and
  response) read S worse than its frozen head on the same 8,000 pairs (0.810, then 0.763 after a second epoch; at
  lr 1e-4 0.751, then 0.782; against 0.828; `benchmarks/results/usl-s-tuning.md`).
{u_text(report)}
{s_input_text(config)}
- **L**: no masked-LM weights are offline (all-mpnet-base-v2 keeps no MLM head), so L reads the summed token
  NLL of the response alone under `{config['lm']}` (SmolLM2-135M-Instruct LoRA-tuned on DailyDialog, the
  corpus of the paper's MLM) instead of BERT's pseudo-log-likelihood; normalised as the authors do: clipped
  to the quartiles of the validation responses' NLL, `[{config['nll_quartiles'][0]:.2f}, {config['nll_quartiles'][1]:.2f}]`
  nats ({data['nll_responses']:,} responses), and scaled to [0, 1]. Gemma-3-270M's DailyDialog adapter reads the
  responses better (1.106 bits per character against 1.274, `benchmarks/results/lm-bits-per-char-responses.json`),
  but as L's LM it moves no set by more than 0.009 and costs 2.4x as much (`--lm dialeval/gemma3-dailydialog`,
  `benchmarks/results/usl-choices.md`; keeping SmolLM2 read those six sets).
- **U's data**: the authors' perturbations and probabilities (negatives: reorder 0.3, word drop 0.3, word
  repeat 0.4; positives: unchanged 0.7, no final punctuation, simplified to nouns/verbs/prepositions,
  articles and clitics removed, 0.1 each) over Penn-style word tokens instead of BERT word pieces; every
  training response gives its positive and its negative (the authors draw one of the two).
- **Size**: {data['u_train_texts']:,} U texts from {int(args['u_responses']):,} training responses and
  {data['s_train_pairs']:,} S rows from {int(args['s_pairs']):,} training contexts (half the true next turn, half
  the next turn of another sampled context: the authors draw from all training responses), of DailyDialog's
  {data['train_pool']:,} distinct training responses (shared CPU: each distinct text encoded once,
  {data.get('encoded_texts', 0):,} texts and {data.get('encoded_contexts', 0):,} contexts).

How each choice was made (validation accuracy only, the same validation items): `benchmarks/results/usl-choices.md`
(`python benchmarks/usl_choices.py --encoder minilm-l6 --pair`; the encoder's section from the training reports).

## Training

`{BUILD_COMMAND}` ({report['wall_minutes']} minutes on {args['threads']} shared CPU thread(s), no GPU, for this folder's last
run; {time_text(report)}).

| part | validation accuracy (DailyDialog validation split) | head |
|---|---|---|
| U | {accuracy(report, 'u'):.3f} ({data['u_valid_texts']:,} texts) | hidden {report['u']['hidden']} |
| S | {accuracy(report, 's'):.3f} ({data['s_valid_pairs']:,} pairs) | hidden {report['s']['hidden']} |

The heads are stored in float16 (read back into float32); the accuracies are the stored heads' (before
rounding: U {report['u']['accuracy']:.3f}, S {report['s']['accuracy']:.3f}).

U per kind: {kinds_text(report['u']['by_kind'])}.

{cost_text()}

## Correlation with human judgment (shared sets; Yeh et al. 2021's USL-H, BERT-base, beside)

Each row from `benchmarks/results/usl-<set>.json` (`dialeval benchmark --metric usl --dataset usl-<set>`).
Phy et al. report USL-H on their own annotations of DailyDialog responses, which are not among these sets;
Yeh et al.'s numbers, for the authors' BERT-base weights, are the comparable ones.

{yeh_rows(results)}

## Limitations

English, DailyDialog-style chit-chat; the encoder, of the paper's BERT-base size, is frozen where the paper
fine-tunes it{", but for U's adapter on its top layer" if tuned else ""}; L is a causal LM's likelihood, not a masked LM's. On the
behavioural suite (`benchmarks/results/usl-behaviour-50.md`, `dialeval behaviour --metric usl --n 50`) every
declared kind passes: echoes of the last and own turn (1.00, 1.00), word salads (0.98), generic replies (0.96)
and another dialogue's reply (0.96) score below the real reply, and the lowercase and paraphrase controls move
the score by -0.48 and -0.46 standard deviations. Under the paper's `hierarchy="H"` the same 50 contexts pass
every kind too (generic 0.92, another dialogue's reply 0.92) but the controls move by -1.33 and -1.26
(`usl-behaviour-50-hierarchy-h.md`: U, which gates S and L there,
reads the controls' stripped punctuation and rewording as corruptions). Scores are comparable only under one
signature.
"""




def card_content(folder: Path) -> CardContent:
    """The card of ``folder`` from its report and the saved benchmark results."""
    from dialeval.usl.spec import YEH

    path = folder / REPORT_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no training report; train first ({BUILD_COMMAND})")
    report = json.loads(path.read_text())
    config = json.loads((folder / "config.json").read_text())
    results = {name: r for name in YEH if (r := folder_results(folder, RESULTS, f"usl-{name}"))}
    measured = [Measured(dataset=f"dailydialog-validation-{p}", metric="accuracy", value=accuracy(report, p),
                         task="text-classification", dataset_name=f"DailyDialog validation, {name}")
                for p, name in (("u", "U: real responses against their corruptions"),
                                ("s", "S: true next turns against random responses"))]
    measured += [Measured(dataset=name, metric="spearman", value=r["rows"]["usl"]["spearman"], dataset_name=name)
                 for name, r in results.items()]
    return CardContent(card_body(report, config, results), measured)
