"""Range, direction and meaning of the combined score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dialeval.core.scales import bounded

SCALES = {
    "combined": bounded("combined metric: the human rating's predicted percentile within a rated set, from a "
                         "non-negative ridge regression over the other metrics' headline scores"),
}
