"""Range, direction and meaning of the combined score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dialeval.core.scales import bounded

SCALES = {
    "combined": bounded("combined metric: the mean percentile among human replies of coherence, GRADE and SSREM's "
                         "f (or, for a model of another design, the human rating's predicted percentile within a set)"),
}
