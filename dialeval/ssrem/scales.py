"""Range, direction and meaning of every SSREM sub-score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dialeval.core.scales import bounded, raw

SCALES = {
    "ssrem": bounded("SSREM: mean of f (fit to the context) and g (similarity to the references), each "
                      "min-max scaled to 0..1 (by default the model's stored 1st/99th percentiles, "
                      "scaling='set': the scored set's range) and clipped"),
    "ssrem_f": raw("SSREM f before scaling: v(context)^T M v(response), a learned bilinear fit of the "
                    "response to the context (unbounded; no tanh; a flagged response counts as the floor)",
                   floor=-1000.0),
    "ssrem_g": raw("SSREM g before scaling: sentence mover's similarity exp(-EMD) with the best-matching "
                    "reference", low=0.0, high=1.0),
}
