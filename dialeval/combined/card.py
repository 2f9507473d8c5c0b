"""The card of the combined metric's bundled folder (``hub/combined-judgments``): what it is, which
choices read ratings, the designs' leave-one-source-out comparison against GRADE alone
(:data:`TRANSFER_RESULTS`), every weight and the held-out numbers (:data:`LOSO_RESULTS`, when measured
for these weights). Declared as the folder's ``CardSpec.content`` (:mod:`dialeval.combined.spec`) and
written by :func:`dialeval.publish.write_model_card`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from dialeval.core.spec import CardContent
from dialeval.models.hub import Measured, content_hash
from dialeval.models.shipped import CHECKOUT_ROOT

if TYPE_CHECKING:
    from dialeval.combined.model import CombinedModel, LinearModel

LOSO_RESULTS = CHECKOUT_ROOT / "benchmarks" / "results" / "combined-loso.json"
INPUTS = {"score": "the component scores", "human": "their percentiles among human replies (0-1)",
          "rank": "their percentiles within the scored batch"}
TRANSFER_RESULTS = CHECKOUT_ROOT / "benchmarks" / "results" / "combined-loso-source.json"


def weights_table(models: Sequence[LinearModel]) -> str:
    """Every model's sets, items, intercept and weights (a column per feature some model reads), one row each."""
    from dialeval.combined.features import FEATURES
    from dialeval.core.tables import fmt, format_table

    names = [f.name for f in FEATURES if any(f.name in m.features for m in models)]
    rows = [[", ".join(m.sets), m.items, fmt(m.intercept)]
            + [fmt(m.weights[m.features.index(n)]) if n in m.features else "" for n in names] for m in models]
    return format_table(["trained on", "items", "b", *names], rows)


def loso_table(results: dict[str, Any] | None) -> str:
    """The saved held-out benchmark as it prints (:func:`dialeval.combined.benchmark.format_table`)."""
    from dialeval.combined.benchmark import format_table as loso_text

    if not results:
        return ("Not measured yet: `dialeval benchmark --metric combined --dataset combined-loso --save "
                "benchmarks/results/combined-loso.json`, then `python training/combined.py --card`.")
    return f"```\n{loso_text(results)}\n```"


def transfer_section(results: dict[str, Any] | None, design: str) -> str:
    """The saved leave-one-source-out comparison (:mod:`dialeval.combined.transfer`): every design's
    summary, ``design``'s tables, and the sources where it does not beat GRADE alone."""
    from dialeval.combined.transfer import design_block, summary_table

    if not results:
        return ("Not measured yet: `dialeval benchmark --metric combined --dataset combined-loso-source --save "
                "benchmarks/results/combined-loso-source.json`, then `python training/combined.py --card`.")
    mine = next(d for d in results["designs"] if d["design"] == design)
    lost = [s for s in mine["sources"] if s["sets"] and not s.get("wins")]
    verdict = (f"Design ({design}) is above GRADE alone on {mine['sources_won']} of {mine['sources_with_grade']} "
               f"sources (mean Spearman over each source's sets where GRADE applies).")
    if lost:
        verdict += (" **Where it is not, use GRADE alone** (`dialeval/grade`): on data like "
                    + "; ".join(f"{s['source']}'s sets ({', '.join(s['sets'])}: {s['rho']:.3f} against GRADE's "
                                f"{s['grade']:.3f})" for s in lost) + ".")
    return f"""{verdict}

The adopted design's tables (`benchmarks/results/combined-loso-source.txt` holds every design's; Spearman,
95 % bootstrap intervals, Williams' one-sided p and the paired bootstrap's per source):

```
{design_block(mine)}
```

Every design compared (`dialeval/combined/designs.py`; chosen: the most sources above GRADE, then the
fewest free weights):

```
{summary_table(results)}
```
"""


def card_body(bundle: CombinedModel, results: dict[str, Any] | None, transfer: dict[str, Any] | None = None) -> str:
    """The card's text: what it is, how it was built, which choices read ratings, every weight, the
    held-out numbers."""
    from dialeval.combined.designs import design_named

    design = design_named(bundle.design or "a")
    held = "\n".join(f"| {s} | {', '.join(m.sets) or 'none (no rating read)'} |" for s, m in sorted(bundle.held_out.items()))
    ratings = ("the choice of this design among six, by the leave-one-source-out comparison below (the one "
               "choice made on the shared sets' ratings)")
    if design.reads_ratings:
        ratings += f"; its weights, a ridge (lambda = {bundle.ridge:g}, fixed in advance) fitted to the ratings"
    return f"""# dialeval/combined-judgments

The weights of the `dialeval/combined` metric, design ({design.name}): {design.summary}
(`dialeval/combined/designs.py`, `dialeval/combined/model.py`), over the features
{", ".join(f"`{f}`" for f in design.features)}, as {INPUTS[design.inputs]}. Built by `python training/combined.py`.

**Which choices read human ratings**: {ratings}. Read without any rating: the components (those that pass
every declared kind of the behavioural suite on DailyDialog test contexts, `benchmarks/results/behaviour.md`),
{"their percentiles among the human replies of that suite (their stored references)" if design.inputs == "human"
 else "the standardisation"}{"" if design.reads_ratings else ", and the equal weights"}. FED's and FULL's scores,
features until issue 57, were left out: they were not at hand on the shared sets when the designs were
compared (FED alone costs about 150 CPU-minutes over them) and correlate near zero with the raters of
unseen sets.

Every number reported for it on a shared set (`dialeval benchmark --all`, `benchmarks/results/combined-loso.txt`)
comes from the model {"trained without that set's source (its sibling sets held out with it)" if design.reads_ratings
 else "that read no rating at all (the same model for every set)"}; the `model-index` above holds those numbers.

## Leave-one-source-out against GRADE alone
{transfer_section(transfer, design.name)}
## Held-out Spearman with the human ratings, beside single metrics
{loso_table(results)}

## Component weights it was built on
{chr(10).join(f"- {job}: `{model}`" for job, model in bundle.components.items())}

## Weights (`combined = clip(b + sum w_j (x_j - mu_j) / sigma_j, 0, 1)`, x: {INPUTS[design.inputs]})
One model per feature pattern:

```
{weights_table(bundle.models)}
```

Held-out models (scored set: trained on):

| set | trained on |
|---|---|
{held}
"""


def card_content(folder: Path) -> CardContent:
    """The card of ``folder``: :func:`card_body` and, in the metadata, the held-out Spearman per set
    (from :data:`LOSO_RESULTS` when it was measured for these weights)."""
    from dialeval.combined.model import CombinedModel

    bundle = CombinedModel.load(folder)
    results = json.loads(LOSO_RESULTS.read_text()) if LOSO_RESULTS.is_file() else None
    transfer = json.loads(TRANSFER_RESULTS.read_text()) if TRANSFER_RESULTS.is_file() else None
    if results and f"@{content_hash(folder)}" not in results.get("signature", ""):
        print(f"{LOSO_RESULTS} was measured for other weights: left out of the card", file=sys.stderr)
        results = None
    measured = [Measured(dataset=r["set"], metric="spearman", value=r["combined"],
                         dataset_name=f"{r['set']} (held out by source)") for r in (results or {}).get("rows", [])]
    return CardContent(card_body(bundle, results, transfer), measured)
