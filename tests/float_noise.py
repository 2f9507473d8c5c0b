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
