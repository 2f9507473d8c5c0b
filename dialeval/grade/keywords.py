"""Rule-based keyword extraction for GRADE's topic-level graph (Huang et al. 2020, Section 3.2).

GRADE follows Tang et al. (2019, "Target-Guided Open-Domain Conversation"): a keyword is a word
whose part of speech is a content class and whose TF-IDF salience is high. Here:

* tokens and Penn tags: :func:`dialeval.core.pos.pos_tag` (NLTK's averaged perceptron with the
  ``textblob-aptagger`` weights); tokens are lower-cased after tagging;
* candidates: tags in :data:`CONTENT_TAGS` (nouns, verbs, adjectives), alphabetic, at least two
  letters, not in :data:`STOPWORDS` (auxiliaries, light verbs and fillers the tagger calls
  verbs/adjectives); two adjacent tokens form one candidate when the bigram is a known phrase
  (a multi-word knowledge-graph concept such as ``ice cream``);
* salience ``s(w) = tf(w, text) * idf(w)``, ``idf(w) = ln((1 + N) / (1 + df(w))) + 1`` over the
  ``N`` utterances of the training corpus (:class:`IDFTable`, saved with the checkpoint as JSON);
* the ``limit`` most salient candidates are kept, ties in order of first occurrence.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from dialeval.core.pos import pos_tag, token_spans

CONTENT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "JJ", "JJR", "JJS"})
STOPWORDS = frozenset("""
am is are was were be been being 's 'm 're have has had having do does did doing done 've 'd
will would shall should can could may might must get gets got getting let lets go goes going went gone
make makes made say says said tell told know knew known think thought want wanted need needed see
saw seen come came take took give gave put like okay ok yes yeah yep no nope sure oh hi hello hey
thanks thank please sorry well much many lot lots thing things something anything everything nothing
way kind sort bit guess mean really very good great nice fine right little other same such own
""".split())
IDF_FILE = "idf.json"


@dataclass
class IDFTable:
    """Document frequencies over ``n_docs`` utterances; ``idf(w) = ln((1+N)/(1+df)) + 1``."""

    n_docs: int
    df: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, texts: Iterable[str], min_df: int = 2) -> "IDFTable":
        """Count each lower-cased token once per text; keep tokens with ``df >= min_df`` (rarer
        ones get the same idf as unseen words, the maximum)."""
        counts: Counter[str] = Counter()
        n = 0
        for text in texts:
            n += 1
            counts.update({text[a:b].lower() for a, b in token_spans(text)})
        if n == 0:
            raise ValueError("IDFTable.build: texts is empty")
        return cls(n, {w: c for w, c in counts.items() if c >= min_df})

    def idf(self, word: str) -> float:
        return math.log((1 + self.n_docs) / (1 + self.df.get(word, 0))) + 1.0

    def save(self, folder: str | os.PathLike) -> Path:
        path = Path(folder) / IDF_FILE
        path.write_text(json.dumps({"n_docs": self.n_docs, "df": dict(sorted(self.df.items()))}))
        return path

    @classmethod
    def load(cls, folder: str | os.PathLike) -> "IDFTable":
        path = Path(folder) / IDF_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: no IDF table {IDF_FILE}")
        raw = json.loads(path.read_text())
        return cls(int(raw["n_docs"]), {str(k): int(v) for k, v in raw["df"].items()})


class KeywordExtractor:
    """TF-IDF x part-of-speech keywords (see module docstring); ``phrases`` are multi-word units."""

    def __init__(self, idf: IDFTable, phrases: Iterable[str] = ()) -> None:
        self.idf = idf
        self.phrases = frozenset(p for p in phrases if " " in p)

    def candidates(self, text: str) -> list[str]:
        """Content-word and known-phrase candidates of ``text`` in order (with repeats)."""
        if not isinstance(text, str):
            raise ValueError(f"keyword extraction needs a string, got {type(text).__name__}")
        tagged = [(tok.lower(), tag) for tok, tag in pos_tag(text)] if text.strip() else []
        out: list[str] = []
        i = 0
        while i < len(tagged):
            if i + 1 < len(tagged):
                bigram = f"{tagged[i][0]} {tagged[i + 1][0]}"
                if bigram in self.phrases:
                    out.append(bigram)
                    i += 2
                    continue
            word, tag = tagged[i]
            if tag in CONTENT_TAGS and word.isalpha() and len(word) >= 2 and word not in STOPWORDS:
                out.append(word)
            i += 1
        return out

    def salience(self, text: str) -> dict[str, float]:
        """``tf * idf`` of every candidate (a phrase's idf: the mean of its words' idf)."""
        tf = Counter(self.candidates(text))
        return {w: c * sum(self.idf.idf(p) for p in w.split()) / len(w.split()) for w, c in tf.items()}

    def extract(self, text: str, limit: int) -> list[str]:
        """The ``limit`` most salient candidates of ``text`` (ties: first occurrence first)."""
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ValueError(f"limit must be an integer >= 0, got {limit!r}")
        scores = self.salience(text)
        order = {w: i for i, w in reversed(list(enumerate(self.candidates(text))))}
        return sorted(scores, key=lambda w: (-scores[w], order[w]))[:limit]
