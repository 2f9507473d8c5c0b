"""The commonsense knowledge graph behind GRADE and the dialogue graph built from it
(Huang et al. 2020, Sections 3.2-3.3).

:class:`KnowledgeGraph` is the one interface the model sees: concepts, ``neighbours(c, k)`` (the
nodes at exactly ``k`` hops, undirected), ``hops(a, b)`` (shortest-path length, cached per source
by searching from both ends, at most ``max_hops``) and ``concept(word)`` (a keyword mapped onto a node
of the graph). It reads

* ConceptNet-100K (``Relation<TAB>head<TAB>tail``, multi-word concepts such as ``ice cream``), the
  offline graph (``$DIALEVAL_DATA/corpora/conceptnet100k/train.txt``, bundled with the checkpoint
  as ``conceptnet.txt``), or
* ConceptNet 5's full assertion list (``conceptnet-assertions-5.7.0.csv[.gz]``, English edges
  ``/c/en/...`` only, ``_`` -> space), when a user supplies it.

The dialogue graph of one (context, response) pair (Section 3.3, :func:`dialogue_adjacency`):
nodes = context keywords then response keywords; an edge joins every context node to every
response node (none within the context or within the response) with weight ``1 / h``, ``h`` the
ConceptNet hop distance clipped to ``[1, max_hops + 1]`` (same concept: 1; unreachable within
``max_hops``: ``max_hops + 1``). :func:`normalized_adjacency` gives the augmented normalised
adjacency ``D^-1/2 (A + I) D^-1/2`` over the real nodes (Kipf & Welling 2017).
"""

from __future__ import annotations

import csv
import functools
import gzip
import os
import random
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

GRAPH_FILE = "conceptnet.txt"
DEFAULT_MAX_HOPS = 2  # 3-hop balls of ConceptNet-100K hold about half of its 78k concepts


def _suffix_variants(word: str) -> list[str]:
    """``word`` and its naive base forms: plural ``-s/-es/-ies``, ``-ing``, ``-ed`` stripped."""
    out = [word]
    if word.endswith("ies") and len(word) > 4:
        out.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 3:
        out.append(word[:-2])
    if word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
        out.append(word[:-1])
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            out += [stem, stem + "e"] + ([stem[:-1]] if len(stem) > 2 and stem[-1] == stem[-2] else [])
    return out


