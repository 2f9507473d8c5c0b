"""The card of the combined metric's bundled folder (``hub/combined-judgments``): what it is, how it
was trained, every weight and the leave-one-set-out numbers (:data:`LOSO_RESULTS`, when measured for
these weights). Declared as the folder's ``CardSpec.content`` (:mod:`dialeval.combined.spec`) and
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


def weights_table(models: Sequence[LinearModel]) -> str:
    """Every model's sets, items, intercept and weights, one row each."""
    from dialeval.combined.features import FEATURES
    from dialeval.core.tables import fmt, format_table

    names = [f.name for f in FEATURES]
    rows = [[", ".join(m.sets), m.items, fmt(m.intercept)]
            + [fmt(m.weights[m.features.index(n)]) if n in m.features else "" for n in names] for m in models]
    return format_table(["trained on", "items", "b", *names], rows)


def loso_table(results: dict[str, Any] | None) -> str:
    """The saved leave-one-set-out benchmark as it prints (:func:`dialeval.combined.benchmark.format_table`)."""
    from dialeval.combined.benchmark import format_table as loso_text

    if not results:
        return ("Not measured yet: `dialeval benchmark --metric combined --dataset combined-loso --save "
                "benchmarks/results/combined-loso.json`, then `python training/combined.py --card`.")
    return f"```\n{loso_text(results)}\n```"


def card_body(bundle: CombinedModel, results: dict[str, Any] | None) -> str:
    """The card's text: what it is, how it was trained, every weight, the held-out numbers."""
    held = "\n".join(f"| {s} | {', '.join(m.sets)} |" for s, m in sorted(bundle.held_out.items()))
    return f"""# dialeval/combined-judgments

The weights of the `dialeval/combined` metric: non-negative ridge regressions (lambda = {bundle.ridge:g}, one
set's weight) from the other dialeval metrics' headline scores, standardised, to the human rating's
percentile within its set (`dialeval/combined/model.py`). Built by `python training/combined.py`.

**Trained on the human-judgment sets**, which no other dialeval model sees. Every number reported for it
on one of those sets (`dialeval benchmark --all`, `benchmarks/results/combined-loso.txt`) comes from the
model trained without that set (`held_out` in `combined.json`); the `model-index` above holds those
held-out numbers only.

## Leave-one-set-out Spearman with the human ratings
{loso_table(results)}

## Component weights it was trained on
{chr(10).join(f"- {job}: `{model}`" for job, model in bundle.components.items())}

## Weights (z-scored features; `combined = clip(b + sum w_j z_j, 0, 1)`)
Trained on all sets, one model per feature pattern:

```
{weights_table(bundle.models)}
```

Leave-one-set-out models (scored set: trained on):

| set | trained on |
|---|---|
{held}

```
{weights_table(list(bundle.held_out.values()))}
```
"""


def card_content(folder: Path) -> CardContent:
    """The card of ``folder``: :func:`card_body` and, in the metadata, the held-out Spearman per set
    (from :data:`LOSO_RESULTS` when it was measured for these weights)."""
    from dialeval.combined.model import CombinedModel

    bundle = CombinedModel.load(folder)
    results = json.loads(LOSO_RESULTS.read_text()) if LOSO_RESULTS.is_file() else None
    if results and f"@{content_hash(folder)}" not in results.get("signature", ""):
        print(f"{LOSO_RESULTS} was measured for other weights: left out of the card", file=sys.stderr)
        results = None
    measured = [Measured(dataset=r["set"], metric="spearman", value=r["combined"],
                         dataset_name=f"{r['set']} (leave-one-set-out)") for r in (results or {}).get("rows", [])]
    return CardContent(card_body(bundle, results), measured)
