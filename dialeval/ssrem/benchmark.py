"""Bak & Oh 2020: Table 4 (SSREM and baselines vs. human scores) and Section 6 (held-out negatives).

* :func:`table4`: on a human-judgment set with references, Spearman and Pearson of SSREM (``h``,
  Section 3.4, with the same scaling as the module and the CLI: the checkpoint's stored min-max
  constants, ``scaling="model"``; ``scaling="set"`` gives the paper's min-max over the set), RSREM (the random-negative ablation), SSREM's ``f`` and ``g``
  alone, and BLEU-4 / ROUGE-L / embedding average (``dialeval.multiref.scorer``, single reference as the
  paper), beside the paper's Table 4 (its Twitter corpus; the sets here are others). Sets:
  ``multiref-mturk`` (Gupta et al. 2019, 500 responses, the original reply as reference) and GRADE's
  ``convai2`` (600), ``dailydialog`` (300), ``empatheticdialogues`` (300) (Huang et al. 2020).
* :func:`heldout`: Section 6 on the test 10 % of the training corpus: mean ``f`` of the true
  response vs. each negative type, SSREM vs. RSREM, bootstrap 95 % intervals, the paired difference
  SSREM - RSREM of ``P(f(true) > f(negative))``, the cosine between their ``M``, and the cosine of
  each negative type with the true response beside the paper's Table 2.
"""

from __future__ import annotations

from typing import Any

from dialeval.data import paper
from dialeval.stats.correlation import correlate_all
from dialeval.data import JudgmentItem
from dialeval.grade.data import load_grade
from dialeval.multiref.data import load_multiref_mturk
from dialeval.core.tables import fmt, fmt_p, format_table
from dialeval.ssrem.spec import TABLE4_SETS

BASELINES = {"BLEU": "bleu4", "ROUGE": "rougeL", "EMB": "embedding_average"}
PAPER_ROWS = ("BLEU", "ROUGE", "EMB", "RUBER", "RSREM", "SSREM")
TABLE2_COLUMNS = {"SC": "same_conversation", "SP": "same_partner", "SS": "same_speaker", "RN": "random"}


def load_set(dataset: str) -> list[JudgmentItem]:
    if dataset == "multiref-mturk":
        return load_multiref_mturk(multi_reference=False)
    if dataset.startswith("grade-"):
        return load_grade(dataset)
    raise ValueError(f"unknown SSREM benchmark set {dataset!r}; choose from {TABLE4_SETS}")


def table4(dataset: str, model: str | None = None, ablation: str | None = None, mover: str = "sms",
           scaling: str = "model", word_vectors: str | None = None) -> dict[str, Any]:
    """One set in the layout of Bak & Oh (2020) Table 4."""
    from dialeval.core.degenerate import floors_as_missing
    from dialeval.multiref.runner import run_multiref
    from dialeval.ssrem.scales import SCALES
    from dialeval.ssrem.scorer import DEFAULT_MODEL, SSREMScorer, default_ablation

    items = load_set(dataset)
    contexts, responses = [it.context for it in items], [it.response for it in items]
    references = [it.references for it in items]
    baseline, baseline_signature = run_multiref([vars(it) for it in items], list(BASELINES.values()), word_vectors)
    rows = {name: baseline[sub] for name, sub in BASELINES.items()}
    signatures = {"baselines": baseline_signature}
    scored = {}
    model = model or DEFAULT_MODEL
    for name, folder in (("RSREM", ablation or default_ablation(model)), ("SSREM", model)):
        if folder is not None:
            scored[name] = SSREMScorer(folder, word_vectors).score(contexts, responses, references,
                                                                   scaling=scaling, mover=mover)
            rows[name] = scored[name]["ssrem_scores"]
            signatures[name] = scored[name]["signature"]
    # a flagged reply's f sits at its floor (-1000), which would dominate a Pearson correlation: left
    # out, as the meta-evaluation grid does (dialeval.core.degenerate.floors_as_missing)
    by_score = floors_as_missing({"ssrem_f": scored["SSREM"]["ssrem_f_scores"]}, scored["SSREM"]["flags"], SCALES)
    rows["SSREM f (context)"] = by_score["ssrem_f"]
    rows["SSREM g (reference)"] = scored["SSREM"]["ssrem_g_scores"]
    return {
        "dataset": dataset, "metric": "ssrem", "n": len(items), "signatures": signatures,
        "scaling": scaling,
        "rows": correlate_all(rows, [it.score for it in items]),
        "paper": paper.table("bak2020_ssrem", "table4"),
    }