class KnowledgeGraph:
    """An undirected concept graph (see module docstring)."""

    def __init__(self, edges: Iterable[tuple[str, str, str]], max_hops: int = DEFAULT_MAX_HOPS, source: str = "") -> None:
        if not isinstance(max_hops, int) or max_hops < 1:
            raise ValueError(f"max_hops must be an integer >= 1, got {max_hops!r}")
        self.max_hops = max_hops
        self.source = source
        self.index: dict[str, int] = {}
        adjacency: list[set[int]] = []
        n_edges = 0
        for _, head, tail in edges:
            ids = []
            for concept in (head, tail):
                concept = " ".join(concept.lower().replace("_", " ").split())
                if concept not in self.index:
                    self.index[concept] = len(adjacency)
                    adjacency.append(set())
                ids.append(self.index[concept])
            if ids[0] != ids[1]:
                adjacency[ids[0]].add(ids[1])
                adjacency[ids[1]].add(ids[0])
                n_edges += 1
        if not self.index:
            raise ValueError(f"knowledge graph {source or '(edges)'} has no edges")
        self.names = list(self.index)
        self.adjacency = [frozenset(a) for a in adjacency]
        self.n_edges = n_edges
        self._cached_layers = functools.lru_cache(maxsize=4096)(self._layers)

    # -- reading --------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | os.PathLike, max_hops: int = DEFAULT_MAX_HOPS) -> "KnowledgeGraph":
        """ConceptNet-100K style ``Relation<TAB>head<TAB>tail`` text, or ConceptNet 5's assertion CSV
        (``.csv`` / ``.csv.gz``: ``uri, relation, start, end, info``; English-English edges kept)."""
        p = Path(path).expanduser()
        if not p.is_file():
            raise FileNotFoundError(f"knowledge graph file not found: {p}")
        if p.name.endswith((".csv", ".csv.gz")):
            return cls(_assertions(p), max_hops, str(p))
        edges = []
        with open(p, encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                parts = line.rstrip("\n").split("\t")
                if len(parts) < 3:
                    if line.strip():
                        raise ValueError(f"{p}:{line_no}: expected 'Relation<TAB>head<TAB>tail'")
                    continue
                edges.append((parts[0], parts[1], parts[2]))
        return cls(edges, max_hops, str(p))

    # -- lookups --------------------------------------------------------------------------------
    def __contains__(self, concept: str) -> bool:
        return concept in self.index

    def __len__(self) -> int:
        return len(self.names)

    def multiword(self) -> list[str]:
        """The concepts of two words (what the keyword extractor matches as phrases)."""
        return [c for c in self.names if c.count(" ") == 1]

    def concept(self, keyword: str) -> str | None:
        """The node a keyword maps to: itself or a naive base form (:func:`_suffix_variants`)."""
        return next((v for v in _suffix_variants(keyword) if v in self.index), None)

    def _layers(self, source: int, depth: int) -> tuple[frozenset[int], ...]:
        """``layers[k]`` = the node ids at exactly ``k`` hops from ``source``, ``k = 0..depth``."""
        layers = [frozenset([source])]
        seen = set(layers[0])
        for _ in range(depth):
            frontier = set().union(*(self.adjacency[n] for n in layers[-1])) - seen
            seen |= frontier
            layers.append(frozenset(frontier))
        return tuple(layers)

    def hops(self, a: str, b: str) -> int | None:
        """Shortest hop distance between two concepts, ``None`` if not within ``max_hops`` or unknown.

        Bidirectional: the layers around ``a`` up to ``ceil(H/2)`` hops meet those around ``b`` up
        to ``floor(H/2)`` (for ``H = 2``: ``a == b``, ``b`` adjacent to ``a``, or a shared neighbour)."""
        if a not in self.index or b not in self.index:
            return None
        near_a = self._cached_layers(self.index[a], (self.max_hops + 1) // 2)
        near_b = self._cached_layers(self.index[b], self.max_hops // 2)
        found = [i + j for i, la in enumerate(near_a) for j, lb in enumerate(near_b) if not la.isdisjoint(lb)]
        return min(found) if found else None

    def neighbours(self, concept: str, k: int) -> list[str]:
        """The concepts at exactly ``k`` hops (``1 <= k <= max_hops``), in graph order; ``[]`` if unknown."""
        if not 1 <= k <= self.max_hops:
            raise ValueError(f"k must be in 1..{self.max_hops}, got {k!r}")
        if concept not in self.index:
            return []
        return [self.names[n] for n in sorted(self._cached_layers(self.index[concept], k)[k])]

    def sample_neighbours(self, concept: str, k: int, limit: int) -> list[str]:
        """At most ``limit`` of :meth:`neighbours` (``N_k`` of the paper), a sample seeded by the
        concept so every run picks the same ones."""
        found = self.neighbours(concept, k)
        if len(found) <= limit:
            return found
        return random.Random(f"{concept}|{k}").sample(found, limit)


def _assertions(path: Path) -> Iterable[tuple[str, str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) < 4 or not (row[2].startswith("/c/en/") and row[3].startswith("/c/en/")):
                continue
            yield row[1].rsplit("/", 1)[-1], row[2].split("/")[3], row[3].split("/")[3]


def hop_weight(graph: KnowledgeGraph, a: str | None, b: str | None) -> float:
    """``1 / h``, ``h`` = hops clipped to ``[1, max_hops + 1]``; unknown or unreachable: ``max_hops + 1``."""
    h = graph.hops(a, b) if a is not None and b is not None else None
    return 1.0 / (graph.max_hops + 1 if h is None else max(h, 1))


def dialogue_adjacency(graph: KnowledgeGraph, context: Sequence[str | None], response: Sequence[str | None]) -> np.ndarray:
    """Weighted adjacency ``(n_c + n_r) x (n_c + n_r)`` of one pair's keyword graph: context-response
    edges only, weight :func:`hop_weight`, symmetric, zero diagonal. Entries are concepts (``None``
    for a keyword outside the graph: it still gets edges, of the unreachable weight)."""
    n_c, n = len(context), len(context) + len(response)
    adj = np.zeros((n, n), dtype=np.float32)
    for i, a in enumerate(context):
        for j, b in enumerate(response):
            adj[i, n_c + j] = adj[n_c + j, i] = hop_weight(graph, a, b)
    return adj


def normalized_adjacency(adj, mask):
    """``D^-1/2 (A + I) D^-1/2`` of a batch ``adj (B, n, n)`` (torch) with self-loops only on real
    nodes (``mask (B, n)``, 1 = node, 0 = padding); padding rows and columns stay zero."""
    import torch

    eye = torch.eye(adj.shape[-1], dtype=adj.dtype, device=adj.device)
    a = adj + eye * mask.unsqueeze(-1)
    degree = a.sum(-1)
    inv_sqrt = torch.where(degree > 0, degree.clamp(min=1e-12).rsqrt(), torch.zeros_like(degree))
    return inv_sqrt.unsqueeze(-1) * a * inv_sqrt.unsqueeze(-2)
