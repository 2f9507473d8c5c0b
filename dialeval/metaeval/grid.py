"""One-command meta-evaluation: every metric x every human-judgment set (``dialeval benchmark --all``).

For each cell (a metric's job on one set of :func:`dialeval.registry.judgment_sets`) the items are scored through
:mod:`dialeval.scoring.runners` in saved chunks with per-item progress
(:func:`dialeval.scoring.cache.scores_for`: per-item scores cached, so a re-run scores only what is
new, and a cell interrupted after an hour resumes at its last saved chunk) and every sub-metric is
compared with the set's human score:

* Pearson, Spearman and Kendall with p-values, and seeded 95 % bootstrap intervals of each;
* the system-level Spearman (per-system means) where a set names 3 or more systems;
* Williams' test of whether the set's best sub-metric (highest Spearman) agrees with humans
  significantly better than each other one (on ranks, i.e. for Spearman correlations);
* the published value where ``paper_tables.json`` has a comparable cell (:func:`published`);
* where a set names 3 or more systems, the system-level agreement of every sub-metric with the human
  ranking (:func:`add_system_agreement`): Kendall's tau-b over the system means, and, among the
  system pairs whose human difference is significant (approximate randomization, Holm-corrected,
  alpha 0.05), how often the metric's mean difference has the same sign and how often the metric
  finds the same pair significantly different in the same direction. Systems that answered the
  same contexts are compared with the paired tests (:func:`dialeval.stats.paired.human_agreement`);
  systems rated on different contexts with the unpaired bootstrap and permutation test of
  :func:`dialeval.stats.unpaired.compare_unpaired` (which one is recorded per set as ``pairing``).

A response the metric flagged (:mod:`dialeval.core.degenerate`) enters the correlations at its
scale's worst value where that is a bound (GRADE's 0) and is left out where it is a declared floor
(FED's -1000: an arbitrary constant that would dominate Pearson's r;
:func:`dialeval.core.degenerate.floors_as_missing`).

A cell whose metric needs what a set lacks (references) is "not applicable"; one whose weights are
missing is "missing weights", with the resolver's message; neither stops the grid. Output
(:func:`write_outputs`): ``metaeval.md`` (summary matrix + one table per set + cost per cell),
``metaeval.json`` and ``plots/<set slug>--<job>.png`` scatter plots (metric vs. human, as in the papers).
"""

from __future__ import annotations

import json
import math
import re
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from dialeval import registry
from dialeval.data import paper
from dialeval.core.degenerate import floors_as_missing
from dialeval.registry import judgment_sets, load_judgments, scale_dict
from dialeval.stats.correlation import STATISTICS, bootstrap_interval, correlate, system_level, williams_spearman
from dialeval.stats.paired import agreement_of, human_agreement
from dialeval.stats.results import Settings
from dialeval.stats.systems import pair_items
from dialeval.stats.unpaired import compare_unpaired
from dialeval.metaeval.marked import check_marked, markers, write_marked
from dialeval.scoring.runners import RUNNERS
from dialeval.scoring.cache import scores_for
from dialeval.scoring.chunks import with_precision_option
from dialeval.core.spec import Job
from dialeval.core.tables import fmt, fmt_p, format_table


JOBS: tuple[Job, ...] = registry.grid_jobs()


def published(set_name: str, metric: str, sub: str) -> tuple[float, str] | None:
    """``(value, source)`` of the published Spearman comparable with this cell, else ``None``: the
    paper cell the set's owner declares (``MetricSpec.published``; GRADE's Table 1 value is its
    ``average_of_4_correlations`` column, not a pooled correlation), else the value the metric reports
    for its own method from a paper outside paper_tables.json (``MetricSpec.reported``)."""
    cell = registry.published_cell(set_name, metric, sub)
    if cell is None:
        return registry.reported_value(set_name, metric, sub)
    try:
        value = paper.value(*cell)
    except (KeyError, FileNotFoundError):
        return None
    return (value, f"{paper.source(cell[0], cell[1])}, {cell[2]}, {cell[3]}") if value is not None else None