def table4_all(**options: Any) -> dict[str, Any]:
    """:func:`table4` on every set of :data:`TABLE4_SETS`."""
    return {"dataset": "ssrem-all", "metric": "ssrem", "sets": {s: table4(s, **options) for s in TABLE4_SETS}}


def _table4_cells(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    published = result["paper"]
    names = list(dict.fromkeys([*PAPER_ROWS, *result["rows"]]))
    rows = []
    for name in names:
        c = result["rows"].get(name)
        printed = published["rows"].get(name)
        measured = [fmt(c["spearman"]), fmt_p(c["spearman_p"]), fmt(c["pearson"]), fmt_p(c["pearson_p"])] if c \
            else ["not implemented" if name == "RUBER" else "n/a", "", "", ""]
        rows.append([name, *measured, fmt(printed[0]) if printed else "", fmt(printed[2]) if printed else ""])
    headers = ["metric", "spearman", "p", "pearson", "p", "paper spearman", "paper pearson"]
    return headers, rows


def format_table4(result: dict[str, Any]) -> str:
    if "sets" in result:
        return "\n\n".join(format_table4(r) for r in result["sets"].values())
    headers, rows = _table4_cells(result)
    return "\n".join([
        f"SSREM on {result['dataset']} (n={result['n']}): correlation with the human scores",
        format_table(headers, rows),
        *[f"{name}: {sig}" for name, sig in result["signatures"].items()],
        f"paper: {paper.source('bak2020_ssrem', 'table4')} (Twitter, generated responses; not these sets)",
    ])


def format_table4_rows(result: dict[str, Any]) -> str:
    """A Markdown table of :func:`table4` (for the model card)."""
    headers, rows = _table4_cells(result)
    lines = [f"**{result['dataset']}** (n={result['n']})", "", "| " + " | ".join(headers) + " |",
             "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def heldout(model: str | None = None, ablation: str | None = None, limit: int | None = None,
            split: str = "test") -> dict[str, Any]:
    """Section 6 for SSREM and RSREM on the held-out split of the corpus named in the checkpoint."""
    from dialeval.ssrem.corpus import load_corpus
    from dialeval.ssrem.heldout import heldout_compare, heldout_negatives
    from dialeval.ssrem.scorer import DEFAULT_MODEL, SSREMScorer, default_ablation

    out: dict[str, Any] = {"dataset": "ssrem-heldout", "metric": "ssrem", "split": split}
    scorers = {}
    model = model or DEFAULT_MODEL
    for name, folder in (("ssrem", model), ("rsrem", ablation or default_ablation(model))):
        if folder is None:
            continue
        scorers[name] = scorer = SSREMScorer(folder)
        corpus = load_corpus(scorer.config["corpus"])
        # both on the pairs of SSREM's pools (its min_tokens), so the rows compare like with like
        out[name] = heldout_negatives(scorer, corpus, split, limit=limit,
                                      min_tokens=int(scorers["ssrem"].config.get("min_tokens", 0)))
        out[f"signature_{name}"] = scorer.model_name
    if len(scorers) == 2:
        out["ssrem_minus_rsrem"] = heldout_compare(scorers["ssrem"], scorers["rsrem"], corpus, split, limit=limit)
    out["paper"] = paper.table("bak2020_ssrem", "table2")
    return out


def _with_ci(stat: dict | None, digits: int = 4) -> str:
    if stat and stat["n"] and "low" in stat:  # bootstrap interval
        return f"{fmt(stat['mean'])} [{fmt(stat['low'])}, {fmt(stat['high'])}]"
    return f"{fmt(stat['mean'])} ± {fmt(stat['ci95'], digits)}" if stat and stat["n"] else "n/a"


def gradient_line(result: dict[str, Any], key: str = "similarity") -> str:
    """The held-out difficulty gradient: levels in Table 2's order joined by ``>`` when the bootstrap
    intervals do not overlap, by ``~`` when they do."""
    stats = (result.get("ssrem") or {}).get(key) or {}
    kinds = [k for k in TABLE2_COLUMNS if k in stats and "low" in stats[k]]
    if not kinds:
        return ""
    text = kinds[0]
    for before, after in zip(kinds, kinds[1:]):
        text += (" > " if stats[before]["low"] > stats[after]["high"] else " ~ ") + after
    return text


def verdict(result: dict[str, Any]) -> str:
    """The paper's claim (SSREM > RSREM) tested on the paired held-out differences."""
    cmp = result.get("ssrem_minus_rsrem")
    if not cmp:
        return "RSREM not available: the claim SSREM > RSREM is not tested."
    better = [k for k, d in cmp["difference"].items() if d["low"] > 0]
    worse = [k for k, d in cmp["difference"].items() if d["high"] < 0]
    if better and not worse:
        return f"The paper's claim SSREM > RSREM holds here for {', '.join(better)} (paired intervals above 0)."
    if not better and not worse:
        return ("The paper's claim SSREM > RSREM is not supported here: for every negative level the paired "
                "95 % interval of SSREM - RSREM contains 0 "
                f"(their M matrices have cosine {cmp['parameter_cosine']:.3f}).")
    return f"Mixed: SSREM better for {better or 'none'}, RSREM better for {worse or 'none'}."


def compare_lines(result: dict[str, Any]) -> list[str]:
    """The paired SSREM - RSREM differences and the parameter cosine, one line each."""
    cmp = result.get("ssrem_minus_rsrem")
    if not cmp:
        return ["RSREM not available: no comparison."]
    parts = []
    for kind, d in cmp["difference"].items():
        verdict = "SSREM better" if d["low"] > 0 else "RSREM better" if d["high"] < 0 else "no difference"
        parts.append(f"{kind} {d['mean']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}] ({verdict})")
    return [f"SSREM - RSREM, P(f(GT) > f(negative)), paired bootstrap 95 % interval: " + "; ".join(parts),
            f"cosine between the SSREM and RSREM M matrices: {cmp['parameter_cosine']:.3f}"]


def _heldout_cells(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    published = result["paper"]
    columns, values = published["columns"], next(iter(published["rows"].values()))
    rows = []
    for kind in ("GT", *TABLE2_COLUMNS):
        row = [kind]
        for name in ("ssrem", "rsrem"):
            r = result.get(name)
            f = r["f"].get(kind) if r else None
            win = r["win_rate"].get(kind) if r else None
            row += [_with_ci(f), _with_ci(win, 3) if win else ""]
        main = result.get("ssrem") or {"similarity": {}, "f": {}}
        row.append(_with_ci(main["similarity"].get(kind)) if kind != "GT" else "")
        row.append(_with_ci(main.get("similarity_raw", {}).get(kind)) if kind != "GT" else "")
        row.append(str(main["f"][kind]["n"]) if kind in main["f"] else "")
        if kind in TABLE2_COLUMNS:
            i = columns.index(f"{TABLE2_COLUMNS[kind]}_mean")
            row.append(f"{fmt(values[i])} ± {fmt(values[i + 1], 4)}")
        else:
            row.append("")
        rows.append(row)
    headers = ["candidate", "SSREM mean f", "P(f(GT) > f) [95 % bootstrap]", "RSREM mean f",
               "P(f(GT) > f) [95 % bootstrap]", "cos(v, v(GT)) [95 % bootstrap]", "raw average cos [95 % bootstrap]", "n",
               "paper Table 2 similarity"]
    return headers, rows


def format_heldout(result: dict[str, Any]) -> str:
    headers, rows = _heldout_cells(result)
    main = result.get("ssrem") or {}
    return "\n".join([
        (f"Section 6: f of the true response (GT) vs. speaker-sensitive negatives on the held-out "
         f"{result['split']} split ({main.get('pairs')} pairs; mean f with its normal 95 % CI; one negative of "
         f"each type per pair, own pool only, pools of utterances with >= {main.get('min_tokens', 0)} words; "
         f"cosine with encoder {main.get('encoder', 'n/a')})"),
        format_table(headers, rows),
        f"difficulty gradient (cosine with the true response, {main.get('encoder', 'n/a')}; '>' intervals apart, "
        f"'~' overlapping): {gradient_line(result)}; raw average: {gradient_line(result, 'similarity_raw')}; "
        "paper Table 2: SC > SP > SS > RN",
        *compare_lines(result),
        verdict(result),
        *[f"{k[len('signature_'):]}: {v}" for k, v in result.items() if k.startswith("signature_")],
        (f"paper: {paper.source('bak2020_ssrem', 'table2')} (mean similarity of the sets on Twitter, GloVe "
         "Twitter 200d; its CI digits are reconstructed)"),
    ])


def format_heldout_rows(result: dict[str, Any]) -> list[str]:
    """:func:`format_heldout`'s table as Markdown lines (for the model card)."""
    headers, rows = _heldout_cells({**result, "split": "test", "paper": paper.table("bak2020_ssrem", "table2")})
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + ["| " + " | ".join(r) + " |" for r in rows]
