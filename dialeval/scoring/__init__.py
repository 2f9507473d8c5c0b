"""Scoring items with a metric's runner, the way every command and long run does it.

* :mod:`~dialeval.scoring.runners`: each metric's runner, from the registry;
* :mod:`~dialeval.scoring.chunks`: the one chunked scoring loop and the option checks; its public
  names are re-exported here (``from dialeval.scoring import score_chunks``);
* :mod:`~dialeval.scoring.cache`: the on-disk score cache and ``scores_for``, the chunked,
  resumable scoring of every long run;
* :mod:`~dialeval.scoring.resume`: what ``dialeval score`` keeps to resume exactly;
* :mod:`~dialeval.scoring.sharding`: data-parallel ``dialeval score`` and ``dialeval merge``.
"""

from dialeval.scoring.chunks import CHUNK_SIZE, accepted_options, check_options, chunk_ranges, score_chunks

__all__ = ["CHUNK_SIZE", "accepted_options", "check_options", "chunk_ranges", "score_chunks"]