# -- one cell ----------------------------------------------------------------------------------------


def correlations(per_item: dict[str, list[float]], human: list[float], systems: list[str | None],
                 set_name: str, metric: str, n_resamples: int, seed: int) -> dict[str, dict[str, Any]]:
    """Every statistic of the module docstring for each sub-metric of one cell."""
    out: dict[str, dict[str, Any]] = {}
    for sub, scores in per_item.items():
        try:
            c = correlate(scores, human).as_dict()
        except ValueError:  # fewer than 3 finite pairs (e.g. diversity without groups)
            continue
        if any(math.isnan(c[s]) for s in STATISTICS):  # a constant score: no ranking to compare
            continue
        c["interval"] = {s: bootstrap_interval(scores, human, s, n_resamples, seed=seed) for s in STATISTICS}
        system = system_level(scores, human, systems) if any(systems) else None
        c["system"] = system.as_dict() if system else None
        c["published"] = published(set_name, metric, sub)
        out[sub] = c
    return out


def compare_with_best(cells: Sequence[dict[str, Any]], human: list[float]) -> None:
    """Add ``williams_p`` to every sub-metric of a set: one-sided p of "the best Spearman > this one"."""
    scored = [(cell, sub, c) for cell in cells if cell["status"] == "ok" for sub, c in cell["correlations"].items()]
    if len(scored) < 2:
        return
    best_cell, best_sub, best = max(scored, key=lambda t: t[2]["spearman"])
    best_scores = best_cell["per_item"][best_sub]
    for cell, sub, c in scored:
        if (cell is best_cell and sub == best_sub):
            c["williams_p"] = None
            continue
        c["williams_p"] = williams_spearman(best_scores, cell["per_item"][sub], human)
        c["williams_vs"] = f"{best_cell['job']}:{best_sub}"


AGREEMENT_PERMUTATIONS = 10000  # approximate-randomization / permutation trials of the system-level tests
AGREEMENT_ALPHA = 0.05


def set_pairing(items: Sequence[dict], systems: Sequence[str | None]) -> dict[str, Any] | None:
    """How a set's systems line up (:func:`dialeval.stats.systems.pair_items`), or ``None`` with fewer
    than 3 named systems (then there is no system-level agreement to measure)."""
    if len({s for s in systems if s}) < 3:
        return None
    return pair_items([it["context"] for it in items], systems)


def add_system_agreement(cells: Sequence[dict[str, Any]], human: list[float], pairing: dict[str, Any] | None,
                         n_resamples: int, seed: int) -> None:
    """Add ``system_agreement`` (:meth:`dialeval.stats.results.Agreement.to_dict` without the
    per-system comparisons, plus ``paired``) to every sub-metric of a set's scored cells; the
    metric is negated first where its scale says lower is better."""
    if pairing is None:
        return
    indices = pairing["indices"]
    settings = Settings(n_resamples=n_resamples, n_permutations=AGREEMENT_PERMUTATIONS, seed=seed,
                        alpha=AGREEMENT_ALPHA)
    humans = {s: [float(human[i]) for i in idx] for s, idx in indices.items()}
    human_result = None if pairing["paired"] else compare_unpaired(humans, settings)
    for cell in cells:
        if cell["status"] != "ok":
            continue
        for sub, c in cell["correlations"].items():
            scale = scale_dict(cell["metric"], sub)
            sign = -1.0 if scale and scale["higher_is_better"] is False else 1.0
            metric = {s: [sign * float(cell["per_item"][sub][i]) for i in idx] for s, idx in indices.items()}
            if not all(math.isfinite(v) for values in metric.values() for v in values):
                c["system_agreement"] = None  # a sub-metric missing for some items (diversity without groups)
                continue
            with warnings.catch_warnings():  # "no pair can be significant" on tiny sets: the counts say so
                warnings.simplefilter("ignore", RuntimeWarning)
                if pairing["paired"]:
                    agreement = human_agreement(humans, metric, settings)
                else:
                    agreement = agreement_of(human_result, compare_unpaired(metric, settings), metric, settings.test)
            summary = {k: v for k, v in agreement.to_dict().items() if k not in ("human", "metric")}
            c["system_agreement"] = {**summary, "paired": pairing["paired"]}


