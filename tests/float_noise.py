"""How far two computations of one float32 score may differ when they do not run in the same
process: another CPU (its vector units sum in another order), another build of torch or numpy, a
wheel's environment beside the checkout's, an app's process beside the test's. One place for the
tolerances, derived from the arithmetic and from what was seen, so that CI passes on any CPU and
under load -- and a real change of a score still fails.

* ``RELATIVE = 1e-4``: a float32 sum of a few hundred terms (a sequence's log-likelihood, a cosine of
  768-dimensional vectors) keeps about 1e-6 of its value between summation orders; 1e-4 leaves two
  orders of margin for sums of sums.
* ``ABSOLUTE = 2e-5``: scores near zero that are differences of such sums (FED's and holistic
  coherence's log-likelihood differences: 5e-6 seen between the CPU that wrote ``tests/golden/`` and
  an AMD EPYC), where a relative tolerance means nothing. It also bounds a correlation over float32
  scores (a Pearson of 500 scores moved 1e-6 between two CPUs: 0.16338778 for 0.16338680) and its
  p-value (``dp/dr`` is about ``sqrt(n)``: 2e-5 for that move).

Comparisons inside one process of a fast path with its reference loop keep their own, tighter,
tolerances: the same CPU and libraries leave only the summation order of the two codes.
"""

import pytest

RELATIVE, ABSOLUTE = 1e-4, 2e-5


def approx(expected):
    """``expected`` (a number or a list of numbers, NaN equal to NaN) up to float32 noise across processes."""
    return pytest.approx(expected, rel=RELATIVE, abs=ABSOLUTE, nan_ok=True)


# Reduced precision (dialeval.core.precision, issue 55) against float32, same inputs, same process.
# bfloat16 keeps 8 significant bits: one rounding moves a value by at most 2**-8 of itself (half an
# ulp is 2**-8 relative at worst). Dynamic int8 rounds a tensor to the 255 steps of its (symmetric
# weights, min-max activations) range: at most half a step, 2**-8 of the tensor's largest magnitude
# (1/(2 * 127.5) for weights, range/510 <= 2 * max/510 for activations). To first order the
# relative errors of the roundings a value passes through add up: a transformer block rounds about
# ROUNDINGS_PER_BLOCK times on the way to the next (layer norm, q/k/v, scores, softmax, attention
# output, residual, layer norm, two MLP products, activation), the embeddings, the final norm and the
# head three more. So a logit moves by at most ``reduced_logit_tolerance(blocks, max |logit|)``, and a
# token's log-probability ``z_i - logsumexp(z)`` by at most twice the largest logit move
# (log-softmax moves by |dz_i| + max |dz|): a sum over n tokens by ``2 n`` times it.
# (Measured on the 2-block tiny GPT-2 of tests/tiny_lm.py: logits moved 0.38 (bfloat16) and 0.18 (int8,
# only its LM head is an nn.Linear) of a bound of 0.98 at max |logit| 10.1.)
REDUCED_UNIT = 2.0 ** -8
ROUNDINGS_PER_BLOCK = 10


def reduced_logit_tolerance(blocks: int, max_abs_logit: float) -> float:
    """The largest move of a logit computed in bfloat16 or int8 instead of float32 (derivation above)."""
    return (ROUNDINGS_PER_BLOCK * blocks + 3) * REDUCED_UNIT * max_abs_logit
