"""Text handling shared by every metric: the tokenizers and input validation.

Regex tokenizer :func:`tokenize` (dialeval's own; holistic diversity and ``multiref``'s
``tooling="dialeval"`` use it): lower-case the text, then take, left to right, the matches of
``TOKEN_PATTERN``: runs of word characters with inner apostrophes kept (``don't``), a word-initial
apostrophe clitic as its own token (``'m`` in DailyDialog's pre-tokenised ``i 'm``), or any single
other non-space character (punctuation). So ``"I'm fine, thanks!"`` -> ``["i'm", "fine", ",", "thanks", "!"]``.

Whitespace tokenizer :func:`whitespace_tokenize` (Gupta et al. 2019's ``clean_split_sentence``,
``multiref``'s ``tooling="paper"``): lower-case, then split on runs of whitespace. DailyDialog is
distributed pre-tokenised (``"i 'm fine , thanks ."``), so this keeps the authors' tokens; unlike
the authors' script an empty text gives no token (not ``["."]``) and so scores 0.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Sequence

TOKEN_PATTERN = re.compile(r"\w+(?:'\w+)*|'\w+|[^\w\s]")
TOKENIZER_NAME = "lower-regex"
WHITESPACE_TOKENIZER_NAME = "lower-split"
# Every text a metric reads is cut to this many characters, with a warning (docs/inputs.md): about
# 20,000 words, beyond every model window used here (SmolLM2's 8,192 tokens) and every real turn,
# so that one 50 MB reply cannot take minutes and gigabytes before being cut or thrown away.
MAX_CHARS = 100_000


def tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and split it with :data:`TOKEN_PATTERN`."""
    return TOKEN_PATTERN.findall(text.lower())


def whitespace_tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and split it on whitespace: ``"I 'm fine ."`` -> ``["i", "'m", "fine", "."]``."""
    return text.lower().split()


def check_texts(items: Any, name: str, allow_empty: bool = False) -> list[str]:
    """Validate a list of strings; raise ``ValueError`` naming ``name`` and the bad item's index.
    Returns the texts, each cut to :data:`MAX_CHARS` characters (:func:`bound_length`)."""
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise ValueError(f"{name} must be a list of strings, got {type(items).__name__}")
    if len(items) == 0:
        raise ValueError(f"{name} is empty: pass at least one item")
    for i, item in enumerate(items):
        if item is None:
            raise ValueError(f"{name}[{i}] is None; expected a string")
        if not isinstance(item, str):
            raise ValueError(f"{name}[{i}] must be a string, got {type(item).__name__}")
        if not allow_empty and not item.strip():
            raise ValueError(f"{name}[{i}] is an empty string")
    return bound_length(list(items), name)


def bound_length(texts: list[str], name: str, limit: int = MAX_CHARS) -> list[str]:
    """``texts`` with every text longer than ``limit`` characters cut to its first ``limit``, and one
    warning naming how many were cut, the first one's index and its length."""
    long = [i for i, text in enumerate(texts) if len(text) > limit]
    if not long:
        return texts
    warnings.warn(f"{name}: {len(long)} text(s) longer than {limit:,} characters cut to their first {limit:,} "
                  f"(dialeval's input bound; {name}[{long[0]}] had {len(texts[long[0]]):,})", stacklevel=3)
    return [text[:limit] if len(text) > limit else text for text in texts]


def check_reference_lists(references: Any, n_items: int, name: str = "references",
                          scored: str = "predictions") -> list[list[str]]:
    """Normalise references to one non-empty list of strings per item.

    A plain list of strings means one reference per item. Raises ``ValueError`` on a length
    mismatch with the ``n_items`` texts scored (the input ``scored``: multiref's ``predictions``,
    SSREM's ``responses``), an empty reference list, or a non-string reference.
    """
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise ValueError(f"{name} must be a list, got {type(references).__name__}")
    if len(references) != n_items:
        raise ValueError(f"{name} has {len(references)} items but there are {n_items} {scored}")
    out = []
    for i, refs in enumerate(references):
        if isinstance(refs, str):
            refs = [refs]
        if refs is None or not isinstance(refs, Sequence):
            raise ValueError(f"{name}[{i}] must be a string or a list of strings, got {type(refs).__name__}")
        if len(refs) == 0:
            raise ValueError(f"{name}[{i}] is an empty list: give at least one reference")
        out.append(check_texts(refs, f"{name}[{i}]"))
    return out


def check_same_length(**named: Sequence) -> int:
    """Check that all named sequences have the same length; return it."""
    lengths = {name: len(seq) for name, seq in named.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ValueError(f"inputs have mismatched lengths: {desc}")
    return next(iter(lengths.values()))


def check_contexts(contexts: Any, n_items: int) -> list[list[str]]:
    """One non-empty list of turns per item (a string is a one-turn context); ``ValueError`` naming
    the bad item."""
    if isinstance(contexts, str) or not isinstance(contexts, Sequence):
        raise ValueError(f"contexts must be a list (one list of turns per response), got {type(contexts).__name__}")
    if len(contexts) != n_items:
        raise ValueError(f"contexts has {len(contexts)} items but there are {n_items} responses")
    return [check_texts([c] if isinstance(c, str) else c, f"contexts[{i}]") for i, c in enumerate(contexts)]
