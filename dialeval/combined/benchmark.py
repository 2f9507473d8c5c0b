"""Held-out validation of the bundled combined metric (issues 21, 57): ``dialeval benchmark --metric
combined --dataset combined-loso``.

For every human-judgment set ``S`` the combined metric scores ``S``'s items with the model trained
without ``S``'s source, its sibling sets held out with it (:class:`dialeval.combined.model.CombinedModel`
``held_out[S]``; a design that reads no rating has the same model for every set), and its Spearman
with the human ratings is set beside two single dialeval metrics' on ``S``, each a component's
headline score (each grid job's ``headline``):

* **best single, hindsight**: the highest Spearman on ``S`` itself, a choice that needs ``S``'s
  ratings (issue 21's yardstick), which the combination never sees;
* **best single, chosen elsewhere**: the headline score with the highest mean Spearman over the
  *other* sets where it applies, i.e. what a user who picks one metric from the published grid
  would pick for a new set, judged like the combination.

For each: a seeded 95 % percentile bootstrap interval, and Williams' one-sided test of "combined >
single" on ranks (the Spearman correlations share the human scores). The best over *every*
sub-score (FED's 18 qualities, all multiref variants) is listed too.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from dialeval.core.tables import fmt, fmt_p, format_table as text_table


def spearman(scores: Sequence[float], human: Sequence[float]) -> float:
    """Spearman's rho of ``scores`` with ``human``."""
    from dialeval.stats.correlation import correlate

    return correlate(scores, human).spearman


def spearman_by_score(scores: dict[str, dict[str, list[float]]], human: Sequence[float],
                      headline_only: bool) -> dict[str, float]:
    """``{job:sub: Spearman with human}`` of the component scores on one set (finite ones only)."""
    from dialeval.registry import grid_jobs

    headline = {j.name: j.headline for j in grid_jobs()}
    found = {}
    for job, per_item in scores.items():
        for sub, values in per_item.items():
            if headline_only and sub not in headline.get(job, ()):
                continue
            try:
                rho = spearman(values, human)
            except ValueError:
                continue
            if math.isfinite(rho):
                found[f"{job}:{sub}"] = rho
    return found


def best_single(rhos: dict[str, float]) -> tuple[str, float] | None:
    """``(job:sub, Spearman)`` of the score that agrees best with the humans on this set (hindsight)."""
    return max(rhos.items(), key=lambda t: t[1]) if rhos else None


def chosen_elsewhere(by_set: dict[str, dict[str, float]], set_name: str) -> tuple[str, float, float] | None:
    """``(job:sub, mean Spearman on the other sets, Spearman on set_name)`` of the score on
    ``set_name`` whose mean Spearman over the other sets where it applies is highest: one metric
    chosen without ``set_name``'s ratings."""
    means = {}
    for key in by_set[set_name]:
        elsewhere = [rhos[key] for name, rhos in by_set.items() if name != set_name and key in rhos]
        if elsewhere:
            means[key] = sum(elsewhere) / len(elsewhere)
    if not means:
        return None
    key = max(means, key=means.get)
    return key, means[key], by_set[set_name][key]


