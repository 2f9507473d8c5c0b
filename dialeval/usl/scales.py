"""Range, direction and meaning of every USL-H sub-score (:mod:`dialeval.core.scales`).
"""

from __future__ import annotations

from dialeval.core.scales import bounded

SCALES = {
    "usl": bounded("USL-H as the authors' scorer computes it, 0.33*U + 0.33*S + 0.34*S*L, of understandability, "
                   "sensibleness and specificity (hierarchy='H': the paper's 0.33*U + 0.33*U*S + 0.34*U*S*L)"),
    "usl_u": bounded("U, valid utterance prediction: the probability that the response is a well-formed utterance "
                     "(a classifier trained to tell DailyDialog responses from reordered, dropped or repeated words)"),
    "usl_s": bounded("S, next utterance prediction: the probability that the response is the context's true next "
                     "turn rather than a random DailyDialog response"),
    "usl_l": bounded("L, specificity: the response's summed token NLL under the LM, clipped to the quartiles of "
                     "DailyDialog validation responses' NLL and scaled to 0..1 (higher = less likely = more specific)"),
}
