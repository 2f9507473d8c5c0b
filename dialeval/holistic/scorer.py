"""Holistic evaluation of open-domain dialogue (Pang et al. 2020, ACL): four aspects.

"Towards Holistic and Automatic Evaluation of Open-Domain Dialogue Generation".

* **Context coherence** (Pang et al.'s, ``pmi_weight=0``) of a response ``r`` to a query ``q`` under
  a causal LM (the paper: GPT-2 fine-tuned on DailyDialog). Two reductions of the response tokens'
  natural-log likelihoods ``l_t = log P(r_t | r_<t, q)`` are offered (``reduction=``): ``"mean"``,
  the paper's Eq. 1, ``c_raw = (1/T_r) sum_t l_t``, and ``"sum"``, ``c_raw = sum_t l_t`` with no
  ``1/T_r``, what the authors' released code computes.
  :data:`~dialeval.holistic.normalisation.DEFAULT_REDUCTION` holds the measured choice.
* **Fluency** of ``r`` alone: ``f_raw = sum_t log P(r_t | r_<t)`` by default (``"sum"``; the mean,
  ``(1/T_r) sum_t ...``, is the paper's formula and correlates far less with the ratings here).
* Both are normalised to [0, 1] with a cutoff ``s5``: ``s = -(max(s5, s_raw) - s5) / s5``, so a raw
  score at or below ``s5`` maps to 0 and a perfect likelihood (``s_raw = 0``) to 1. The paper takes
  ``s5`` as the 5th percentile of the raw scores. The default (``cutoff="model"``) is the 5th
  percentile stored with the model (``dialeval_holistic.json``, written by ``training/finetune_lm.py
  --preset dailydialog`` from 1,000 DailyDialog validation pairs; for a model without the file,
  e.g. the un-tuned local LM built from a GGUF, ``dialeval/holistic/cutoffs.json`` written by
  :mod:`dialeval.holistic.calibration`), so an item's score never depends on the other items scored with it.
  ``cutoff="set"`` takes the percentile of the scored set (numpy's linear interpolation; the lowest
  item then always scores 0), a number fixes it.
* **Weighted PMI coherence**, dialeval's default coherence (beyond the paper; issue 32): coherence
  subtracts part of what the reply's likelihood owes to the reply itself,
  ``p_raw = c_raw - lam * f_raw`` with ``lam = pmi_weight``
  (:data:`~dialeval.holistic.normalisation.DEFAULT_PMI_WEIGHT`, 0.85, unless given), both terms a mean over their own tokens (the reply after the query, the reply alone) unless
  ``reduction="sum"`` sums both; ``lam = 1`` is pointwise mutual information, ``pmi_weight=0`` Pang
  et al.'s coherence above. The likelihood of a reply given the query rewards replies that are
  likely anyway (short, generic, another dialogue's): the paper's coherence put the real reply above
  another dialogue's in 73 % of DailyDialog test contexts, ``lam = 0.85`` in 95 %
  (``benchmarks/results/behaviour-pmi-mean.md``, where the weight was chosen on validation contexts).
  ``p_raw`` has no best value, so it is
  normalised by a logistic curve through its quartiles ``q25``, ``q75`` over the model's 1,000
  DailyDialog validation calibration pairs (:mod:`dialeval.holistic.calibration`;
  ``cutoff="set"``: the scored set's): ``coherence = 1 / (1 + exp(-k (p_raw - m)))``, ``m = (q25 +
  q75) / 2``, ``k = 2 ln 3 / (q75 - q25)``, so ``q25`` maps to 0.25 and ``q75`` to 0.75, and the
  ranking is that of ``p_raw`` (no clipping).
* A degenerate response (:mod:`dialeval.core.degenerate`: ``empty``, including invisible
  characters only; ``no_words``, punctuation, emoji or markup only; ``repetitive``) is not run
  through the model: it gets coherence and fluency 0 (the worst), the raw log-probabilities their
  floor (:data:`dialeval.holistic.scales.LOGPROB_FLOOR`), and its flag. Scored as EOS an empty reply
  got 0.49 coherence against 0.20 for "Yes.", and a sentence said 50 times 0.98. A ``set`` cutoff
  is the percentile of the responses that are not flagged.
* **Diversity** of the responses a model gave to a query and its paraphrases (one group):
  n-gram entropy ``H_n = -sum_w p(w) ln p(w)``, ``p(w)`` the relative frequency of n-gram ``w``
  among all n-grams of the group's non-degenerate responses (Zhang et al. 2018), for n = 1, 2, 3,
  and their mean; a degenerate response adds nothing and scores 0. Tokens are
  :func:`dialeval.core.text.tokenize`'s; n-grams do not cross responses. The paraphrases themselves come
  from :mod:`dialeval.holistic.augment` (WordNet substitution or a conditional generator).
* **Logical self-consistency**: ``1 - mean_u P(contradiction | premise=u, hypothesis=r)`` over the
  earlier utterances ``u`` of the response's speaker, from an NLI classifier (the paper:
  RoBERTa-large fine-tuned on MNLI). A history in which that speaker has not spoken yet scores 1
  (nothing to contradict) and is counted in ``consistency_pairs`` as 0. A degenerate response is
  not run through the NLI model and gets 0 (the worst; scoring it 1 for asserting nothing rewarded
  saying nothing) and its flag.

Text given to the LM: the prefix starts with the tokenizer's EOS token (else BOS; GPT-2's
``<|endoftext|>`` is both), as every pair follows the previous pair's EOS in the fine-tuning text
``q + " " + r + eos``; then the query. The response is tokenised as ``" " + r`` after it (the
tokenisation of ``q + " " + r``, which the model was fine-tuned on) and alone as ``r`` right after
EOS for fluency. A query given as a list of turns is joined with single spaces. The reply-alone
log-likelihood (fluency, and weighted PMI's second term) runs once per distinct reply of a call; calls
that share an ``alone`` dict (the runner's coherence and fluency of the same items) share it too.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from dialeval.core.lm import LMScorer, causal_lm_and_name
from dialeval.core.nli import DEFAULT_NLI, NLIScorer
from dialeval.core.degenerate import apply_policy, reply_flags, response_flags, scored_indices
from dialeval.core.results import make_signature, summarize
from dialeval.core.precision import signature_precision
from dialeval.core.text import TOKENIZER_NAME, check_same_length, check_texts, tokenize
from dialeval.models.hub import tensor_hash
from dialeval.holistic.defaults import DEFAULT_LM
from dialeval.holistic.normalisation import (
    CALIBRATION_LOGPROBS_FILE, CUTOFFS_FILE, DEFAULT_REDUCTION, PERCENTILE, check_pmi_weight,
    check_reduction, cutoff_key, logistic, normalise, percentile_cutoff, pmi_anchors, pmi_raw, quartiles,
    reduce_logprobs, stored_cutoffs, stored_logprobs,
)
from dialeval.holistic.scales import SCALES

ASPECTS = ("coherence", "fluency", "diversity", "consistency")
ENTROPY_ORDERS = (1, 2, 3)


# -- coherence and fluency ---------------------------------------------------------------------------


def _query_turns(query: Any, index: int) -> list[str]:
    if isinstance(query, str):
        turns = [query]
    elif isinstance(query, Sequence):
        turns = list(query)
    else:
        raise ValueError(f"queries[{index}] must be a string or a list of turns, got {type(query).__name__}")
    return check_texts(turns, f"queries[{index}]")


def _query_text(query: Any, index: int) -> str:
    return " ".join(_query_turns(query, index))


def likelihood_flags(aspect: str, responses: Sequence[str], queries: Sequence[Any] | None) -> list[list[str]]:
    """Per response, its :mod:`dialeval.core.degenerate` flags for ``aspect``: coherence judges a
    reply against its query, so a reply that copies a query turn (``echo``) or shuffles its words
    (``salad``) is flagged; fluency judges the reply alone (an echo of a fluent turn is fluent)."""
    if aspect == "coherence" and queries is not None:
        return [reply_flags(_query_turns(q, i), r) for i, (q, r) in enumerate(zip(queries, responses))]
    return [response_flags(r) for r in responses]


class LikelihoodScorer:
    """Coherence and fluency from one causal LM (shared by both aspects, loaded once).

    ``model`` is a name/path for :func:`dialeval.core.lm.load_causal_lm` or a ``(model, tokenizer)`` pair;
    ``device=None`` is CUDA when torch sees a GPU, else the CPU; ``precision``: the LM's forward
    (:mod:`dialeval.core.precision`, named in the signature unless float32).
    ``cutoff`` (of :meth:`score`): ``"model"`` (stored with the model, the default), ``"set"`` (5th
    percentile of the scored set, the paper) or a number; for weighted PMI coherence (the default
    coherence) ``"model"`` (the stored calibration's quartiles), ``"set"`` or a pair ``(q25, q75)``.
    """

    def __init__(self, model: str | tuple[Any, Any] = DEFAULT_LM, device: str | None = None,
                 batch_size: int = 16, dtype: torch.dtype | None = None, max_length: int | None = None,
                 precision: str = "float32"):
        from dialeval.core.options import check_device, check_number, default_device

        device = check_device(device) or default_device()
        check_number("batch_size", batch_size, minimum=1, integer=True)
        lm, tokenizer, self.model_name = causal_lm_and_name(model, device, dtype)
        given = model if isinstance(model, (str, Path)) else self.model_name.split("@")[0]
        tensors = functools.cache(lambda: tensor_hash(lm))  # only for a table entry with other files' hash
        config_path = str(getattr(lm.config, "name_or_path", "") or "")
        self.stored_cutoffs = stored_cutoffs(str(given), config_path, self.model_name, tensors)
        self.calibration = stored_logprobs(str(given), self.model_name, tensors, config_path)
        self.tokenizer = tokenizer
        start = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.bos_token_id
        if start is None:
            raise ValueError("the tokenizer has neither a BOS nor an EOS token to start the text with")
        self.start = [start]
        self.scorer = LMScorer(lm, tokenizer, batch_size=batch_size, device=device, max_length=max_length, dtype=dtype,
                               precision=precision)

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def _response_ids(self, response: str, lead: str) -> list[int]:
        """``lead + response`` tokenised; an empty or whitespace-only response is the EOS token alone."""
        return self._ids(lead + response) if response.strip() else list(self.start)

    def logprobs(self, aspect: str, responses: Sequence[str], queries: Sequence[Any] | None = None,
                 progress: bool = True, alone: dict | None = None) -> list[tuple[float, int]]:
        """``(sum_t log P(r_t | ...), T_r)`` per response: given EOS + query (coherence, which needs
        ``queries``) or EOS alone (fluency, one shared prefix; see :meth:`alone_logprobs` for ``alone``)."""
        if isinstance(responses, str) or isinstance(queries, str):
            raise ValueError("queries and responses must be lists (one item per pair)")
        responses = check_texts(responses, "responses", allow_empty=True)
        if aspect == "coherence":
            if queries is None:
                raise ValueError("coherence needs queries (one query, or list of turns, per response)")
            check_same_length(queries=queries, responses=responses)
            prefixes = [self.start + self._ids(_query_text(q, i)) for i, q in enumerate(queries)]
            return self.scorer.pair_logprobs(prefixes, [self._response_ids(r, " ") for r in responses], progress)
        if aspect == "fluency":
            return self.alone_logprobs([self._response_ids(r, "") for r in responses], alone)
        raise ValueError(f"aspect must be 'coherence' or 'fluency' here, got {aspect!r}")

    def alone_logprobs(self, sequences: Sequence[Sequence[int]], alone: dict | None = None) -> list[tuple[float, int]]:
        """``(log P(r | EOS), T_r)`` per token sequence ``r``, each distinct sequence run once (one
        shared prefix). ``alone``, a dict the caller keeps, holds the results by token ids: a sequence
        found there is not run again, and the new ones are added."""
        alone = {} if alone is None else alone
        missing = list(dict.fromkeys(key for key in map(tuple, sequences) if key not in alone))
        if missing:
            alone.update(zip(missing, self.scorer.continuation_logprobs(self.start, [list(k) for k in missing])))
        return [alone[tuple(sequence)] for sequence in sequences]

    def raw(self, aspect: str, responses: Sequence[str], queries: Sequence[Any] | None = None,
            reduction: str | None = None, progress: bool = True, alone: dict | None = None) -> list[float]:
        """The raw scores of ``aspect``: mean (or sum) of the response tokens' log-probabilities."""
        if aspect not in DEFAULT_REDUCTION:
            raise ValueError(f"aspect must be 'coherence' or 'fluency' here, got {aspect!r}")
        reduction = check_reduction(aspect, reduction)
        return reduce_logprobs(self.logprobs(aspect, responses, queries, progress, alone), reduction)

    def coherence_raw(self, queries: Sequence[Any], responses: Sequence[str], progress: bool = True,
                      reduction: str | None = None) -> list[float]:
        """``c_raw`` per pair: mean (or sum) log P of the response tokens given EOS + query."""
        return self.raw("coherence", responses, queries, reduction, progress)

    def fluency_raw(self, responses: Sequence[str], reduction: str | None = None) -> list[float]:
        """``f_raw`` per response: mean (or sum) log P of its tokens given EOS."""
        return self.raw("fluency", responses, None, reduction)

    def resolve_cutoff(self, aspect: str, raw: Sequence[float], cutoff: float | str,
                       reduction: str = "mean") -> tuple[float, str]:
        """The cutoff to use and how it was chosen (for the signature)."""
        if cutoff == "set":
            return percentile_cutoff(raw), f"p{PERCENTILE:g}-of-set"
        if cutoff == "model":
            key = cutoff_key(aspect, reduction)
            if key not in self.stored_cutoffs:
                have = sorted(self.stored_cutoffs) or "none"
                raise ValueError(
                    f"{self.model_name} has no stored {key!r} cutoff ({CUTOFFS_FILE}; stored: {have}); pass "
                    "cutoff=<negative number> or cutoff='set' (5th percentile of the scored set), or use a "
                    f"calibrated model such as {DEFAULT_LM!r}"
                )
            return self.stored_cutoffs[key], "stored"
        if isinstance(cutoff, (int, float)) and not isinstance(cutoff, bool) and cutoff < 0:
            return float(cutoff), f"{float(cutoff):g}"
        raise ValueError(f"cutoff must be 'model', 'set' or a negative number, got {cutoff!r}")

    def pmi_values(self, queries: Sequence[Any], responses: Sequence[str], weight: float, reduction: str,
                   progress: bool = True, alone: dict | None = None) -> tuple[list[float], list[float]]:
        """``(c_raw, p_raw)`` per response: coherence's raw score and weighted PMI (:func:`pmi_raw`)."""
        coherence = self.logprobs("coherence", responses, queries, progress)
        fluency = self.logprobs("fluency", responses, alone=alone)
        return reduce_logprobs(coherence, reduction), pmi_raw(coherence, fluency, weight, reduction)

    def resolve_anchors(self, raw: Sequence[float], cutoff: Any, weight: float, reduction: str) -> tuple[tuple[float, float], str]:
        """Weighted PMI's quartiles: the stored calibration pairs' (``cutoff="model"``), the scored
        set's (``"set"``) or a given ``(q25, q75)`` pair; and how they were chosen (the signature)."""
        if cutoff == "set":
            return quartiles(raw), "q25-q75-of-set"
        if cutoff == "model":
            if self.calibration is None:
                raise ValueError(
                    f"{self.model_name} has no stored calibration log-probabilities for weighted PMI coherence "
                    f"(pmi_weight={weight:g}; its folder's {CUTOFFS_FILE} or {CALIBRATION_LOGPROBS_FILE.name}): "
                    "run python -m dialeval.holistic.calibration --model <folder> --logprobs --write-folder (your "
                    "own model folder; training/finetune_lm.py --preset dailydialog writes it), or pass "
                    "cutoff='set' (the quartiles of the scored set) or pmi_weight=0 (Pang et al.'s coherence)")
            return pmi_anchors(self.calibration["coherence"], self.calibration["fluency"], weight, reduction), "stored-q25-q75"
        if (isinstance(cutoff, (tuple, list)) and len(cutoff) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in cutoff) and cutoff[1] > cutoff[0]):
            return (float(cutoff[0]), float(cutoff[1])), f"{cutoff[0]:g}..{cutoff[1]:g}"
        raise ValueError(f"weighted PMI coherence (pmi_weight={weight:g}) takes cutoff 'model', 'set' or a pair "
                         f"(q25, q75) with q25 < q75, got {cutoff!r}; a negative number is a cutoff of Pang et al.'s "
                         "coherence: pass pmi_weight=0 with it")

    def _unflagged(self, aspect: str, responses: Sequence[str], queries: Sequence[Any] | None, n_columns: int,
                   compute: Callable[..., Sequence[Sequence[float]]]) -> tuple[list[list[str]], list[int], list[list[float]]]:
        """The responses' flags for ``aspect``, the indices of those not flagged, and the ``n_columns``
        lists ``compute(queries, responses)`` returns for those alone (a flagged response is not run
        through the model), NaN at every flagged index."""
        flags = likelihood_flags(aspect, responses, queries)
        scored = scored_indices(flags)
        columns = [[math.nan] * len(responses) for _ in range(n_columns)]
        if scored:
            picked = compute(None if queries is None else [queries[i] for i in scored], [responses[i] for i in scored])
            for column, values in zip(columns, picked):
                for i, value in zip(scored, values):
                    column[i] = value
        return flags, scored, columns

    def score(self, aspect: str, responses: Sequence[str], queries: Sequence[Any] | None = None,
              cutoff: Any = "model", progress: bool = True, reduction: str | None = None,
              cutoff_label: str | None = None, pmi_weight: float | None = None,
              alone: dict | None = None) -> dict[str, Any]:
        """``{aspect: mean, aspect_scores: [...], aspect_raw: ..., aspect_raw_scores: ..., aspect_cutoff, signature}``.

        ``cutoff_label`` names a numeric cutoff's origin in the signature (``"p5-of-input"`` when the
        CLI passes the percentile of a whole file); by default the signature shows the number.
        ``pmi_weight``: weighted PMI coherence (:meth:`score_pmi`). ``alone``: the reply-alone results
        shared with other calls on the same replies (:meth:`alone_logprobs`)."""
        if aspect not in DEFAULT_REDUCTION:
            raise ValueError(f"aspect must be 'coherence' or 'fluency' here, got {aspect!r}")
        weight = check_pmi_weight(aspect, pmi_weight)
        if weight is not None:
            return self.score_pmi(responses, queries, weight, cutoff, progress, reduction, cutoff_label, alone)
        reduction = check_reduction(aspect, reduction)
        if aspect == "coherence" and queries is None:
            raise ValueError("coherence needs queries (one query, or list of turns, per response)")
        if cutoff != "set":  # a wrong cutoff fails before the model runs
            self.resolve_cutoff(aspect, [], cutoff, reduction)
        responses = check_texts(responses, "responses", allow_empty=True)
        flags, scored, (raw,) = self._unflagged(aspect, responses, queries, 1,
                                                lambda q, r: (self.raw(aspect, r, q, reduction, progress, alone),))
        if scored or cutoff != "set":  # a set's percentile is taken over its real responses
            value, how = self.resolve_cutoff(aspect, [raw[i] for i in scored], cutoff, reduction)
            normalised = normalise(raw, value)
        else:  # every response flagged: no percentile, every score is the worst anyway
            value, how, normalised = math.nan, f"p{PERCENTILE:g}-of-set", raw
        signature = make_signature("holistic", aspect=aspect, model=self.model_name, reduction=reduction,
                                   cutoff=cutoff_label or how, precision=signature_precision(self.scorer.precision))
        per_item = apply_policy({aspect: normalised, f"{aspect}_raw": raw}, flags, SCALES)
        return {**summarize(per_item, signature, flags, SCALES), f"{aspect}_cutoff": value}

    def score_pmi(self, responses: Sequence[str], queries: Sequence[Any] | None, weight: float, cutoff: Any = "model",
                  progress: bool = True, reduction: str | None = None, cutoff_label: str | None = None,
                  alone: dict | None = None) -> dict[str, Any]:
        """Weighted PMI coherence (module docstring): ``coherence`` (the logistic of ``coherence_pmi``),
        ``coherence_raw``, ``coherence_pmi``, per item and mean, ``coherence_anchors`` ``(q25, q75)``,
        ``flags`` and the signature; ``reduction`` defaults to coherence's (the mean, each term over its own
        tokens)."""
        reduction = check_reduction("coherence", reduction)
        if queries is None:
            raise ValueError("coherence needs queries (one query, or list of turns, per response)")
        if cutoff != "set":  # a missing calibration or a bad cutoff fails before the model runs
            anchors, how = self.resolve_anchors([], cutoff, weight, reduction)
        responses = check_texts(responses, "responses", allow_empty=True)
        check_same_length(queries=queries, responses=responses)
        flags, scored, (raw, pmi) = self._unflagged(
            "coherence", responses, queries, 2, lambda q, r: self.pmi_values(q, r, weight, reduction, progress, alone))
        if cutoff == "set":
            anchors, how = ((math.nan, math.nan), "q25-q75-of-set") if not scored else \
                self.resolve_anchors([pmi[i] for i in scored], cutoff, weight, reduction)
        signature = make_signature("holistic", aspect="coherence", model=self.model_name, reduction=reduction,
                                   pmi=f"{weight:g}", cutoff=cutoff_label or how,
                                   precision=signature_precision(self.scorer.precision))
        normalised = logistic(pmi, anchors) if scored else pmi
        per_item = apply_policy({"coherence": normalised, "coherence_raw": raw, "coherence_pmi": pmi}, flags, SCALES)
        return {**summarize(per_item, signature, flags, SCALES), "coherence_anchors": list(anchors)}


