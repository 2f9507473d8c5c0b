"""Holistic evaluation of open-domain dialogue (Pang et al. 2020, ACL): four aspects.

"Towards Holistic and Automatic Evaluation of Open-Domain Dialogue Generation".

* **Context coherence** of a response ``r`` to a query ``q`` under a causal LM (the paper: GPT-2
  fine-tuned on DailyDialog): ``c_raw = (1/T_r) sum_t log P(r_t | r_<t, q)``, the mean natural-log
  likelihood of the response tokens only.
* **Fluency** of ``r`` alone: ``f_raw = (1/T_r) sum_t log P(r_t | r_<t)``.
* Both are normalised to [0, 1] with a cutoff ``s5`` (the 5th percentile of the raw scores, the
  paper's choice): ``s = -(max(s5, s_raw) - s5) / s5``, so every raw score at or below ``s5`` maps
  to 0 and a perfect likelihood (``s_raw = 0``) to 1. By default ``s5`` is the percentile of the set
  being scored (numpy's linear interpolation); a fixed cutoff can be passed instead, or read from the
  checkpoint (``dialeval_holistic.json``, written by ``training/finetune_lm.py --preset dailydialog``
  from DailyDialog validation pairs) -- the way to score a handful of items.
* **Diversity** of the responses a model gave to a query and its paraphrases (one group):
  n-gram entropy ``H_n = -sum_w p(w) ln p(w)``, ``p(w)`` the relative frequency of n-gram ``w``
  among all n-grams of the group (Zhang et al. 2018), for n = 1, 2, 3, and their mean. Tokens are
  :func:`dialeval.text.tokenize`'s; n-grams do not cross responses. The paraphrases themselves come
  from :mod:`dialeval.augment` (WordNet substitution or a conditional generator).
* **Logical self-consistency**: ``1 - mean_u P(contradiction | premise=u, hypothesis=r)`` over the
  earlier utterances ``u`` of the response's speaker, from an NLI classifier (the paper:
  RoBERTa-large fine-tuned on MNLI). A history in which that speaker has not spoken yet scores 1
  (nothing to contradict) and is counted in ``consistency_pairs`` as 0.

Text given to the LM: the prefix starts with the tokenizer's EOS token (else BOS; GPT-2's
``<|endoftext|>`` is both), as every pair follows the previous pair's EOS in the fine-tuning text
``q + " " + r + eos``; then the query. The response is tokenised as ``" " + r`` after it (the
tokenisation of ``q + " " + r``, which the model was fine-tuned on) and alone as ``r`` right after
EOS for fluency. A query given as a list of turns is joined with single spaces.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from dialeval.lm import LMScorer, causal_lm_and_name
from dialeval.nli import DEFAULT_NLI, NLIScorer
from dialeval.results import make_signature, summarize
from dialeval.text import TOKENIZER_NAME, check_same_length, check_texts, tokenize

ASPECTS = ("coherence", "fluency", "diversity", "consistency")
DEFAULT_LM = "gpt2"  # the paper's base; its fine-tuned release would be dialeval/gpt2-dailydialog
PERCENTILE = 5.0
CUTOFFS_FILE = "dialeval_holistic.json"
ENTROPY_ORDERS = (1, 2, 3)


# -- normalisation ---------------------------------------------------------------------------------


def percentile_cutoff(raw: Sequence[float], percentile: float = PERCENTILE) -> float:
    """The ``percentile``-th percentile of the raw scores (numpy, linear interpolation)."""
    if len(raw) == 0:
        raise ValueError("cannot take a percentile of no scores")
    return float(np.percentile(np.asarray(raw, dtype=float), percentile))


def normalise(raw: Sequence[float], cutoff: float) -> list[float]:
    """``-(max(cutoff, s) - cutoff) / cutoff`` for each raw score ``s``: in [0, 1] when ``s <= 0``."""
    if not cutoff < 0:
        raise ValueError(f"the cutoff must be a negative log-likelihood, got {cutoff}")
    return [min(1.0, -(max(cutoff, s) - cutoff) / cutoff) for s in raw]


def read_cutoffs(model_dir: str | Path) -> dict[str, float]:
    """Cutoffs stored with a checkpoint (``{"coherence": c5, "fluency": f5, ...}``); ``{}`` if none."""
    path = Path(model_dir) / CUTOFFS_FILE
    if not path.is_file():
        return {}
    return {k: float(v) for k, v in json.loads(path.read_text(encoding="utf-8"))["cutoffs"].items()}


# -- coherence and fluency ---------------------------------------------------------------------------


def _query_text(query: Any, index: int) -> str:
    if isinstance(query, str):
        turns = [query]
    elif isinstance(query, Sequence):
        turns = list(query)
    else:
        raise ValueError(f"queries[{index}] must be a string or a list of turns, got {type(query).__name__}")
    return " ".join(check_texts(turns, f"queries[{index}]"))


class LikelihoodScorer:
    """Coherence and fluency from one causal LM (shared by both aspects, loaded once).

    ``model`` is a name/path for :func:`dialeval.lm.load_causal_lm` or a ``(model, tokenizer)`` pair.
    ``cutoff`` (of :meth:`score`): ``None`` (5th percentile of the scored set, the paper), ``"model"``
    (stored with the checkpoint), ``"auto"`` (stored if there is one, else the percentile) or a number.
    """

    def __init__(self, model: str | tuple[Any, Any] = DEFAULT_LM, device: str | None = None,
                 batch_size: int = 16, dtype: torch.dtype | None = None, max_length: int | None = None):
        lm, tokenizer, self.model_name = causal_lm_and_name(model, device, dtype)
        self.stored_cutoffs = read_cutoffs(str(lm.config.name_or_path))  # {} unless a local checkpoint has them
        self.tokenizer = tokenizer
        start = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.bos_token_id
        if start is None:
            raise ValueError("the tokenizer has neither a BOS nor an EOS token to start the text with")
        self.start = [start]
        self.scorer = LMScorer(lm, tokenizer, batch_size=batch_size, device=device, max_length=max_length, dtype=dtype)

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def coherence_raw(self, queries: Sequence[Any], responses: Sequence[str], progress: bool = False) -> list[float]:
        """``c_raw`` per pair: mean log P of the response tokens given EOS + query."""
        if isinstance(queries, str) or isinstance(responses, str):
            raise ValueError("queries and responses must be lists (one item per pair)")
        check_same_length(queries=queries, responses=responses)
        responses = check_texts(responses, "responses")
        prefixes = [self.start + self._ids(_query_text(q, i)) for i, q in enumerate(queries)]
        scores = self.scorer.pair_logprobs(prefixes, [self._ids(" " + r) for r in responses], progress)
        return [lp / n for lp, n in scores]

    def fluency_raw(self, responses: Sequence[str]) -> list[float]:
        """``f_raw`` per response: mean log P of its tokens given EOS (one shared prefix)."""
        responses = check_texts(responses, "responses")
        scores = self.scorer.continuation_logprobs(self.start, [self._ids(r) for r in responses])
        return [lp / n for lp, n in scores]

    def resolve_cutoff(self, aspect: str, raw: Sequence[float], cutoff: float | str | None) -> tuple[float, str]:
        """The cutoff to use and how it was chosen (for the signature)."""
        if cutoff == "auto":
            cutoff = "model" if aspect in self.stored_cutoffs else None
        if cutoff is None:
            return percentile_cutoff(raw), f"p{PERCENTILE:g}-of-set"
        if cutoff == "model":
            if aspect not in self.stored_cutoffs:
                raise ValueError(
                    f"{self.model_name} has no stored {aspect} cutoff ({CUTOFFS_FILE}); pass cutoff=<float> "
                    "or None (5th percentile of the scored set), or build a calibrated model with "
                    "`python training/finetune_lm.py --preset dailydialog`"
                )
            return self.stored_cutoffs[aspect], "stored"
        if isinstance(cutoff, (int, float)) and not isinstance(cutoff, bool):
            return float(cutoff), "fixed"
        raise ValueError(f"cutoff must be None, 'model', 'auto' or a number, got {cutoff!r}")

    def score(self, aspect: str, responses: Sequence[str], queries: Sequence[Any] | None = None,
              cutoff: float | str | None = None, progress: bool = False) -> dict[str, Any]:
        """``{aspect: mean, aspect_scores: [...], aspect_raw: ..., aspect_raw_scores: ..., cutoff, signature}``."""
        if aspect == "coherence":
            if queries is None:
                raise ValueError("coherence needs queries")
            raw = self.coherence_raw(queries, responses, progress)
        elif aspect == "fluency":
            raw = self.fluency_raw(responses)
        else:
            raise ValueError(f"aspect must be 'coherence' or 'fluency' here, got {aspect!r}")
        value, how = self.resolve_cutoff(aspect, raw, cutoff)
        signature = make_signature("holistic", aspect=aspect, model=self.model_name, cutoff=how)
        result = summarize({aspect: normalise(raw, value), f"{aspect}_raw": raw}, signature)
        result[f"{aspect}_cutoff"] = value
        return result


# -- diversity ---------------------------------------------------------------------------------------


def ngram_entropy(texts: Sequence[str], n: int) -> float:
    """``-sum_w p(w) ln p(w)`` over the n-grams of all ``texts`` (n-grams stay inside one text); 0 if none."""
    counts: Counter = Counter()
    for text in texts:
        tokens = tokenize(text)
        counts.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    total = sum(counts.values())
    return -sum(c / total * math.log(c / total) for c in counts.values()) if total else 0.0


def check_groups(response_groups: Any) -> list[list[str]]:
    """A non-empty list of groups, each of at least two strings (empty strings allowed: no n-grams)."""
    if isinstance(response_groups, str) or not isinstance(response_groups, Sequence) or not response_groups:
        raise ValueError("response_groups must be a non-empty list of groups (lists of responses)")
    groups = []
    for i, group in enumerate(response_groups):
        texts = check_texts(group, f"response_groups[{i}]", allow_empty=True)
        if len(texts) < 2:
            raise ValueError(
                f"response_groups[{i}] has {len(texts)} response(s): diversity compares the responses to a "
                "query and its paraphrases, so a group needs at least 2"
            )
        groups.append(texts)
    return groups


def diversity_signature() -> str:
    return make_signature("holistic", aspect="diversity", tok=TOKENIZER_NAME, log="e")


def diversity(response_groups: Sequence[Sequence[str]]) -> dict[str, Any]:
    """``entropy1..3`` per group and ``diversity`` = their mean (higher = more diverse)."""
    groups = check_groups(response_groups)
    per_item = {f"entropy{n}": [ngram_entropy(g, n) for g in groups] for n in ENTROPY_ORDERS}
    per_item["diversity"] = [float(np.mean(v)) for v in zip(*per_item.values())]
    return summarize(per_item, diversity_signature())


# -- logical self-consistency ------------------------------------------------------------------------


def same_speaker_turns(history: Sequence[str], speakers: Sequence[str] | None, response_speaker: str | None) -> list[str]:
    """The earlier utterances of the response's speaker.

    Without ``speakers`` the turns alternate and the response continues the alternation: its speaker
    said ``history[-2]``, ``history[-4]``, .... With ``speakers`` (one per turn) the response's speaker
    is ``response_speaker``, by default the speaker of ``history[-2]`` (two-party alternation).
    """
    if speakers is None:
        return list(history[len(history) % 2 :: 2]) if len(history) >= 2 else []
    if len(speakers) != len(history):
        raise ValueError(f"{len(speakers)} speakers for {len(history)} turns")
    if response_speaker is None:
        if len(history) < 2:
            return []
        response_speaker = speakers[-2]
    return [turn for turn, who in zip(history, speakers) if who == response_speaker]


class ConsistencyScorer:
    """Logical self-consistency with an NLI classifier (:class:`dialeval.nli.NLIScorer`, or any object
    with ``contradiction_probs(premises, hypotheses)`` and ``model_name``)."""

    def __init__(self, nli: Any = DEFAULT_NLI, device: str | None = None, batch_size: int = 32):
        if isinstance(nli, str):
            nli = NLIScorer(nli, device=device, batch_size=batch_size)
        self.nli = nli

    def score(self, histories: Sequence[Sequence[str]], responses: Sequence[str],
              speakers: Sequence[Sequence[str]] | None = None,
              response_speakers: Sequence[str] | None = None) -> dict[str, Any]:
        if isinstance(histories, str) or isinstance(responses, str):
            raise ValueError("histories and responses must be lists (one item per response)")
        check_same_length(histories=histories, responses=responses)
        responses = check_texts(responses, "responses")
        if speakers is not None:
            check_same_length(histories=histories, speakers=speakers)
        if response_speakers is not None:
            check_same_length(histories=histories, response_speakers=response_speakers)
        premises, hypotheses, owner = [], [], []
        for i, history in enumerate(histories):
            turns = [] if isinstance(history, (list, tuple)) and not history else check_texts(history, f"histories[{i}]")
            own = same_speaker_turns(
                turns, speakers[i] if speakers is not None else None,
                response_speakers[i] if response_speakers is not None else None,
            )
            premises += own
            hypotheses += [responses[i]] * len(own)
            owner += [i] * len(own)
        probs = self.nli.contradiction_probs(premises, hypotheses) if premises else []
        per_response: list[list[float]] = [[] for _ in responses]
        for i, p in zip(owner, probs):
            per_response[i].append(p)
        return summarize(
            {
                "consistency": [1.0 - float(np.mean(p)) if p else 1.0 for p in per_response],
                "consistency_pairs": [float(len(p)) for p in per_response],
            },
            make_signature("holistic", aspect="consistency", nli=getattr(self.nli, "model_name", "custom")),
        )
