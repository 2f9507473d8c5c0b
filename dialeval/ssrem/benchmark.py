"""Bak & Oh 2020: Table 4 (SSREM and baselines vs. human scores) and Section 6 (held-out negatives).

* :func:`table4`: on a human-judgment set with references, Spearman and Pearson of SSREM (``h``,
  min-max over the set, Section 3.4), RSREM (the random-negative ablation), SSREM's ``f`` and ``g``
  alone, and BLEU-4 / ROUGE-L / embedding average (``dialeval.multiref.scorer``, single reference as the
  paper), beside the paper's Table 4 (its Twitter corpus; the sets here are others). Sets:
  ``multiref-mturk`` (Gupta et al. 2019, 500 responses, the original reply as reference) and GRADE's
  ``convai2`` (600), ``dailydialog`` (300), ``empatheticdialogues`` (300) (Huang et al. 2020).
* :func:`heldout`: Section 6 on the test 10 % of the training corpus: mean ``f`` of the true
  response vs. each negative type, SSREM vs. RSREM, 95 % CIs, and the cosine of each negative type
  with the true response beside the paper's Table 2.
"""

from __future__ import annotations

from typing import Any

from dialeval import paper
from dialeval.correlation import correlate_all
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
           scaling: str = "set", word_vectors: str | None = None) -> dict[str, Any]:
    """One set in the layout of Bak & Oh (2020) Table 4."""
    from dialeval.multiref.runner import run_multiref
    from dialeval.ssrem.scorer import DEFAULT_MODEL, SSREMScorer, default_ablation

    items = load_set(dataset)
    contexts, responses = [it.context for it in items], [it.response for it in items]
    references = [it.references for it in items]
    baseline, baseline_signature = run_multiref([vars(it) for it in items], list(BASELINES.values()), word_vectors)
    rows = {name: baseline[sub] for name, sub in BASELINES.items()}
    signatures = {"baselines": baseline_signature}
    scored = {}
    for name, folder in (("RSREM", ablation or default_ablation()), ("SSREM", model or DEFAULT_MODEL)):
        if folder is not None:
            scored[name] = SSREMScorer(folder, word_vectors).score(contexts, responses, references,
                                                                   scaling=scaling, mover=mover)
            rows[name] = scored[name]["ssrem_scores"]
            signatures[name] = scored[name]["signature"]
    rows["SSREM f (context)"] = scored["SSREM"]["ssrem_f_scores"]
    rows["SSREM g (reference)"] = scored["SSREM"]["ssrem_g_scores"]
    return {
        "dataset": dataset, "metric": "ssrem", "n": len(items), "signatures": signatures,
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
    from dialeval.ssrem.scorer import DEFAULT_MODEL, SSREMScorer, default_ablation, heldout_negatives, load_corpus

    out: dict[str, Any] = {"dataset": "ssrem-heldout", "metric": "ssrem", "split": split}
    for name, folder in (("ssrem", model or DEFAULT_MODEL), ("rsrem", ablation or default_ablation())):
        if folder is None:
            continue
        scorer = SSREMScorer(folder)
        out[name] = heldout_negatives(scorer, load_corpus(scorer.config["corpus"]), split, limit=limit)
        out[f"signature_{name}"] = scorer.model_name
    out["paper"] = paper.table("bak2020_ssrem", "table2")
    return out


def _with_ci(stat: dict | None, digits: int = 4) -> str:
    return f"{fmt(stat['mean'])} ± {fmt(stat['ci95'], digits)}" if stat and stat["n"] else "n/a"


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
        row.append(str(main["f"][kind]["n"]) if kind in main["f"] else "")
        if kind in TABLE2_COLUMNS:
            i = columns.index(f"{TABLE2_COLUMNS[kind]}_mean")
            row.append(f"{fmt(values[i])} ± {fmt(values[i + 1], 4)}")
        else:
            row.append("")
        rows.append(row)
    headers = ["candidate", "SSREM mean f", "P(f(GT) > f)", "RSREM mean f", "P(f(GT) > f)",
               "cos(v, v(GT))", "n", "paper Table 2 similarity"]
    return headers, rows


def format_heldout(result: dict[str, Any]) -> str:
    headers, rows = _heldout_cells(result)
    pairs = (result.get("ssrem") or {}).get("pairs")
    return "\n".join([
        (f"Section 6: f of the true response (GT) vs. speaker-sensitive negatives on the held-out "
         f"{result['split']} split ({pairs} pairs; 95 % CI; one negative of each type per pair, own pool only)"),
        format_table(headers, rows),
        *[f"{k[len('signature_'):]}: {v}" for k, v in result.items() if k.startswith("signature_")],
        (f"paper: {paper.source('bak2020_ssrem', 'table2')} (mean similarity of the sets on Twitter, GloVe "
         "Twitter 200d; its CI digits are reconstructed)"),
    ])


def format_heldout_rows(result: dict[str, Any]) -> list[str]:
    """:func:`format_heldout`'s table as Markdown lines (for the model card)."""
    headers, rows = _heldout_cells({**result, "split": "test", "paper": paper.table("bak2020_ssrem", "table2")})
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + ["| " + " | ".join(r) + " |" for r in rows]