# -- the evaluate module's arguments ----------------------------------------------------------------


def check_compute_args(aspect: str, given: dict[str, Any], inputs: Sequence[str], options: Sequence[str]) -> None:
    """Validate ``compute()``'s keywords for ``aspect`` (its list ``inputs``, one entry per item, and
    its ``options``) before evaluate stores anything: unknown names (``model=`` for consistency, whose
    classifier is ``nli=``), missing or empty input lists, mismatched lengths and a device torch does
    not have raise a ``ValueError`` naming the cause."""
    from dialeval.core.options import check_device, check_known

    if aspect == "consistency" and "model" in given:
        raise ValueError("consistency takes its NLI classifier as nli='...' (e.g. nli='dialeval/minilm-nli'), "
                         "not model=")
    check_known(f"holistic {aspect}", {k for k, v in given.items() if v is not None},
                (*inputs, *options, "predictions", "references"))
    for name in ("predictions", "references"):
        if given.get(name) is not None:
            raise ValueError(f"holistic {aspect} takes {' and '.join(inputs)}, not {name}=")
    for name in inputs:
        value = given.get(name)
        if value is None:
            raise ValueError(f"holistic {aspect} needs {name}=[...] (one entry per item)")
        if isinstance(value, str) or not isinstance(value, Sequence) or len(value) == 0:
            raise ValueError(f"{name} must be a non-empty list (one entry per item), got {value!r:.80}")
    check_same_length(**{name: given[name] for name in inputs})
    if "responses" in given:
        check_texts(given["responses"], "responses", allow_empty=True)
    check_device(given.get("device"))


