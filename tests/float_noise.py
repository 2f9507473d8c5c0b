"""How far two computations of one float32 value may differ: the tolerance of every approximate
comparison of float32 values in the tests (``pytest.approx``, ``np.allclose``, ``torch.allclose``,
``math.isclose``, ...), each derived once here from the arithmetic, so that CI passes on any CPU and
under load -- and a real change of a score still fails. ``tests/test_tolerances.py`` finds any such
call without an explicit tolerance; values that are exact (float64 arithmetic by hand, counts,
pure-python statistics) name their own tight tolerance at the call (``rel=1e-12`` and the like), and
so do numbers compared with a value written to a few decimals (half a unit of its last digit).

float32 keeps ``EPS = 2**-23`` (1.19e-7) of a value; one operation rounds to half of that.

**Exact values against float32** (the same process, the same numbers):

* ``ROUNDING = 1e-6``: a float32 value from a few operations on numbers of order one (a softmax of a
  few logits, a sigmoid, a normalised adjacency, a loss of a few terms) against its exact value (by
  hand, in float64, or written to six decimals): each operation rounds to 2**-24 = 6e-8, a dozen of
  them stay below 1e-6. Relative, or absolute for values of order one.

**One float32 computation by two codes in one process** (a fast path against its plain loop, a
batch against one item at a time, padded against unpadded, a merged adapter against the unmerged
one, float32 against the float64 loop): only the order of the float32 sums differs.

* ``SUM = 1e-5`` relative: a sum of n float32 terms in another order moves by about ``sqrt(n) * EPS``
  of the sum of their magnitudes (roundings add up as a random walk): 3.8e-6 for n = 1,024, the
  widest hidden size and the longest sequence here; layer norms keep that relative through the
  layers. Also absolute for values of scale one (layer-normed activations, probabilities, sigmoid
  scores), whose noise follows the scale rather than a value that may be near zero.
* ``LOGPROB = 1e-4`` absolute (nats): a logit, a token's log-probability and the sums and
  differences of a few of them (a follow-up's log-likelihood, FED's and holistic's log-likelihood
  differences, a PMI). A log-softmax is a difference of float32 numbers of the size of the logits
  (up to ~10 here; log of GPT-2's 50,257 tokens is 10.8), so each is known to ``10 * SUM``; a
  difference near zero keeps that absolute noise, which a relative tolerance cannot cover.
* ``PERPLEXITY = 16 * SUM`` (1.6e-4) relative: a perplexity ``exp(m)`` of a mean NLL ``m`` moves by
  ``dm`` relative (``d exp(m) / exp(m) = dm``), and ``m`` is known to ``SUM`` relative, so the
  perplexity to ``m * SUM``; ``m <= 16`` nats for every model here (the tiny random GPT-2's
  perplexity 36,913 is 10.5 nats; ``e**16`` = 8.9e6). It covers the ``LOGPROB`` floor of ``m``
  too. CI on an AMD EPYC moved that 36,913 by 1.1e-6 relative: 1.1e-6 nats, one float32 step of 10.5.
* ``COSINE = 2 * SUM`` absolute: a cosine of two encoder outputs, each known to ``SUM`` relative
  (other batch, other padding), moves by at most ``|da| / |a| + |db| / |b|``.
* ``FLOAT16 = 2e-2`` absolute: a value recomputed from a float16 copy of float32 activations (NLI
  training's stored hidden states): float16 keeps 2**-11 = 4.9e-4 relative, times activations and
  logits up to ~10 and a layer's sums: 2e-2.

**Across processes** (another CPU whose vector units sum in another order, another build of torch
or numpy, a wheel's environment beside the checkout's, an app's process beside the test's, numbers
written to ``tests/golden/`` or pinned when a folder was trained):

* ``RELATIVE = 1e-4``: a float32 sum of a few hundred terms (a sequence's log-likelihood, a cosine of
  768-dimensional vectors) keeps about 1e-6 of its value between summation orders; 1e-4 leaves two
  orders of margin for sums of sums.
* ``ABSOLUTE = 2e-5``: scores near zero that are differences of such sums (FED's and holistic
  coherence's log-likelihood differences: 5e-6 seen between the CPU that wrote ``tests/golden/`` and
  an AMD EPYC), where a relative tolerance means nothing. It also bounds a correlation over float32
  scores (a Pearson of 500 scores moved 1e-6 between two CPUs: 0.16338778 for 0.16338680) and its
  p-value (``dp/dr`` is about ``sqrt(n)``: 2e-5 for that move).
* ``rank_approx(expected, n, statistic)``: a rank statistic (Spearman, Kendall) over n float32 scores
  moves in whole steps when that noise reorders two scores closer than it. Two adjacent ranks that swap
  change the sum of squared rank differences by ``2 (d_i - d_j) + 2``, at most ``2 n + 2``, so Spearman
  by at most ``6 (2n + 2) / (n (n**2 - 1)) = 12 / (n (n - 1))``, and turn one concordant pair into a
  discordant one, so Kendall by ``2 / (n (n - 1) / 2) = 4 / (n (n - 1))``. Among n scores spread over a
  range R, about ``n**2 * delta / R`` adjacent gaps are below a noise delta: for 500 cosines near 0.9
  (range ~0.5, delta 1e-6 relative) about 0.5, so :data:`RANK_FLIPS` = 2 swaps are allowed; a changed
  formula moves a correlation by far more. A CPU with AVX-512 beside the AVX2 one that wrote
  ``tests/golden/``: one swap, multiref-mturk's embedding-average Spearman 0.0899258 -> 0.0899673
  (4.2e-5 of the 4.8e-5 bound), Kendall of greedy matching 1.63e-5 (the 1.6e-5 step). Its p-value moves
  by ``dp/dr`` times that: for Student's t with ``n - 2`` degrees of freedom, ``dp/dr = 2 f(t) dt/dr``
  with ``f <= 0.4`` and ``dt/dr = sqrt(n - 2) / (1 - r**2)**1.5`` (Kendall's normal approximation:
  ``dp/dtau = 2 phi(z) dz/dtau``, ``dz/dtau = 3 sqrt(n (n - 1)) / sqrt(2 (2n + 5))``, below ``1.1 sqrt(n)``).
"""

