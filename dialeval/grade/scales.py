"""Range, direction and meaning of the GRADE score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dialeval.core.scales import bounded

SCALES = {
    "grade": bounded("GRADE: coherence of the response with the context, from an encoder plus a keyword "
                      "knowledge graph (a ranking model's sigmoid: relative, not a calibrated rating)"),
}