# -- diversity ---------------------------------------------------------------------------------------


def ngram_entropy(texts: Sequence[str], n: int) -> float:
    """``-sum_w p(w) ln p(w)`` over the n-grams of all ``texts`` (n-grams stay inside one text); 0 if none."""
    counts: Counter = Counter()
    for text in texts:
        tokens = tokenize(text)
        counts.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    total = sum(counts.values())
    return 0.0 - sum(c / total * math.log(c / total) for c in counts.values()) if total else 0.0  # 0.0 - 0.0, not -0.0


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
    """``entropy1..3`` per group and ``diversity`` = their mean (higher = more diverse), over the
    group's responses that are not degenerate (:mod:`dialeval.core.degenerate`: an empty, word-less
    or repetitive response adds no n-gram); a group with no other response is flagged with its
    members' flags and gets 0, where a group of punctuation replies used to outscore word salad."""
    groups = check_groups(response_groups)
    member_flags = [[response_flags(text) for text in group] for group in groups]
    kept = [[text for text, f in zip(group, fl) if not f] for group, fl in zip(groups, member_flags)]
    flags = [[] if texts else sorted({flag for f in fl for flag in f}) for texts, fl in zip(kept, member_flags)]
    per_item = {f"entropy{n}": [ngram_entropy(texts, n) for texts in kept] for n in ENTROPY_ORDERS}
    per_item["diversity"] = [float(np.mean(v)) for v in zip(*per_item.values())]
    return summarize(apply_policy(per_item, flags, SCALES), diversity_signature(), flags, SCALES)


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
    """Logical self-consistency with an NLI classifier (:class:`dialeval.core.nli.NLIScorer`, or any object
    with ``contradiction_probs(premises, hypotheses)`` and ``model_name``)."""

    def __init__(self, nli: Any = DEFAULT_NLI, device: str | None = None, batch_size: int = 32,
                 precision: str = "float32"):
        if isinstance(nli, str):
            nli = NLIScorer(nli, device=device, batch_size=batch_size, precision=precision)
        self.nli = nli

    def score(self, histories: Sequence[Sequence[str]], responses: Sequence[str],
              speakers: Sequence[Sequence[str]] | None = None,
              response_speakers: Sequence[str] | None = None) -> dict[str, Any]:
        if isinstance(histories, str) or isinstance(responses, str):
            raise ValueError("histories and responses must be lists (one item per response)")
        check_same_length(histories=histories, responses=responses)
        responses = check_texts(responses, "responses", allow_empty=True)
        if speakers is not None:
            check_same_length(histories=histories, speakers=speakers)
        if response_speakers is not None:
            check_same_length(histories=histories, response_speakers=response_speakers)
        flags = [response_flags(r) for r in responses]
        premises, hypotheses, owner = [], [], []
        for i, history in enumerate(histories):
            turns = [] if isinstance(history, (list, tuple)) and not history else check_texts(history, f"histories[{i}]")
            own = same_speaker_turns(
                turns, speakers[i] if speakers is not None else None,
                response_speakers[i] if response_speakers is not None else None,
            ) if not flags[i] else []  # a flagged response is not run through the NLI model
            premises += own
            hypotheses += [responses[i]] * len(own)
            owner += [i] * len(own)
        probs = self.nli.contradiction_probs(premises, hypotheses) if premises else []
        per_response: list[list[float]] = [[] for _ in responses]
        for i, p in zip(owner, probs):
            per_response[i].append(p)
        per_item = {
            "consistency": [1.0 - float(np.mean(p)) if p else 1.0 for p in per_response],
            "consistency_pairs": [float(len(p)) for p in per_response],
        }
        return summarize(apply_policy(per_item, flags, SCALES),
                         make_signature("holistic", aspect="consistency", nli=getattr(self.nli, "model_name", "custom"),
                                        precision=signature_precision(getattr(self.nli, "precision", "float32"))),
                         flags, SCALES)
