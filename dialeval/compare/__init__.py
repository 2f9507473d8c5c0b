"""Compare dialogue systems: "is my model better than the baseline?" (``dialeval compare``).

The input is two or more systems' responses to the SAME contexts: JSON-lines files in the generic
format of :mod:`dialeval.data` (``context``, ``response``, optional ``references`` and ``id``; no
``score`` needed), or outputs of ``dialeval score`` (``OUT.jsonl`` with its ``OUT.jsonl.meta.json``).
For every chosen metric and sub-score the result holds each system's mean with a bootstrap
interval, every pair's mean difference with a paired bootstrap interval, the paired-bootstrap
(Koehn 2004) and approximate-randomization p-values (raw and corrected for the number of pairs),
and a ranking with ties (:mod:`dialeval.stats.paired` has the formulas). Every sub-score
carries its scale (range, direction, raw flag, meaning: :func:`dialeval.registry.describe`), and the
ranking follows the scale's direction.

How systems are joined (:func:`read_systems`)
    ``join="id"``: records are matched on their ``id`` (every record of every file needs one, unique
    within its file, and all files must hold the same ids; the order is the first file's).
    ``join="line"``: record ``i`` of every file is paired (equal record counts required). ``"auto"``
    (default) joins on ``id`` when every record of every file has one, else on line order. A joined
    item must have the same ``context`` in every file (else ``ValueError`` naming both file lines);
    ``references`` may be given in one file only (they then serve every system), but where two
    files give them they must agree.
    Scored outputs must all come from the same metric, with the same signature (scores of another
    model, version or setting are not comparable), and be complete (as many lines as the meta says).

Human responses beside the systems (:func:`compare_systems`, ``human=True``)
    When every joined item has at least one reference, the metric also scores the human responses as
    a pseudo-system: the first reference is the "response", the other references are its
    references (leave-one-out: a reference scored against itself would be perfect). Its mean and
    bootstrap interval (on the same resamples as the systems) are reported beside the systems; the
    pseudo-system takes no part in the pairwise tests, the correction or the ranking. With one
    reference fewer, a referenced metric is slightly harder on the humans than on the systems;
    a metric that cannot score the pseudo-system (a referenced metric with single-reference items)
    reports why instead.

The correction (Holm by default) covers the ``k(k-1)/2`` pairs of one sub-score; looking at many
sub-scores or metrics is a further multiplicity the reader has to weigh. Scores go through the score
cache (:mod:`dialeval.scoring.cache`), one entry per system and metric: an interrupted comparison
re-scores only the systems it had not finished; ``progress`` shows a bar per system.

Missing values: a sub-score that is NaN for an item (e.g. a diversity score without groups) drops
that item for every system of that sub-score (``n_dropped``); a sub-score left with fewer than 2
items is skipped with the reason.

The statistics live in :mod:`dialeval.stats`; this package reads and joins the systems
(:mod:`~dialeval.compare.systems`), scores and compares them (:mod:`~dialeval.compare.comparison`) and
writes the reports (:mod:`~dialeval.compare.report`); its public names are importable from here. ``compare_unpaired``, ``unpaired_agreement``, ``agreement_of``,
``rank_groups``, ``pair_items``, ``system_agreement`` (now in :mod:`dialeval.stats`) and
``scale_dict`` (now :func:`dialeval.registry.scale_dict`) are still importable from here for one
release.
"""

from __future__ import annotations

from dialeval.compare.comparison import compare_files, compare_systems
from dialeval.compare.report import markdown, plot, to_json
from dialeval.compare.systems import HUMAN, JOINS, Systems, default_names, read_systems
from dialeval.registry import scale_dict  # noqa: F401  (kept here for one release)
from dialeval.stats.paired import agreement_of, rank_groups  # noqa: F401  (kept here for one release)
from dialeval.stats.systems import pair_items, system_agreement  # noqa: F401  (kept here for one release)
from dialeval.stats.unpaired import compare_unpaired, unpaired_agreement  # noqa: F401  (kept here for one release)

__all__ = [
    "HUMAN", "JOINS", "Systems", "agreement_of", "compare_files", "compare_systems", "compare_unpaired",
    "default_names", "markdown", "pair_items", "plot", "rank_groups", "read_systems", "scale_dict",
    "system_agreement", "to_json", "unpaired_agreement",
]
