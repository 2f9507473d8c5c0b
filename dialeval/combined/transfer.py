"""Leave-one-source-out comparison of the combined metric's designs against GRADE alone (issue 57):
``dialeval benchmark --metric combined --dataset combined-loso-source``.

Leaving one *set* out leaks: its sibling sets (the same paper's systems, raters and scale) stay in
training. Here every set is scored by the design's model trained without its *source*, the sets of
the metric that owns it (:func:`dialeval.combined.training.source_of`: FED's 2, GRADE's 3,
holistic's 3, multiref's 1), exactly as :func:`dialeval.combined.training.fit_bundle` holds them out.
For every design (:data:`dialeval.combined.designs.DESIGNS`) and set: the Spearman with the human
ratings, its seeded 95 % percentile bootstrap interval, GRADE's on the same set and Williams'
one-sided p of "design > GRADE" (the two correlations share the human scores); an item a component
of the design flagged scores 0, as the metric scores it. Per source, over its sets where GRADE
applies (not on ``holistic-fluency``, which has no contexts): the mean Spearman of each, their
difference and the paired bootstrap's one-sided p (items resampled within each set, the same draw for
both; the share of resamples where the design's mean is not above GRADE's). A design *beats GRADE on
a source* when its mean is higher there; :func:`choose` takes the design that does on the most
sources, fewer free weights on a tie.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from dialeval.core.tables import fmt, fmt_p, format_table as text_table

BASELINE = "grade"  # the feature to beat: GRADE alone


def _paired(sets: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_resamples: int, seed: int) -> np.ndarray:
    """Per resample, the mean over ``sets`` ((design, baseline, human) on the items where all are
    finite) of Spearman(design) - Spearman(baseline); items resampled within each set."""
    from dialeval.stats.correlation import rowwise

    total = np.zeros(n_resamples)
    for a, b, h in sets:
        idx = np.random.default_rng(seed).integers(0, len(h), size=(n_resamples, len(h)))
        total += rowwise("spearman", a[idx], h[idx]) - rowwise("spearman", b[idx], h[idx])
    return total / len(sets)


def evaluate(rows: Mapping[str, tuple[Mapping[str, Sequence[float]], Sequence[float]]],
             flags: Mapping[str, Mapping[str, Sequence[Sequence[str]]]] | None = None,
             sources: Mapping[str, str] | None = None, designs: Sequence[Any] | None = None,
             n_resamples: int = 1000, seed: int = 0, ridge: float | None = None) -> dict[str, Any]:
    """Every design of ``designs`` (default all) on ``rows`` (set -> (feature table, human scores)),
    leave-one-source-out; ``flags``: set -> component job -> per-item flags."""
    from dialeval.combined.benchmark import spearman
    from dialeval.combined.designs import DESIGNS
    from dialeval.combined.features import jobs_of
    from dialeval.combined.model import RIDGE
    from dialeval.combined.training import fit_bundle, source_of
    from dialeval.stats.correlation import bootstrap_interval, williams_spearman

    sources = {name: source_of(name) for name in rows} if sources is None else dict(sources)
    ridge = RIDGE if ridge is None else ridge
    results = []
    for design in designs or DESIGNS:
        bundle = fit_bundle(rows, ridge, design, sources)
        per_set = []
        for name, (table, human) in rows.items():
            row: dict[str, Any] = {"set": name, "source": sources[name], "n": len(human)}
            grade = table.get(BASELINE)
            if grade is not None:
                row |= {"grade": spearman(grade, human),
                        "grade_interval": bootstrap_interval(grade, human, "spearman", n_resamples, seed=seed)}
            model = bundle.held_out.get(name)
            if model is not None:
                read = [per_item for job, per_item in (flags or {}).get(name, {}).items() if job in jobs_of(model.features)]
                flagged = [any(per_item[i] for per_item in read) for i in range(len(human))]
                scores = [0.0 if f else s for f, s in zip(flagged, model.predict(table))]
                row |= {"features": model.features, "trained_on": model.sets, "scores": scores,
                        "rho": spearman(scores, human),
                        "interval": bootstrap_interval(scores, human, "spearman", n_resamples, seed=seed)}
                if grade is not None:
                    row["williams_p"] = williams_spearman(scores, grade, human)
            per_set.append(row)
        results.append({"design": design.name, "summary": design.summary, "free_weights": design.free_weights(),
                        "reads_ratings": design.reads_ratings, "inputs": design.inputs, "fit": design.fit,
                        "sets": per_set, "sources": _by_source(per_set, rows, n_resamples, seed),
                        "weights": [vars(m) for m in bundle.models]})
    for result in results:
        result["sources_won"] = sum(1 for s in result["sources"] if s.get("wins"))
        result["sources_with_grade"] = len({r["source"] for r in result["sets"] if "grade" in r})
        result["sets_won"] = sum(1 for r in result["sets"] if "rho" in r and "grade" in r and r["rho"] > r["grade"])
        for r in result["sets"]:
            r.pop("scores", None)
    return {"designs": results, "chosen": choose(results), "n_resamples": n_resamples, "seed": seed, "ridge": ridge,
            "sources": sorted(set(sources.values()))}


def _by_source(per_set: list[dict[str, Any]], rows: Mapping[str, Any], n_resamples: int, seed: int) -> list[dict]:
    """Per source: the means over its sets where both the design and GRADE score, the paired test."""
    out = []
    for source in sorted({r["source"] for r in per_set}):
        both = [r for r in per_set if r["source"] == source and "rho" in r and "grade" in r]
        entry: dict[str, Any] = {"source": source, "sets": [r["set"] for r in both]}
        if both:
            arrays = []
            for r in both:
                table, human = rows[r["set"]]
                a, b, h = (np.asarray(v, dtype=float) for v in (r["scores"], table[BASELINE], human))
                keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
                arrays.append((a[keep], b[keep], h[keep]))
            diffs = _paired(arrays, n_resamples, seed)
            diffs = diffs[np.isfinite(diffs)]
            entry |= {"rho": float(np.mean([r["rho"] for r in both])),
                      "grade": float(np.mean([r["grade"] for r in both]))}
            entry |= {"difference": entry["rho"] - entry["grade"], "wins": entry["rho"] > entry["grade"],
                      "p": float(np.mean(diffs <= 0)) if len(diffs) else math.nan}
        out.append(entry)
    return out


def choose(results: Sequence[Mapping[str, Any]]) -> str:
    """The design that beats GRADE on the most sources; on a tie the one with fewer free weights,
    then the earlier one."""
    order = {r["design"]: i for i, r in enumerate(results)}
    return min(results, key=lambda r: (-r["sources_won"], r["free_weights"], order[r["design"]]))["design"]


def leave_one_source_out(sets: Sequence[str] | None = None, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """:func:`evaluate` on the shared sets' component scores (:func:`dialeval.combined.training.gather`,
    through the score cache: run the grid first)."""
    from dialeval.combined.training import gather
    from dialeval.registry import judgment_sets

    rows, components, flags = gather(list(sets or judgment_sets()))
    result = evaluate(rows, flags, n_resamples=n_resamples, seed=seed)
    return result | {"components": components}


def _interval(pair: Sequence[float] | None) -> str:
    return f"[{fmt(pair[0])}, {fmt(pair[1])}]" if pair else ""


def design_block(d: Mapping[str, Any]) -> str:
    """One design's per-set and per-source tables, under a line that says what it is."""
    sets = text_table([
        "set", "source", "n", "rho (held out by source)", "95% CI", "GRADE alone", "95% CI",
        "Williams p (design > GRADE)", "trained on (sets)"],
        [[r["set"], r["source"], r["n"], fmt(r.get("rho")), _interval(r.get("interval")), fmt(r.get("grade")),
          _interval(r.get("grade_interval")), fmt_p(r.get("williams_p")),
          len(r["trained_on"]) if "trained_on" in r else "n/a (no feature applies)"] for r in d["sets"]])
    by_source = text_table(
        ["source", "sets (GRADE applies)", "mean rho", "GRADE mean rho", "difference", "bootstrap p (design > GRADE)",
         "beats GRADE"],
        [[s["source"], ", ".join(s["sets"]), fmt(s.get("rho")), fmt(s.get("grade")), fmt(s.get("difference")),
          fmt_p(s.get("p")), "yes" if s.get("wins") else "no"] for s in d["sources"]])
    return (f"({d['design']}) {d['summary']}: {d['free_weights']} free weights, inputs {d['inputs']}, fit {d['fit']}, "
            f"{'reads' if d['reads_ratings'] else 'reads no'} ratings\n{sets}\n\n{by_source}")