def run_cell(job: Job, set_name: str, items: list[dict], human: list[float], systems: list[str | None],
             refresh: bool, n_resamples: int, seed: int, progress: bool = True,
             precision: str | None = None) -> dict[str, Any]:
    """One cell: the job's scores on the set through :func:`dialeval.scoring.cache.scores_for`
    (per-item progress; chunks saved as they finish, so an interrupted cell resumes where it
    stopped) and their correlations with the human scores. ``precision`` (:mod:`dialeval.core.precision`)
    goes to a job whose runner takes it; the score cache keys it as it runs."""
    from dialeval.models import ModelNotFoundError

    options = with_precision_option(job.metric, job.options_on(set_name, items), precision)
    cell: dict[str, Any] = {"set": set_name, "job": job.name, "metric": job.metric, "options": options}
    try:
        entry = scores_for(job.metric, options, items, refresh, progress=progress, desc=f"{set_name} x {job.name}")
    except ModelNotFoundError as e:
        return {**cell, "status": "missing weights", "reason": str(e)}
    except (ValueError, FileNotFoundError) as e:
        return {**cell, "status": "not applicable", "reason": str(e)}
    per_item = floors_as_missing(entry["per_item"], entry["flags"], registry.spec(job.metric).scales())
    corr = correlations(per_item, human, systems, set_name, job.metric, n_resamples, seed)
    return {**cell, "status": "ok", "signature": entry["signature"], "seconds": entry["seconds"],
            "from_cache": entry["from_cache"], "per_item": per_item, "correlations": corr}


def run_grid(sets: Sequence[str] | None = None, metrics: Sequence[str] | None = None, refresh: bool = False,
             n_resamples: int = 1000, seed: int = 0, progress: bool = True,
             after_set: Callable[[dict[str, Any]], None] | None = None,
             precision: str | None = None) -> dict[str, Any]:
    """Score and correlate every (set, job) cell; ``sets``/``metrics`` restrict the grid; ``precision``
    for every model-based job (:func:`run_cell`; ``None`` is each metric's default, float32).

    ``after_set(result so far)`` is called when a set is done (the CLI writes its outputs then, so
    a long run that is stopped keeps every finished set; the per-item scores are cached per cell).
    Progress: the cell being scored and, inside it, its items (:mod:`dialeval.core.progress`)."""
    from dialeval.core.progress import Progress

    sets = list(sets or judgment_sets())
    jobs = [j for j in JOBS if j.metric in RUNNERS and (not metrics or j.metric in metrics or j.name in metrics)]
    if metrics and not jobs:
        raise ValueError(f"no grid job for metrics {list(metrics)}; jobs: {[j.name for j in JOBS]}")
    start = time.perf_counter()
    result: dict[str, Any] = {"sets": {}, "cells": [], "n_resamples": n_resamples, "seed": seed}
    # no estimate over the cells, whose costs differ too much to extrapolate
    with Progress(len(sets) * len(jobs), "meta-evaluation", unit="cell", enabled=progress, estimate=False) as bar:
        for set_name in sets:
            judged = load_judgments(set_name)
            items = [vars(it) for it in judged]
            human = [it.score for it in judged]
            systems = [it.system for it in judged]
            result["sets"][set_name] = {"n": len(items), "systems": sorted({s for s in systems if s})}
            pairing = set_pairing(items, systems)
            if pairing is not None:
                per_system = {s: len(i) for s, i in pairing["indices"].items()}
                result["sets"][set_name]["pairing"] = {"paired": pairing["paired"], "shared_contexts": pairing["shared"],
                                                       "items_per_system": per_system}
            cells = []
            for job in jobs:
                bar.set_label(f"cell {bar.done + 1}/{bar.total}: {set_name} x {job.name}")
                cells.append(run_cell(job, set_name, items, human, systems, refresh, n_resamples, seed, progress,
                                      precision))
                bar.update()
            compare_with_best(cells, human)
            add_system_agreement(cells, human, pairing, n_resamples, seed)
            result["cells"] += cells
            result["seconds"] = round(time.perf_counter() - start, 1)
            if after_set is not None:
                after_set(result)
    return result


