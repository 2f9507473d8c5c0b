"""Would a specificity component teach the combined metric to rank a real reply above a generic one?
Measured, not adopted (issue 32; the combined card).

Specificity is the mean normalised inverse document frequency of the reply's words (See et al. 2019,
"What makes a good conversation?"): over the ``R`` turns of DailyDialog *train*, ``IDF(w) = log(R /
c_w)`` with ``c_w`` the turns that contain ``w``, ``NIDF(w) = (IDF(w) - min IDF) / (log R - min IDF)``
(a word unseen in train counts as 1), and a reply's specificity is the mean NIDF of its words
(:func:`dialeval.core.degenerate.words_of`, the lower-cased ``\\w+`` runs every reply check reads;
no word: 0). A generic reply ("I see.") scores low, a specific one high.

Read: the specificity of each human-judgment set's replies alone (Spearman with the ratings); the
leave-one-set-out Spearman of the combined metric's context pattern (the features of a reply to a
context without references) fitted as the bundled model is (:func:`dialeval.combined.model.fit_linear`)
without and with specificity; and the suite's shares on DailyDialog test contexts (as
``combined_preferences.py`` reads them: a flagged reply scored 0). Component scores from the score
cache (``dialeval benchmark --all`` first):

    python benchmarks/combined_specificity.py --output benchmarks/results/combined-specificity
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from pathlib import Path
from typing import Callable

from scipy.stats import spearmanr

from behaviour_subscores import report
from combined_preferences import TEST_KINDS, reply_features, reply_texts, shares, spearman
from dialeval.combined.features import pattern
from dialeval.combined.model import fit_linear
from dialeval.combined.training import gather
from dialeval.core.degenerate import words_of
from dialeval.data.corpora import dailydialog
from dialeval.registry import judgment_sets as sets, load_judgments

FEATURE = "specificity"


def specificity_of(turns: list[str]) -> Callable[[str], float]:
    """The module docstring's mean NIDF, with the IDF of ``turns``."""
    counts = Counter(w for turn in turns for w in set(words_of(turn)))
    top = math.log(len(turns))
    idf = {w: top - math.log(c) for w, c in counts.items()}
    low = min(idf.values())

    def specificity(text: str) -> float:
        words = words_of(text)
        return sum((idf.get(w, top) - low) / (top - low) for w in words) / len(words) if words else 0.0

    return specificity


def run(n_test: int) -> dict:
    specificity = specificity_of([turn for dialogue in dailydialog("train") for turn in dialogue])
    rows, _ = gather(list(sets()))
    alone = {}
    for name, (table, human) in rows.items():
        table[FEATURE] = [specificity(item.response) for item in load_judgments(name)]
        alone[name] = float(spearmanr(table[FEATURE], human).correlation)
    patterns = {name: pattern(table) for name, (table, _) in rows.items()}
    context = max((p for p in set(patterns.values()) if "coherence" in p and "bleu2" not in p), key=len)
    affected = sorted(name for name, p in patterns.items() if p == context)
    test = reply_features("test", n_test, TEST_KINDS, None)
    _, texts = reply_texts("test", n_test, TEST_KINDS, None)
    for kind, (columns, _) in test.items():
        columns[FEATURE] = [math.nan if text is None else specificity(text) for text in texts[kind]]
    variants = []
    for features in (list(context), [*context, FEATURE]):
        training = {n: r for n, r in rows.items() if set(context) <= set(patterns[n])}
        loso = {name: spearman(fit_linear({n: r for n, r in training.items() if n != name}, features), *rows[name])
                for name in affected}
        model = fit_linear(training, features)
        variants.append({"features": features, "weights": dict(zip(model.features, model.weights)), "loso": loso,
                         "test": shares(model, test)})
    return {"n_test": n_test, "alone": alone, "affected_sets": affected, "variants": variants}


def markdown(result: dict) -> str:
    base, spec = result["variants"]
    lines = ["# Combined metric: a specificity component (measured, not adopted)", "",
             "`python benchmarks/combined_specificity.py` (its docstring defines specificity: mean normalised IDF "
             "of the reply's words over DailyDialog train, See et al. 2019).", "",
             "Specificity alone, Spearman with each human-judgment set's ratings:", "",
             "| set | rho |", "|---|---|"]
    lines += [f"| {name} | {rho:.3f} |" for name, rho in result["alone"].items()]
    lines += ["", f"The combined metric's context pattern ({', '.join(base['features'])}) fitted as the bundled model, "
              f"without and with specificity: leave-one-set-out Spearman, and the share of {result['n_test']} "
              "DailyDialog test contexts where the real reply scores higher (bar 0.90).", "",
              "| features | " + " | ".join(f"LOSO {s}" for s in result["affected_sets"]) + " | "
              + " | ".join(f"test {k}" for k in base["test"]) + " | specificity weight |",
              "|---|" + "---|" * (len(result["affected_sets"]) + len(base["test"]) + 1)]
    for label, v in (("bundled", base), ("+ specificity", spec)):
        lines.append(f"| {label} | " + " | ".join(f"{v['loso'][s]:.3f}" for s in result["affected_sets"]) + " | "
                     + " | ".join(f"{v['test'][k]['share']:.2f}" for k in base["test"]) + " | "
                     + f"{v['weights'].get(FEATURE, 0.0):.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-test", type=int, default=50)
    parser.add_argument("--output", type=Path, help="write OUTPUT.json and OUTPUT.md (else print the table)")
    args = parser.parse_args()
    report(run(args.n_test), markdown, args.output)


if __name__ == "__main__":
    main()