def summary_table(result: Mapping[str, Any]) -> str:
    """One row per design: free weights, whether it reads ratings, sources and sets above GRADE."""
    return text_table(
        ["design", "free weights", "reads ratings", "sources where it beats GRADE", "sets where it beats GRADE"],
        [[d["design"], d["free_weights"], "yes" if d["reads_ratings"] else "no",
          f"{d['sources_won']} of {d['sources_with_grade']}",
          f"{d['sets_won']} of {sum(1 for r in d['sets'] if 'grade' in r)}"] for d in result["designs"]])


def format_table(result: Mapping[str, Any]) -> str:
    """Per design: its per-set and per-source tables; then the summary and the choice."""
    return (f"Combined metric designs, leave-one-source-out (each set scored by the design's model trained without "
            f"its source's sets; Spearman with the human ratings, {result['n_resamples']} bootstrap resamples, seed "
            f"{result['seed']}, ridge lambda {result['ridge']:g}). GRADE alone does not apply to items without a "
            f"context (holistic-fluency): a source's means are over its sets where GRADE applies.\n"
            + (f"{result['note']}\n" if result.get("note") else "") + "\n"
            + "\n\n".join(design_block(d) for d in result["designs"])
            + f"\n\n{summary_table(result)}\nchosen (most sources above GRADE, then fewer free weights): "
            f"({result['chosen']})")
