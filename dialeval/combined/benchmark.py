"""Leave-one-set-out validation of the combined metric (issue 21): ``dialeval benchmark --metric
combined --dataset combined-loso``.

For every human-judgment set ``S`` the combined metric scores ``S``'s items with the model trained
without ``S`` (:class:`dialeval.combined.model.CombinedModel` ``held_out[S]``), and its Spearman
with the human ratings is set beside that of the best single dialeval metric on ``S``: the highest
Spearman among the components' headline scores (each grid job's ``headline``), chosen on ``S``
itself, i.e. with hindsight the combination does not get. For both: a seeded 95 % percentile
bootstrap interval, and Williams' one-sided test of "combined > best single" on ranks (the two
Spearman correlations share the human scores). The best over *every* sub-score (FED's 18 qualities,
all multiref variants) is listed too.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from dialeval.core.tables import fmt, fmt_p, format_table


def _spearman(scores: Sequence[float], human: Sequence[float]) -> float:
    from dialeval.correlation import correlate

    return correlate(scores, human).spearman


def best_single(scores: dict[str, dict[str, list[float]]], human: Sequence[float],
                headline_only: bool) -> tuple[str, float] | None:
    """``(job:sub, Spearman)`` of the component score that agrees best with ``human`` on this set."""
    from dialeval.registry import grid_jobs

    headline = {j.name: j.headline for j in grid_jobs()}
    found = []
    for job, per_item in scores.items():
        for sub, values in per_item.items():
            if headline_only and sub not in headline.get(job, ()):
                continue
            try:
                rho = _spearman(values, human)
            except ValueError:
                continue
            if math.isfinite(rho):
                found.append((f"{job}:{sub}", rho))
    return max(found, key=lambda t: t[1]) if found else None


def leave_one_set_out(sets: Sequence[str] | None = None, model: str | None = None, n_resamples: int = 1000,
                      seed: int = 0) -> dict[str, Any]:
    """Per set: the held-out combined Spearman, the best single metric's, intervals and Williams' p."""
    from dialeval.combined.model import CombinedModel
    from dialeval.combined.runner import DEFAULT_MODEL, combine, component_scores, resolve_folder
    from dialeval.correlation import bootstrap_interval, williams_spearman
    from dialeval.judgments import load_judgments

    bundle = CombinedModel.load(resolve_folder(model or DEFAULT_MODEL))
    rows, signature = [], None
    for set_name in sets or sorted(bundle.held_out):
        judged = load_judgments(set_name)
        items, human = [vars(it) for it in judged], [it.score for it in judged]
        found = component_scores(items, set_name)
        per_item, signature = combine(found, model, held_out=set_name)
        combined, scores = per_item["combined"], found.scores
        best, best_any = best_single(scores, human, True), best_single(scores, human, False)
        row: dict[str, Any] = {
            "set": set_name, "n": len(items), "trained_on": bundle.held_out[set_name].sets,
            "features": bundle.held_out[set_name].features,
            "combined": _spearman(combined, human),
            "combined_interval": bootstrap_interval(combined, human, "spearman", n_resamples, seed=seed),
        }
        if best is not None:
            key, rho = best
            job, sub = key.split(":", 1)
            row |= {"best_single": key, "best_single_spearman": rho,
                    "best_single_interval": bootstrap_interval(scores[job][sub], human, "spearman", n_resamples, seed=seed),
                    "williams_p": williams_spearman(combined, scores[job][sub], human)}
        if best_any is not None:
            row |= {"best_any": best_any[0], "best_any_spearman": best_any[1]}
        rows.append(row)
    wins = [r for r in rows if "best_single_spearman" in r and r["combined"] > r["best_single_spearman"]]
    significant = [r for r in wins if r.get("williams_p") is not None and r["williams_p"] < 0.05]
    return {"rows": rows, "signature": signature, "n_resamples": n_resamples, "seed": seed,
            "wins": len(wins), "significant_wins": len(significant), "sets": len(rows)}


def format_table(result: dict[str, Any]) -> str:
    """The leave-one-set-out table, one row per set."""
    def interval(pair: Sequence[float] | None) -> str:
        return f"[{fmt(pair[0])}, {fmt(pair[1])}]" if pair else ""

    rows = [[r["set"], r["n"], len(r["trained_on"]), fmt(r["combined"]), interval(r["combined_interval"]),
             r.get("best_single", ""), fmt(r.get("best_single_spearman")), interval(r.get("best_single_interval")),
             fmt_p(r.get("williams_p")), r.get("best_any", ""), fmt(r.get("best_any_spearman"))]
            for r in result["rows"]]
    table = format_table(["set", "n", "trained on (sets)", "combined rho (held out)", "95% CI", "best single metric",
                          "its rho", "95% CI", "Williams p (combined > best)", "best sub-score", "its rho"], rows)
    return (f"Combined metric, leave-one-set-out: each set scored by the model trained without it "
            f"(Spearman with the human ratings; the best single metric is chosen on the set itself)\n{table}\n"
            f"combined above the best single metric on {result['wins']} of {result['sets']} sets "
            f"({result['significant_wins']} significantly, Williams p < 0.05); issue 21's goal: 7 of 9\n"
            f"combined: {result['signature']}")
