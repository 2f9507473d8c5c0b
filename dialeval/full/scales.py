"""Range, direction and meaning of FULL's one sub-score (:mod:`dialeval.core.scales`)."""

from __future__ import annotations

from dialeval.core.scales import Scale, raw


def scales() -> dict[str, Scale]:
    """``full``: a mean perplexity (1 or more) or a mean negative log-likelihood (0 or more) of the
    negative follow-ups, by variant; 0 bounds both, and is what a degenerate response gets."""
    return {"full": raw(
        "FULL: how unlikely the negative follow-ups (\"You're really boring.\", ...) are after the "
        "conversation, as their mean perplexity (the loglik variants: their mean negative log-likelihood)", low=0.0)}