def leave_one_set_out(sets: Sequence[str] | None = None, model: str | None = None, n_resamples: int = 1000,
                      seed: int = 0) -> dict[str, Any]:
    """Per set: the held-out combined Spearman, the two single metrics', intervals and Williams' p."""
    from dialeval.combined.model import CombinedModel
    from dialeval.combined.runner import DEFAULT_MODEL, combine, component_scores, resolve_folder
    from dialeval.stats.correlation import bootstrap_interval, williams_spearman
    from dialeval.registry import load_judgments

    bundle = CombinedModel.load(resolve_folder(model or DEFAULT_MODEL))
    scored, signature = {}, None
    for set_name in sets or sorted(bundle.held_out):
        judged = load_judgments(set_name)
        items, human = [vars(it) for it in judged], [it.score for it in judged]
        found = component_scores(items, set_name)
        per_item, signature = combine(found, model, held_out=set_name)
        scored[set_name] = (human, per_item["combined"], found.scores)
    headline = {name: spearman_by_score(scores, human, True) for name, (human, _, scores) in scored.items()}

    def against(combined: list[float], scores: dict, human: Sequence[float], key: str) -> dict[str, Any]:
        job, sub = key.split(":", 1)
        return {"interval": bootstrap_interval(scores[job][sub], human, "spearman", n_resamples, seed=seed),
                "williams_p": williams_spearman(combined, scores[job][sub], human)}

    rows = []
    for set_name, (human, combined, scores) in scored.items():
        row: dict[str, Any] = {
            "set": set_name, "n": len(human), "trained_on": bundle.held_out[set_name].sets,
            "features": bundle.held_out[set_name].features,
            "combined": spearman(combined, human),
            "combined_interval": bootstrap_interval(combined, human, "spearman", n_resamples, seed=seed),
        }
        best = best_single(headline[set_name])
        if best is not None:
            test = against(combined, scores, human, best[0])
            row |= {"best_single": best[0], "best_single_spearman": best[1],
                    "best_single_interval": test["interval"], "williams_p": test["williams_p"]}
        chosen = chosen_elsewhere(headline, set_name) if len(scored) > 1 else None
        if chosen is not None:
            test = against(combined, scores, human, chosen[0])
            row |= {"chosen_elsewhere": chosen[0], "chosen_elsewhere_mean_other_sets": chosen[1],
                    "chosen_elsewhere_spearman": chosen[2], "chosen_elsewhere_interval": test["interval"],
                    "chosen_elsewhere_williams_p": test["williams_p"]}
        best_any = best_single(spearman_by_score(scores, human, False))
        if best_any is not None:
            row |= {"best_any": best_any[0], "best_any_spearman": best_any[1]}
        rows.append(row)

    def wins(field: str, p_field: str) -> tuple[int, int]:
        above = [r for r in rows if field in r and r["combined"] > r[field]]
        return len(above), sum(1 for r in above if r.get(p_field) is not None and r[p_field] < 0.05)

    (n_best, n_best_sig), (n_chosen, n_chosen_sig) = (wins("best_single_spearman", "williams_p"),
                                                      wins("chosen_elsewhere_spearman", "chosen_elsewhere_williams_p"))
    return {"rows": rows, "signature": signature, "n_resamples": n_resamples, "seed": seed,
            "wins": n_best, "significant_wins": n_best_sig, "wins_vs_chosen_elsewhere": n_chosen,
            "significant_wins_vs_chosen_elsewhere": n_chosen_sig, "sets": len(rows)}


def format_table(result: dict[str, Any]) -> str:
    """The leave-one-set-out table, one row per set."""
    def interval(pair: Sequence[float] | None) -> str:
        return f"[{fmt(pair[0])}, {fmt(pair[1])}]" if pair else ""

    rows = [[r["set"], r["n"], len(r["trained_on"]), fmt(r["combined"]), interval(r["combined_interval"]),
             r.get("best_single", ""), fmt(r.get("best_single_spearman")), interval(r.get("best_single_interval")),
             fmt_p(r.get("williams_p")),
             r.get("chosen_elsewhere", ""), fmt(r.get("chosen_elsewhere_spearman")),
             interval(r.get("chosen_elsewhere_interval")), fmt_p(r.get("chosen_elsewhere_williams_p")),
             r.get("best_any", ""), fmt(r.get("best_any_spearman"))]
            for r in result["rows"]]
    table = text_table(["set", "n", "trained on (sets)", "combined rho (held out)", "95% CI",
                        "best single (hindsight)", "its rho", "95% CI", "Williams p (combined > it)",
                        "single chosen on other sets", "its rho", "95% CI", "Williams p (combined > it)",
                        "best sub-score (hindsight)", "its rho"], rows)
    return (f"Combined metric, held out: each set scored by its held-out model (trained without the set's source; a "
            f"design that reads no rating has one model) (Spearman with "
            f"the human ratings). Beside it: the single headline score best on the set itself (hindsight), and the "
            f"one with the best mean Spearman on the other sets (chosen without the set)\n{table}\n"
            f"combined above the best single metric (hindsight) on {result['wins']} of {result['sets']} sets "
            f"({result['significant_wins']} significantly, Williams p < 0.05); issue 21's goal: 7 of 9\n"
            f"combined above the single metric chosen on the other sets on {result['wins_vs_chosen_elsewhere']} of "
            f"{result['sets']} sets ({result['significant_wins_vs_chosen_elsewhere']} significantly)\n"
            f"combined: {result['signature']}")