# -- output ------------------------------------------------------------------------------------------


def _rho(c: dict[str, Any]) -> str:
    low, high = c["interval"]["spearman"]
    star = "*" if c["spearman_p"] < 0.05 else ""
    return f"{c['spearman']:.3f}{star} [{low:.2f}, {high:.2f}]"


def summary_table(result: dict[str, Any]) -> str:
    """Rows = job:headline sub-metric, columns = sets; Spearman* [95 % CI] (published in parentheses)."""
    sets = list(result["sets"])
    by_key = {(c["set"], c["job"]): c for c in result["cells"]}
    rows = []
    for job in JOBS:
        cells = [by_key.get((s, job.name)) for s in sets]
        if not any(cells):
            continue
        subs = [h for h in job.headline if any(c and c["status"] == "ok" and h in c["correlations"] for c in cells)]
        for sub in subs or [job.headline[0]]:
            row = [f"{job.name}:{sub}"]
            for cell in cells:
                if cell is None:
                    row.append("")
                elif cell["status"] != "ok":
                    row.append("missing weights" if cell["status"] == "missing weights" else "n/a")
                elif sub not in cell["correlations"]:
                    row.append("n/a")
                else:
                    c = cell["correlations"][sub]
                    pub = f" ({c['published'][0]:.3f})" if c["published"] else ""
                    row.append(_rho(c) + pub)
            rows.append(row)
    return format_table(["metric:score"] + sets, rows)


def set_table(result: dict[str, Any], set_name: str) -> str:
    rows = []
    for cell in (c for c in result["cells"] if c["set"] == set_name):
        if cell["status"] != "ok":
            rows.append([f"{cell['job']}", cell["status"], "", "", "", "", "", ""])
            continue
        for sub, c in cell["correlations"].items():
            system = c["system"]
            rows.append([
                f"{cell['job']}:{sub}", f"{c['pearson']:.3f} ({fmt_p(c['pearson_p'])})", _rho(c),
                f"{c['kendall']:.3f} ({fmt_p(c['kendall_p'])})", fmt(system["spearman"]) if system else "",
                fmt_p(c["williams_p"]) if c.get("williams_p") is not None else ("best" if "williams_p" in c else ""),
                fmt(c["published"][0]) if c["published"] else "", c["n"],
            ])
    return format_table(["score", "pearson (p)", "spearman* [95% CI]", "kendall (p)", "system rho",
                         "Williams p vs best", "published", "n"], rows)


def agreement_table(result: dict[str, Any], set_name: str) -> str | None:
    """System-level agreement of every sub-metric of a set (``None`` when the set has none)."""
    rows = []
    for cell in (c for c in result["cells"] if c["set"] == set_name and c["status"] == "ok"):
        for sub, c in cell["correlations"].items():
            a = c.get("system_agreement")
            if not a:
                continue
            same = (f"{a['n_same_sign']}/{a['n_human_significant']}" if a["n_human_significant"] else "0/0")
            rows.append([f"{cell['job']}:{sub}", fmt(a["kendall_tau"]) if a["kendall_tau"] is not None else "n/a",
                         same, f"{a['n_metric_significant_same_sign']}/{a['n_human_significant']}",
                         str(a["n_pairs"])])
    if not rows:
        return None
    return format_table(["score", "Kendall tau (systems)", "same sign / human-significant pairs",
                         "metric significant, same sign", "pairs"], rows)


