"""The reports of ``dialeval compare``: strict JSON (:func:`to_json`), Markdown (:func:`markdown`) and a
plot of the means and intervals (:func:`plot`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from dialeval.compare.systems import HUMAN


def _f(value: Optional[float]) -> str:
    if value is None:
        return ""
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}"


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _reading_cells(row: Mapping[str, Any], percentile: bool) -> str:
    """The cells beside a row's mean and interval: its flagged count, its mean over unflagged items
    (``-`` when every item is flagged) and, when the table has that column, its mean percentile."""
    cells = f" {row.get('flagged', '')} | {'-' if row.get('unflagged') is None else _f(row['unflagged'])} |"
    if percentile:
        cells += f" {_f(row['percentile'])} |" if row.get("percentile") is not None else " |"
    return cells


def to_json(result: Mapping[str, Any]) -> str:
    """Strict JSON (no NaN).

    Top level: ``systems``, ``files``, ``input`` (``responses``/``scored``), ``joined_on``,
    ``n_items``, ``settings``, ``signature`` (of the statistics), and ``metrics``: metric -> {
    ``signature`` (the metric's), ``options``, ``skipped`` (sub-score -> why), ``flagged`` (system
    -> {flag: number of its items the metric flagged}, :mod:`dialeval.core.degenerate`), optional
    ``human_reference`` (why the human responses have no line), ``scores``: sub-score -> {``scale``
    (range, low, high, higher_is_better, direction, raw, meaning), ``n_items``, ``n_dropped``,
    ``systems`` (name, mean, ci_low, ci_high, rank; ranking order; beside the mean, which counts
    flagged items at their worst value, ``flagged``: how many of its items are flagged, and
    ``unflagged``: the mean over the others, ``null`` when every item is flagged; the statistics are
    on the per-item scores), ``pairs`` (system_a, system_b,
    mean_diff = a - b, diff_ci_low/high, p_bootstrap(_adjusted), p_ar(_adjusted), significant),
    ``settings``, ``signature``, ``warnings`` (e.g. "no pair can be significant" with too few
    items), optional ``human_reference`` (name, mean, ci_low, ci_high, flagged, unflagged)}}. With
    percentiles, each system (and ``human_reference``) of a sub-score with a stored human reference
    also has ``percentile`` (the mean of its items' percentiles among human replies, a flagged item
    at 0: :mod:`dialeval.core.results`), and the metric ``percentiles`` (``among``, ``signature``)."""
    return json.dumps(result, indent=1, allow_nan=False)


def markdown(result: Mapping[str, Any]) -> str:
    """The report: per metric and sub-score, its scale, the ranked systems with their intervals (and
    the human responses' score), and every pair's difference and p-values."""
    s = result["settings"]
    confidence = f"{s['confidence'] * 100:g} %"
    decisive = "approximate randomization" if s["test"] == "ar" else "paired bootstrap"
    lines = [
        f"# dialeval compare: {', '.join(result['systems'])}", "",
        f"{result['n_items']} items per system, joined on {'`id`' if result['joined_on'] == 'id' else 'line order'}. "
        f"Means with {confidence} bootstrap intervals ({s['n_resamples']} resamples); a pair is significant when "
        f"its {s['correction']}-corrected {decisive} p-value is < {s['alpha']:g}; systems share a rank when they "
        "are not significantly different from the best system of their group. A mean counts a flagged (degenerate) "
        "response at its sub-score's worst value; beside it, the number flagged and the mean over the others.", "",
        f"Statistics: `{result.get('signature')}`",
    ]
    for metric, entry in result["metrics"].items():
        lines += ["", f"## {metric}", "", f"`{entry['signature']}`"]
        if entry.get("human_reference"):
            lines += ["", f"Human responses: not shown ({entry['human_reference']})."]
        if entry.get("percentiles"):
            lines += ["", f"Mean percentile: the mean over a system's items of where each item's score falls among "
                          f"the scores of {entry['percentiles']['among']} (100: above all of them; a flagged "
                          f"item at 0; `{entry['percentiles']['signature']}`)."]
        if any(entry["flagged"].values()):
            counts = {name: ", ".join(f"{n} {flag}" for flag, n in c.items()) or "none"
                      for name, c in entry["flagged"].items()}
            lines += ["", "Flagged responses (degenerate, scored under the policy of docs/inputs.md): "
                      + "; ".join(f"{name} {text}" for name, text in counts.items()) + "."]
        for sub, block in entry["scores"].items():
            scale = block["scale"]
            head = f"### {metric}: {sub}"
            if scale:
                head += f" ({scale['range']}, {scale['direction']}{', raw' if scale['raw'] else ''})"
            lines += ["", head, ""]
            if scale:
                lines += [scale["meaning"][:1].upper() + scale["meaning"][1:] + ".", ""]
            for text in block.get("warnings", []):
                lines += [f"Warning: {text}.", ""]
            if block["n_dropped"]:
                lines += [f"{block['n_dropped']} item(s) without a score for every system left out.", ""]
            read = any("percentile" in system for system in block["systems"])
            lines += [f"| rank | system | mean | {confidence} interval | flagged | mean unflagged |"
                      + (" mean percentile |" if read else ""), "|---|---|---|---|---|---|" + ("---|" if read else "")]
            for system in block["systems"]:
                lines.append(f"| {system['rank']} | {system['name']} | {_f(system['mean'])} | "
                             f"[{_f(system['ci_low'])}, {_f(system['ci_high'])}] |" + _reading_cells(system, read))
            human = block.get("human_reference")
            if human:
                lines.append(f"| - | *{human['name']}* (first reference vs the others) | {_f(human['mean'])} | "
                             f"[{_f(human['ci_low'])}, {_f(human['ci_high'])}] |" + _reading_cells(human, read))
            lines += ["", f"| pair | difference | {confidence} interval | p bootstrap | p AR | "
                          f"p bootstrap ({s['correction']}) | p AR ({s['correction']}) | significant |",
                      "|---|---|---|---|---|---|---|---|"]
            for pair in block["pairs"]:
                lines.append(
                    f"| {pair['system_a']} - {pair['system_b']} | {_f(pair['mean_diff'])} | "
                    f"[{_f(pair['diff_ci_low'])}, {_f(pair['diff_ci_high'])}] | {_p(pair['p_bootstrap'])} | "
                    f"{_p(pair['p_ar'])} | {_p(pair['p_bootstrap_adjusted'])} | {_p(pair['p_ar_adjusted'])} | "
                    f"{'yes' if pair['significant'] else 'no'} |")
        for sub, why in entry["skipped"].items():
            lines += ["", f"{metric}: {sub} not compared: {why}."]
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: str | Path, columns: int = 4) -> Path:
    """One figure: a panel per metric and sub-score with each system's mean and interval (best at the
    top), the human responses' mean as a dashed line and band, and the scale in the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(metric, sub, block) for metric, entry in result["metrics"].items()
              for sub, block in entry["scores"].items()]
    if not panels:
        raise ValueError("nothing to plot: no sub-score was compared")
    columns = min(columns, len(panels))
    rows = math.ceil(len(panels) / columns)
    k = len(result["systems"])
    fig, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, (0.9 + 0.32 * k) * rows + 0.3), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (metric, sub, block) in zip(axes.flat, panels):
        systems = block["systems"][::-1]  # best at the top
        y = np.arange(len(systems))
        means = np.array([x["mean"] for x in systems])
        errors = np.array([[x["mean"] - x["ci_low"] for x in systems], [x["ci_high"] - x["mean"] for x in systems]])
        ax.errorbar(means, y, xerr=np.maximum(errors, 0), fmt="o", capsize=3, markersize=4)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{x['name']} ({x['rank']})" for x in systems], fontsize=7)
        human = block.get("human_reference")
        if human:
            ax.axvline(human["mean"], linestyle="--", color="grey", linewidth=1)
            ax.axvspan(human["ci_low"], human["ci_high"], color="grey", alpha=0.15)
        scale = block["scale"]
        title = f"{metric}: {sub}"
        if scale:
            title += f"\n{scale['range']}, {scale['direction']}"
        ax.set_title(title, fontsize=8)
        ax.tick_params(axis="x", labelsize=6)
    if any(block.get("human_reference") for _, _, block in panels):
        fig.text(0.01, 0.005, f"dashed line and band: {HUMAN} (mean and interval); (n): rank", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
