"""Data: the generic item format and everything read from ``$DIALEVAL_DATA``.

* :mod:`~dialeval.data.items`: the generic JSON-lines items (:class:`JudgmentItem`), strict reading
  of JSON-lines files, record hashes, and where ``$DIALEVAL_DATA`` is; its public names are
  re-exported here (``from dialeval.data import JudgmentItem``);
* :mod:`~dialeval.data.corpora`: training corpora readers (DailyDialog, chit-chat, NLI pairs);
* :mod:`~dialeval.data.paper`: the five papers' published numbers.

The human-judgment sets are loaded by name in one place, the registry
(:func:`dialeval.registry.load_judgments`): each metric declares the sets it owns.
"""

from dialeval.data.items import (
    JudgmentItem, completed_lines, data_dir, data_file, items_as_dicts, load_judgment_file, lone_surrogate_at,
    read_jsonl, read_numbered_jsonl, record_hash,
)

__all__ = ["JudgmentItem", "completed_lines", "data_dir", "data_file", "items_as_dicts", "load_judgment_file",
           "lone_surrogate_at", "read_jsonl", "read_numbered_jsonl", "record_hash"]
