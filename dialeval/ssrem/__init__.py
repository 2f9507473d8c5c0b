"""SSREM: speaker-sensitive response evaluation (Bak & Oh 2020, ACL).

Scoring: :mod:`~dialeval.ssrem.scorer` (the scorer: ``f``, ``g`` and ``h``) over
:mod:`~dialeval.ssrem.encoders` (``v``), :mod:`~dialeval.ssrem.checkpoint` (``M`` and its folder) and
:mod:`~dialeval.ssrem.mover` (``g``, the min-max ``h``); :mod:`~dialeval.ssrem.runner` (generic items).
Training, never imported by scoring: :mod:`~dialeval.ssrem.corpus` (speaker-tagged conversations, the
split), :mod:`~dialeval.ssrem.negatives` (speaker-sensitive negatives), :mod:`~dialeval.ssrem.training`
(the run of ``training/ssrem.py``), :mod:`~dialeval.ssrem.heldout` (Section 6) and
:mod:`~dialeval.ssrem.card` (the bundled folder's card). :mod:`~dialeval.ssrem.benchmark` (Table 4
layout, Section 6), :mod:`~dialeval.ssrem.scales` and :mod:`~dialeval.ssrem.spec` (the metric's declaration).
"""
