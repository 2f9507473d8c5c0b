"""Multi-reference evaluation of open-domain dialogue (Gupta et al. 2019, SIGdial).

:mod:`~dialeval.multiref.scorer` (quality as the max over references, referenced diversity,
Distinct-n, Self-BLEU), :mod:`~dialeval.multiref.overlap` (BLEU, ROUGE-L), :mod:`~dialeval.multiref.meteor`
(METEOR 1.5 / NLTK), :mod:`~dialeval.multiref.embedding` (embedding metrics),
:mod:`~dialeval.multiref.runner` (generic items), :mod:`~dialeval.multiref.data` (the multi-reference
test set and ratings), :mod:`~dialeval.multiref.benchmark` (Table 4), :mod:`~dialeval.multiref.scales`
and :mod:`~dialeval.multiref.spec` (the metric's declaration).
"""
