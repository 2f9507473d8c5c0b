"""Part-of-speech tags for dialogue text: Penn-style tokens and an averaged-perceptron tagger.

Used by holistic's WordNet substitution (which words to replace) and GRADE's keywords (nouns,
verbs, adjectives). The tagger is NLTK's greedy averaged perceptron
(:class:`nltk.tag.perceptron.PerceptronTagger`, the same features as Matthew Honnibal's original)
with the pretrained weights (Penn Treebank tag set) of that original, ``trontagger-0.1.0.pickle``,
shipped by the PyPI package ``textblob-aptagger`` 0.2.0 (MIT), a dependency of dialeval. The package
is located, never imported, and the pickle is read with only ``set`` allowed as a global. Text is
split with a regex into Penn-style tokens (``don't`` -> ``do n't``, ``I'm`` -> ``I 'm``) and a lone
``i`` is tagged as ``I`` (lower-cased dialogue data).
"""

from __future__ import annotations

import functools
import importlib.util
import pickle
import re
from pathlib import Path
from typing import Any

TAGGER_PACKAGE = "textblob_aptagger"
TAGGER_FILE = "trontagger-0.1.0.pickle"
TAGGER_INSTALL = "pip install --no-deps textblob-aptagger"

_TOKEN = re.compile(
    r"[a-z]+(?=n['’]t\b)|n['’]t\b|['’](?:s|m|d|ll|re|ve)\b|\d+(?:[.,:]\d+)*|\w+(?:-\w+)*|\S", re.IGNORECASE
)
Span = tuple[int, int]


class _SetsOnlyUnpickler(pickle.Unpickler):
    """The tagger file is dicts, strings, floats and sets: refuse any other global."""

    def find_class(self, module: str, name: str) -> Any:
        if module in ("__builtin__", "builtins") and name == "set":
            return set
        raise pickle.UnpicklingError(f"{TAGGER_FILE}: unexpected global {module}.{name}")


@functools.lru_cache(maxsize=1)
def load_tagger() -> Any:
    """NLTK's ``PerceptronTagger`` with the ``textblob-aptagger`` weights (see module docstring).

    Raises ``FileNotFoundError`` naming the package to install when the weights are missing.
    """
    from nltk.tag.perceptron import PerceptronTagger

    spec = importlib.util.find_spec(TAGGER_PACKAGE)  # locates the package without importing it
    folders = list(spec.submodule_search_locations or []) if spec else []
    path = next((Path(f) / TAGGER_FILE for f in folders if (Path(f) / TAGGER_FILE).is_file()), None)
    if path is None:
        raise FileNotFoundError(
            f"part-of-speech tags need the averaged-perceptron weights {TAGGER_FILE} "
            f"of the textblob-aptagger package. Install them with `{TAGGER_INSTALL}` (install.sh does it)."
        )
    with open(path, "rb") as f:
        weights, tagdict, classes = _SetsOnlyUnpickler(f, encoding="latin1").load()
    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.tagdict, tagger.classes = weights, tagdict, classes
    tagger.model.classes = classes
    return tagger


def token_spans(text: str) -> list[Span]:
    """Character spans of the Penn-style tokens of ``text``."""
    return [m.span() for m in _TOKEN.finditer(text)]


def pos_tag(text: str) -> list[tuple[str, str]]:
    """``(token, Penn tag)`` for each token of ``text``."""
    tokens = [text[a:b] for a, b in token_spans(text)]
    tags = load_tagger().tag(["I" if t == "i" else t for t in tokens])
    return [(token, tag) for token, (_, tag) in zip(tokens, tags)]
