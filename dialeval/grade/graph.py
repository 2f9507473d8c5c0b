"""The commonsense knowledge graph behind GRADE and the dialogue graph built from it
(Huang et al. 2020, Sections 3.2-3.3).

:class:`KnowledgeGraph` is the one interface the model sees: concepts, ``neighbours(c, k)`` (the
nodes at exactly ``k`` hops, undirected), ``hops(a, b)`` (shortest-path length, ``None`` beyond
``max_hops`` or unreachable) and ``concept(word)`` (a keyword mapped onto a node
of the graph). It reads

* ConceptNet-100K (``Relation<TAB>head<TAB>tail``, multi-word concepts such as ``ice cream``), the
  offline graph (``$DIALEVAL_DATA/corpora/conceptnet100k/train.txt``, bundled with the checkpoint
  as ``conceptnet.txt``), or
* ConceptNet 5's full assertion list (``conceptnet-assertions-5.7.0.csv[.gz]``, English edges
  ``/c/en/...`` only, ``_`` -> space), when a user supplies it.

The dialogue graph of one (context, response) pair (Section 3.3, :func:`dialogue_adjacency`):
nodes = context keywords then response keywords; an edge joins every context node to every
response node (none within the context or within the response) with weight ``1 / (d + 1)``, ``d``
the ConceptNet shortest-path length (same concept: 1, neighbours: 1/2, two hops: 1/3, ...); a
keyword outside the graph, or a pair farther apart than ``max_hops`` (19) or unconnected, gets
``1 / (max_hops + 1)`` = 1/20. This is the paper's code (``nx.shortest_path_length + 1``,
``--unlimit_hop 20``). :func:`normalized_adjacency` gives the augmented normalised
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
DEFAULT_MAX_HOPS = 19  # farther (or unconnected) pairs get the weight 1/20, the paper code's --unlimit_hop 20


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
        self._cached_distances = functools.lru_cache(maxsize=1024)(self._distances)
        self._block: tuple[dict[int, int], dict[int, int], np.ndarray] | None = None
        self._csr = None

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

    def _matrix(self):
        if self._csr is None:
            from scipy.sparse import csr_matrix

            rows = np.repeat(np.arange(len(self.adjacency)), [len(a) for a in self.adjacency])
            cols = np.fromiter((n for a in self.adjacency for n in sorted(a)), dtype=np.int64, count=len(rows))
            self._csr = csr_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(len(self.names),) * 2)
        return self._csr

    def _distance_rows(self, sources: Sequence[int]) -> np.ndarray:
        """``(len(sources), n)`` shortest-path lengths (int16; -1: unreachable)."""
        from scipy.sparse.csgraph import shortest_path

        d = shortest_path(self._matrix(), method="D", directed=False, unweighted=True, indices=list(sources))
        return np.where(np.isfinite(d), d, -1).astype(np.int16)

    def _distances(self, source: int) -> np.ndarray:
        return self._distance_rows([source])[0]

    def prefetch(self, first: Iterable[str], second: Iterable[str], chunk: int = 256) -> tuple[int, int]:
        """Compute the hop distances between every concept of ``first`` and every concept of
        ``second`` at once (a search from each concept of the smaller set, kept as an int8 block);
        :meth:`hops` then reads them. Returns the block's shape."""
        a = sorted({self.index[c] for c in first if c in self.index})
        b = sorted({self.index[c] for c in second if c in self.index})
        if len(b) < len(a):
            a, b = b, a
        cols = np.array(b, dtype=np.int64)
        block = np.full((len(a), len(b)), -1, dtype=np.int8)
        for start in range(0, len(a), chunk):
            rows = self._distance_rows(a[start : start + chunk])[:, cols]
            block[start : start + chunk] = np.clip(rows, -1, 127)
        self._block = ({s: i for i, s in enumerate(a)}, {t: j for j, t in enumerate(b)}, block)
        return block.shape

    def hops(self, a: str, b: str) -> int | None:
        """Shortest hop distance between two concepts, ``None`` if unknown, unconnected or farther
        than ``max_hops``."""
        if a not in self.index or b not in self.index:
            return None
        ia, ib = self.index[a], self.index[b]
        d = None
        if self._block is not None:
            rows, cols, block = self._block
            if ia in rows and ib in cols:
                d = int(block[rows[ia], cols[ib]])
            elif ib in rows and ia in cols:
                d = int(block[rows[ib], cols[ia]])
        if d is None:
            d = int(self._cached_distances(ia)[ib])
        return d if 0 <= d <= self.max_hops else None

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
    """``1 / (d + 1)``, ``d`` the hop distance; unknown, unconnected or beyond ``max_hops``: ``1 / (max_hops + 1)``."""
    h = graph.hops(a, b) if a is not None and b is not None else None
    return 1.0 / (graph.max_hops + 1 if h is None else h + 1)


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
