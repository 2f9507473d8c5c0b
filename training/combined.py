"""Build the combined metric (issues 21, 57): the bundled ``dialeval/combined-judgments``.

The combined metric's design (:data:`dialeval.combined.designs.DEFAULT`, or ``--design``) says which
component scores it reads and how they are weighted. A design that fits weights (a non-negative ridge,
:func:`dialeval.combined.model.fit_linear`) is the one dialeval model trained on the shared
human-judgment sets (``$DIALEVAL_DATA``, :func:`dialeval.registry.judgment_sets`): for every set this
script reads the component metrics' per-item scores (the meta-evaluation grid's jobs, through the
score cache: run ``dialeval benchmark --all`` first, or this script scores what is missing) and fits,
from the components' headline scores to the human ratings' percentile within their set:

* one model per feature pattern seen in training (every set whose components include the
  pattern's), trained on all sets: what ``evaluate.load("dialeval/combined")`` and
  ``dialeval score --metric combined`` use;
* for every set ``S``, the model for ``S``'s pattern trained on the sets of every *other* source
  (leave-one-source-out: ``S``'s sibling sets, the same paper's, are held out with it): what
  ``dialeval benchmark --all`` and ``dialeval benchmark --metric combined --dataset combined-loso``
  report on ``S``, so no reported number is in-sample.

A design with no fit (equal weights on the components' percentiles among human replies) reads no
rating: its models are the same for every set. Nothing is tuned: the ridge strength (``--ridge``,
1.0 = one set's weight) is fixed in advance.
Writes ``combined.json`` and the card ``README.md`` (the weights; :mod:`dialeval.combined.card`
through :func:`dialeval.publish.write_model_card`) to ``--output``. The fit is
:mod:`dialeval.combined.training`; this script parses the options and calls it. Seconds once the
components' scores are cached.

    dialeval benchmark --all --output-dir benchmarks/results/metaeval   # the components' scores
    python training/combined.py
    python training/combined.py --sets fed-turn fed-dialog --output /tmp/combined   # a subset
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from dialeval.combined.card import weights_table
from dialeval.combined.designs import DEFAULT, DESIGNS, design_named
from dialeval.combined.model import RIDGE
from dialeval.combined.spec import SPEC
from dialeval.combined.training import fit_bundle, gather
from dialeval.registry import judgment_sets
from dialeval.publish import write_model_card
from dialeval.models.shipped import CHECKOUT_ROOT

OUTPUT = CHECKOUT_ROOT / "hub" / "combined-judgments"
CARD = SPEC.cards[OUTPUT.name]  # what any output folder's card holds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", help="human-judgment sets (default: all)")
    parser.add_argument("--ridge", type=float, default=RIDGE)
    parser.add_argument("--design", default=DEFAULT.name, choices=[d.name for d in DESIGNS],
                        help=f"dialeval/combined/designs.py (default {DEFAULT.name}: {DEFAULT.summary})")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--card", action="store_true",
                        help="only rewrite the card of --output (after the leave-one-source-out benchmarks)")
    args = parser.parse_args(argv)
    if args.card:
        print(f"wrote {write_model_card(args.output, CARD)}")
        return 0
    names = args.sets or list(judgment_sets())
    if len(names) < 2:
        parser.error("leaving sets out needs at least 2 sets")
    design = design_named(args.design)
    rows, components, _ = gather(names, design.features)
    bundle = fit_bundle(rows, args.ridge, design)
    bundle.components = components
    bundle.save(args.output)
    write_model_card(args.output, CARD)
    print(weights_table(bundle.models))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
