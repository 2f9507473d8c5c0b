"""Range, direction and meaning of every holistic sub-score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dialeval.core.scales import Scale, bounded, raw

# The value a flagged response counts as on a raw log-probability, and the clip of a real one
# (dialeval.core.scales): below -122 nats per token even summed over the whole 8,192-token window.
LOGPROB_FLOOR = -1e6

SCALES = {
    "coherence": bounded("how much more likely the response is after the context than alone under a dialogue "
                          "LM: the logistic of coherence_pmi, 0.25 and 0.75 at its calibration quartiles (with "
                          "pmi_weight=0, Pang et al.'s: how likely the response is after the context, 0 at or below "
                          "the 5th-percentile cutoff, 1 for certainty)"),
    "coherence_raw": raw("coherence before normalisation: log-probability per response token given the "
                          "context (the sum with reduction='sum')", high=0.0, floor=LOGPROB_FLOOR),
    "coherence_pmi": raw("weighted PMI of the response and its context (pmi_weight lam, default 0.85): its mean "
                          "(or summed) log-probability given the context minus lam times the same alone, in nats; "
                          "higher = the context explains more of the response", floor=LOGPROB_FLOOR),
    "fluency": bounded("how likely the response is on its own, without the context, under a dialogue LM; 0 "
                        "at or below the 5th-percentile cutoff, 1 for certainty"),
    "fluency_raw": raw("fluency before normalisation: log-probability of the whole response alone, without "
                        "the context (per token with reduction='mean')", high=0.0, floor=LOGPROB_FLOOR),
    "consistency": bounded("1 - mean NLI contradiction probability of the response against its speaker's "
                            "earlier turns (1 when there are none)"),
    "consistency_pairs": Scale(0.0, None, None, False, "how many earlier turns of the response's speaker "
                                                       "consistency compared the response with"),
    "diversity": raw("mean n-gram entropy (n = 1..3, nats) of the responses given to one context or group; "
                      "higher = more varied wording", low=0.0),
    **{f"entropy{n}": raw(f"{n}-gram entropy (nats) of the responses given to one context or group; higher = "
                           "more varied wording", low=0.0) for n in (1, 2, 3)},
}
