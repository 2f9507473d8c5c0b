"""USL-H (Phy, Zhao & Aizawa 2020, COLING) of responses given their contexts.

For a context ``c`` and response ``r``:

* ``U = P(valid | r)``: a head over the frozen encoder's features of ``r`` alone
  (:mod:`dialeval.usl.features`, :mod:`dialeval.usl.heads`), or over U's own LoRA-tuned top layers
  where the folder has them (``u_top``, :mod:`dialeval.usl.tuned`), trained to tell DailyDialog
  responses from their syntactic corruptions (:mod:`dialeval.usl.perturb`);
* ``S = P(next | c, r)``: a head over ``[c; r; c*r; |c-r|]`` of the features of ``c`` and ``r`` encoded
  apart (``s_input="dual"``; ``"pair"``: of ``c`` and ``r`` read together, as the paper's fine-tuned BERT),
  trained to tell the true next turn from a random response of the corpus;
* ``L``: the response's NLL under a causal LM fine-tuned on DailyDialog (:mod:`dialeval.usl.likelihood`;
  the paper: a BERT masked LM), clipped to the stored quartiles and scaled to ``[0, 1]``;
* ``usl``: the hierarchical combination (:func:`dialeval.usl.formula.usl_h`), ``"H"`` by default.

Degenerate responses (:mod:`dialeval.core.degenerate`: ``empty``, ``no_words``, ``repetitive``, and
``echo`` / ``salad`` of the context, since S reads it) are not encoded and get the worst value of
every sub-score (0).
"""

from __future__ import annotations

import os
from typing import Any

from dialeval.core.degenerate import apply_policy, reply_flags, scored_indices
from dialeval.core.held import held
from dialeval.core.options import check_choice, check_device
from dialeval.core.precision import signature_precision
from dialeval.core.results import make_signature, summarize
from dialeval.core.text import check_contexts, check_texts
from dialeval.usl.formula import DEFAULT_HIERARCHY, HIERARCHIES, normalise_nll, usl_h
from dialeval.usl.heads import DEFAULT_MODEL, load_folder, resolve_folder, s_input, valid_probability
from dialeval.usl.scales import SCALES


class USLScorer:
    """A trained USL-H: ``model`` a folder or ``dialeval/<name>`` (default the bundled
    ``usl-dailydialog``); ``lm`` L's LM (default: the one the folder's quartiles were measured with);
    ``precision`` the encoder's forward (:mod:`dialeval.core.precision`; the LM stays float32)."""

    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, device: str | None = None,
                 precision: str = "float32", lm: Any = None):
        from dialeval.models.hub import weights_id
        from dialeval.usl.features import FrozenEncoder
        from dialeval.usl.likelihood import ResponseNLL

        self.folder = resolve_folder(model)
        self.heads, self.config = load_folder(self.folder)
        self.model_name = weights_id(str(model) if str(model).startswith("dialeval/") else self.folder.name, self.folder)
        device = check_device(device)
        self.encoder = FrozenEncoder(self.config["encoder"], device, precision=precision)
        if self.encoder.dim != int(self.config["dim"]):
            raise ValueError(f"{self.folder}: heads read {self.config['dim']}-d features but the encoder "
                             f"{self.config['encoder']!r} gives {self.encoder.dim}")
        self.likelihood = ResponseNLL(lm or self.config["lm"], device)
        self.quartiles = tuple(self.config["nll_quartiles"])
        self.u_top = int(self.config.get("u_top", 0))  # U's own tuned top layers (dialeval.usl.tuned), if any
        if self.u_top:
            from dialeval.usl.tuned import load_tuned_top

            # in float32 whatever the encoder's precision: peft's LoRA merges into float32 Linear layers
            self.tuned = (load_tuned_top(self.encoder.float32_model(), self.folder, self.u_top), self.u_top)

    def parts(self, contexts: list[list[str]], responses: list[str]) -> dict[str, list[float]]:
        """``usl_u``, ``usl_s``, ``usl_l`` (and the raw ``nll``) of every item, none flagged here."""
        from dialeval.usl.features import dual

        if self.u_top:
            single, tuned = self.encoder.single(responses, tuned=self.tuned)
        else:
            single = tuned = self.encoder.single(responses)
        u = valid_probability(self.heads["u"], tuned)
        if s_input(self.config) == "dual":
            s = valid_probability(self.heads["s"], dual(self.encoder.contexts(contexts), single))
        else:
            s = valid_probability(self.heads["s"], self.encoder.pairs(contexts, responses))
        nll = self.likelihood.nll(responses)
        return {"usl_u": u, "usl_s": s, "usl_l": [normalise_nll(v, *self.quartiles) for v in nll]}

    def score(self, contexts: Any, responses: Any, hierarchy: str = DEFAULT_HIERARCHY) -> dict[str, Any]:
        """``usl`` (USL-H) and ``usl_u``, ``usl_s``, ``usl_l`` per item and their means, per-item
        ``flags`` and the signature (module docstring)."""
        check_choice("hierarchy", hierarchy, HIERARCHIES)
        contexts, responses = check_inputs(contexts, responses)
        flags = [reply_flags(c, r) for c, r in zip(contexts, responses)]
        kept = scored_indices(flags)
        per_item = {name: [0.0] * len(responses) for name in SCALES}
        if kept:
            found = self.parts([contexts[i] for i in kept], [responses[i] for i in kept])
            for name, values in found.items():
                for i, v in zip(kept, values):
                    per_item[name][i] = v
            for i in kept:
                per_item["usl"][i] = usl_h(per_item["usl_u"][i], per_item["usl_s"][i], per_item["usl_l"][i], hierarchy)
        per_item = apply_policy(per_item, flags, SCALES)
        return summarize(per_item, self.signature(hierarchy), flags, SCALES)

    def signature(self, hierarchy: str) -> str:
        return make_signature("usl", model=self.model_name, enc=self.encoder.name, lm=self.likelihood.model_name,
                              hierarchy=hierarchy, precision=signature_precision(self.encoder.precision))


def check_inputs(contexts: Any, responses: Any) -> tuple[list[list[str]], list[str]]:
    """Validated ``(contexts, responses)``: one list of turns (or one string) per response
    (:func:`dialeval.core.text.check_contexts`); an empty response is allowed (flagged, scored the worst).
    ``ValueError`` naming the bad input and item."""
    responses = check_texts(responses, "responses", allow_empty=True)
    return check_contexts(contexts, len(responses)), responses


@held(maxsize=2)
def cached_scorer(model: str, device: str | None, precision: str) -> USLScorer:
    return USLScorer(model, device, precision)