import math

import pytest

ROUNDING = 1e-6
SUM = 1e-5
LOGPROB = 1e-4
PERPLEXITY = 16 * SUM
COSINE = 2 * SUM
FLOAT16 = 2e-2
RELATIVE, ABSOLUTE = 1e-4, 2e-5


RANK_FLIPS = 2
RANK_STEP = {"spearman": lambda n: 12 / (n * (n - 1)), "kendall": lambda n: 4 / (n * (n - 1))}


def rank_approx(expected: float, n: int, statistic: str, p_value: bool = False):
    """``expected``, a ``statistic`` ("spearman" or "kendall") over ``n`` float32 scores (or, with
    ``p_value``, its p-value; ``expected`` is then the p-value and the move is scaled by ``dp/dr`` at
    worst), up to :data:`RANK_FLIPS` swaps of near-tied scores (module docstring) and float32 noise."""
    moved = RANK_FLIPS * RANK_STEP[statistic](n)
    if p_value:
        moved *= 0.8 * 1.1 * math.sqrt(n) / 0.75 ** 1.5  # dp/dr (docstring) for |r| <= 0.5
    return pytest.approx(expected, rel=RELATIVE, abs=ABSOLUTE + moved, nan_ok=True)


def approx(expected):
    """``expected`` (a number or a list of numbers, NaN equal to NaN) up to float32 noise across processes."""
    return pytest.approx(expected, rel=RELATIVE, abs=ABSOLUTE, nan_ok=True)


# Reduced precision (dialeval.core.precision, issue 55) against float32, same inputs, same process.
# bfloat16 keeps 8 significant bits: one rounding moves a value by at most 2**-8 of itself (half an
# ulp is 2**-8 relative at worst). Dynamic int8 (fbgemm, per_channel_dynamic_qconfig) rounds each
# weight row to the 255 steps of [-max, max] of that row: half a step, 2**-8 of the row's largest
# magnitude; and each Linear's input activations at run time to 128 steps of their [min, max]
# (fbgemm's reduce_range keeps 7 bits): half a step, range/254 <= 2 * max/254, 2**-7 of the tensor's
# largest magnitude. So the unit of a rounding is REDUCED_UNIT[precision]: 2**-8 (bfloat16), 2**-7
# (int8, the coarser of its two roundings). To first order the relative errors of the roundings a
# value passes through add up: a transformer block rounds about ROUNDINGS_PER_BLOCK units on the way
# to the next (bfloat16: layer norm, q/k/v, scores, softmax, attention output, residual, layer norm,
# two MLP products, activation; int8, every projection an nn.Linear as in Llama/Gemma: 4 activation
# roundings at 2**-7 (the q/k/v input, o's, gate/up's, down's) and 7 weight roundings at 2**-8, 7.5
# units), the embeddings, the final norm and the head three more. So a logit moves by about
# ``reduced_logit_tolerance(blocks, max |logit|, precision)``, and a token's log-probability
# ``z_i - logsumexp(z)`` by at most twice the largest logit move (log-softmax moves by
# |dz_i| + max |dz|): a sum over n tokens by ``2 n`` times it. This is first order and relative to the
# largest value: random weights that cancel (initializer_range 0.5) amplify it, which is why the tests
# hold log-probabilities (sums over tokens) to it, not single logits.
# (Measured on the 2-block tiny models of tests/test_precision.py, max |logit| 11.3 (GPT-2) and 12.1
# (Llama): GPT-2's logits moved 0.38 (bfloat16) and 0.18 (int8, only its LM head is an nn.Linear) of
# 1.01 and 2.03; the Llama's token log-probabilities moved by at most 0.54 (bfloat16) and 1.37 (int8)
# of 2 * 1.09 and 2 * 2.17, its single logits up to 1.28 and 2.93.)
# bfloat16-matmul: oneDNN may round the inputs of each float32 product to bfloat16 (its math mode allows
# it; measured on an AVX-512 EPYC it stays near float32: FED's scores within 5e-5), so at worst bfloat16's unit.
REDUCED_UNIT = {"bfloat16": 2.0 ** -8, "int8": 2.0 ** -7, "bfloat16-matmul": 2.0 ** -8}
ROUNDINGS_PER_BLOCK = 10


def reduced_logit_tolerance(blocks: int, max_abs_logit: float, precision: str) -> float:
    """The first-order move of a logit computed in ``precision`` (bfloat16 or int8) instead of
    float32 (derivation above)."""
    return (ROUNDINGS_PER_BLOCK * blocks + 3) * REDUCED_UNIT[precision] * max_abs_logit