def pairing_text(info: dict[str, Any]) -> str:
    pairing = info["pairing"]
    if pairing["paired"]:
        return (f"paired: every system answered the same {pairing['shared_contexts']} contexts (paired bootstrap and "
                "approximate randomization)")
    return (f"unpaired: the systems were rated on different contexts ({pairing['shared_contexts']} shared by all; "
            "items per system " + ", ".join(f"{s} {n}" for s, n in pairing["items_per_system"].items())
            + "): unpaired bootstrap and permutation test of the difference of means")


def cost_table(result: dict[str, Any]) -> str:
    rows = [[c["set"], c["job"], c["status"], fmt(c.get("seconds")), "yes" if c.get("from_cache") else "no"]
            for c in result["cells"]]
    return format_table(["set", "metric", "status", "seconds to score", "from cache"], rows)


def cost_per_job(result: dict[str, Any]) -> dict[str, float]:
    """Seconds each job took to score every set it applies to (cached cells count what they cost when scored)."""
    out: dict[str, float] = {}
    for c in result["cells"]:
        if c["status"] == "ok":
            out[c["job"]] = out.get(c["job"], 0.0) + float(c.get("seconds") or 0.0)
    return out


def readme_table(result: dict[str, Any]) -> str:
    """A compact Markdown table for the project README: headline Spearman per job x set
    (``*``: p < 0.05; published value in parentheses), and the scoring cost per job."""
    sets = list(result["sets"])
    by_key = {(c["set"], c["job"]): c for c in result["cells"]}
    lines = ["| score | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    for job in JOBS:
        cells = [by_key.get((s, job.name)) for s in sets]
        for sub in job.headline:
            if not any(c and c["status"] == "ok" and sub in c["correlations"] for c in cells):
                continue
            row = []
            for cell in cells:
                c = cell["correlations"].get(sub) if cell and cell["status"] == "ok" else None
                if c is None:
                    row.append("n/a" if cell is None or cell["status"] != "missing weights" else "missing weights")
                    continue
                pub = f" ({c['published'][0]:.3f})" if c["published"] else ""
                row.append(f"{c['spearman']:.3f}{'*' if c['spearman_p'] < 0.05 else ''}{pub}")
            lines.append(f"| {job.name}:{sub} | " + " | ".join(row) + " |")
    costs = cost_per_job(result)
    total = sum(costs.values())
    lines += ["", "Scoring time recorded with the cells (all sets; measured when each cell was scored, so it includes "
              "whatever else ran on the CPU then): " + ", ".join(
                  f"{job} {seconds / 60:.1f} min" for job, seconds in costs.items()) + f"; in all {total / 60:.1f} min."]
    return "\n".join(lines)


README_BLOCK = "metaeval"
README_START, README_END = markers(README_BLOCK)


def check_readme(readme: str | Path) -> str:
    """The text of ``readme``; ``FileNotFoundError``/``ValueError`` when it is missing or lacks the
    :data:`README_START` ... :data:`README_END` block (checked before a long run, and again after)."""
    return check_marked(readme, README_BLOCK)


def update_readme(result: dict[str, Any], readme: str | Path) -> Path:
    """Replace the block between :data:`README_START` and :data:`README_END` in ``readme`` by
    :func:`readme_table`."""
    return write_marked(readme, README_BLOCK, readme_table(result))


def markdown(result: dict[str, Any]) -> str:
    sources = sorted({c["published"][1] for cell in result["cells"] if cell["status"] == "ok"
                      for c in cell["correlations"].values() if c["published"]})
    parts = [
        "# dialeval meta-evaluation",
        "",
        f"Spearman correlation with the human score of each set (`*`: p < 0.05), seeded 95 % bootstrap "
        f"interval ({result['n_resamples']} resamples, seed {result['seed']}); the published value, where "
        "one is comparable, in parentheses. Generated by `dialeval benchmark --all`.",
        "",
        "```", summary_table(result), "```",
    ]
    for set_name, info in result["sets"].items():
        parts += ["", f"## {set_name} (n={info['n']}, systems: {', '.join(info['systems']) or 'not named'})",
                  "", "```", set_table(result, set_name), "```"]
        agreement = agreement_table(result, set_name) if info.get("pairing") else None
        if agreement:
            parts += ["", f"System level ({len(info['systems'])} systems; {pairing_text(info)}): Kendall tau-b of "
                      "the system means with the human means; of the system pairs significantly different for the "
                      f"humans (Holm-corrected, alpha {AGREEMENT_ALPHA:g}), how many the metric orders the same way, "
                      "and how many it also finds significant in the same direction.",
                      "", "```", agreement, "```"]
    reasons = [f"- {c['set']} x {c['job']}: {c['status']}: {c['reason']}" for c in result["cells"] if c["status"] != "ok"]
    signatures = sorted({c["signature"] for c in result["cells"] if c["status"] == "ok"})
    costs = cost_per_job(result)
    parts += ["", "## Cost", "", "```", cost_table(result), "```", "",
              "Per metric (seconds to score all its sets, cached cells at what they cost when scored): "
              + ", ".join(f"{job} {sec:.0f} s" for job, sec in costs.items())
              + f"; in all {sum(costs.values()) / 60:.1f} min.",
              f"This run: {result['seconds']} s on this machine (scores read from the cache cost ~0 s).",
              "", "## Cells not scored", "", *(reasons or ["(none)"]),
              "", "## Signatures", "", *[f"- `{s}`" for s in signatures],
              "", "## Published values", "", *[f"- {s}" for s in sources]]
    return "\n".join(parts) + "\n"


def plot_cell(cell: dict[str, Any], human: list[float], path: Path, subs: Sequence[str]) -> None:
    """Scatter plots of each sub-metric (x) against the human score (y), side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(subs), figsize=(3.2 * len(subs), 3.0), squeeze=False)
    for ax, sub in zip(axes[0], subs):
        ax.scatter(cell["per_item"][sub], human, s=6, alpha=0.5)
        c = cell["correlations"][sub]
        ax.set_title(f"{sub}\nrho={c['spearman']:.3f}, r={c['pearson']:.3f}", fontsize=8)
        ax.set_xlabel(f"{cell['job']} score", fontsize=7)
        ax.set_ylabel(f"human ({cell['set']})", fontsize=7)
        ax.tick_params(labelsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def set_slug(set_name: str) -> str:
    """A file-name-safe name of a set: a named set as it is, a JSONL file by its file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(set_name).name)


def write_outputs(result: dict[str, Any], output_dir: str | Path) -> dict[str, Path]:
    """``metaeval.md``, ``metaeval.json`` (without the per-item scores) and one PNG per scored cell."""
    out = Path(output_dir)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    human_of = {name: [it.score for it in load_judgments(name)] for name in result["sets"]}
    jobs = {j.name: j for j in JOBS}
    for cell in result["cells"]:
        if cell["status"] != "ok" or not cell["correlations"]:
            continue
        subs = [s for s in jobs[cell["job"]].headline if s in cell["correlations"]] or list(cell["correlations"])[:4]
        plot_cell(cell, human_of[cell["set"]], out / "plots" / f"{set_slug(cell['set'])}--{cell['job']}.png", subs)
    slim = {**result, "cells": [{k: v for k, v in c.items() if k != "per_item"} for c in result["cells"]]}
    paths = {"markdown": out / "metaeval.md", "json": out / "metaeval.json"}
    paths["markdown"].write_text(markdown(result), encoding="utf-8")
    paths["json"].write_text(json.dumps(slim, indent=1) + "\n", encoding="utf-8")
    return paths
