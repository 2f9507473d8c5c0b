"""Holistic evaluation of open-domain dialogue (Pang et al. 2020), an evaluate module.

A thin wrapper: the implementation is ``dialeval.holistic.scorer``. One configuration per aspect:
``evaluate.load("dialeval/holistic", "coherence" | "fluency" | "diversity" | "consistency")``.
"""

import inspect

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.holistic.scorer import ASPECTS, ConsistencyScorer, LikelihoodScorer, check_compute_args, diversity
from dialeval.holistic.runner import AUTO_PRECISIONS
from dialeval.core.precision import runner_precision

_CITATION = """\
@inproceedings{pang-etal-2020-towards,
    title = "Towards Holistic and Automatic Evaluation of Open-Domain Dialogue Generation",
    author = "Pang, Bo and Nijkamp, Erik and Han, Wenjuan and Zhou, Linqi and Liu, Yixian and Tu, Kewei",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "3619--3629",
    doi = "10.18653/v1/2020.acl-main.333",
}
"""

_DESCRIPTION = """\
Four aspects of open-domain dialogue from pretrained models, without references (Pang et al. 2020):
context coherence (log-likelihood of the response given the query under a causal LM fine-tuned on
dialogue: the mean over response tokens, the paper's Eq. 1, or the sum, the authors' code), fluency
(the same for the response alone), both normalised to [0, 1] with a 5th-percentile cutoff stored with
the model; by default coherence subtracts 0.85 x the response's own mean log-likelihood (weighted PMI,
beyond the paper: the paper's coherence rewards a reply written for another dialogue; pmi_weight=0
restores it); diversity (n-gram entropy, n = 1..3, of the responses a model gave to a query and its
paraphrases); logical self-consistency (1 - mean NLI contradiction probability between a response and
the same speaker's earlier utterances).
"""

_KWARGS_DESCRIPTION = """
Args, configuration "coherence":
    queries (list of str, or list of list of str): the query (or its turns, joined by spaces).
    responses (list of str): an empty or other degenerate reply scores 0 and is flagged.
Args, configuration "fluency":
    responses (list of str).
Args, both: model (str, default "dialeval/gemma3-dailydialog", else the un-tuned local SmolLM2;
    a local path or a name under $DIALEVAL_MODELS works), cutoff ("model": the 5th percentile stored
    with the model, the default; "set": 5th percentile of the scored set, the paper; or a negative
    number), reduction ("mean": Eq. 1; "sum": the authors' code; default per aspect, see the card),
    batch_size, device (default: CUDA when available).
    Coherence only: pmi_weight (lam in [0, 1], default 0.85; 0: the paper's coherence): weighted PMI,
    log P(r | q) - lam * log P(r) (each a mean over its tokens; reduction="sum": summed), normalised
    by a logistic curve through its quartiles on the model's calibration pairs (cutoff "model"), the
    scored set's ("set") or a given pair (q25, q75); beyond the paper, see the card.
Args, configuration "diversity":
    response_groups (list of list of str): the responses to a query and its paraphrases (>= 2 each).
Args, configuration "consistency":
    histories (list of list of str): earlier turns, alternating speakers unless `speakers` is given.
    responses (list of str): the reply continuing each history (an empty reply scores 1).
    speakers (list of list of str, optional): the speaker of each history turn;
    response_speakers (list of str, optional): the speaker of each response (default: the speaker
        of the turn before the last).
    nli (str, default "roberta-large-mnli", else "dialeval/minilm-nli" offline), batch_size, device.
Args, coherence, fluency and consistency: precision (str, optional): the model's arithmetic, "float32"
    (default), "bfloat16", "int8" (the CPU's dynamic int8), "bfloat16-matmul" (float32 products in
    oneDNN's bfloat16 math) or "auto" (the fastest the device runs natively among those that passed the
    fidelity check against float32; float32 until one has); the signature names any but float32.
Unknown keywords raise a ValueError.
Returns:
    <aspect>: mean; <aspect>_scores: per item; coherence/fluency also <aspect>_raw(_scores) (mean or
    summed token log-likelihood) and fluency_cutoff; coherence also coherence_pmi(_scores), the
    weighted PMI in nats, and coherence_anchors, its quartiles (with pmi_weight=0: coherence_cutoff
    instead); diversity also entropy1..3; consistency also
    consistency_pairs (how many earlier utterances were compared); signature.
    Range and direction: coherence, fluency, consistency: 0 to 1, higher = better; coherence_raw,
    fluency_raw: log-likelihoods, 0 or less, higher = better, raw (comparable under one model and
    reduction only); diversity, entropy1..3: n-gram entropies in nats, 0 or more, higher = more
    varied wording, raw; consistency_pairs: a count (0 or more), no direction.
    dialeval.registry.describe("holistic", name) gives each one's meaning.
Examples:
    >>> coherence = evaluate.load("dialeval/holistic", "coherence")
    >>> results = coherence.compute(queries=["Do you like to read books?"], responses=["Yes, mostly science fiction."])
    >>> round(results["coherence"], 3), round(results["coherence_pmi"], 3)
    (0.993, 0.872)
    >>> paper = coherence.compute(queries=["Do you like to read books?"], responses=["Yes, mostly science fiction."],
    ...                           pmi_weight=0)
    >>> round(paper["coherence"], 3), round(paper["coherence_raw"], 3)
    (0.149, -3.627)
    >>> diversity = evaluate.load("dialeval/holistic", "diversity")
    >>> round(diversity.compute(response_groups=[["i like tea .", "i like coffee ."]])["entropy2"], 3)
    1.561
"""

_STRING = datasets.Value("string")
_STRINGS = datasets.Sequence(datasets.Value("string"))
_FEATURES = {
    "coherence": [
        datasets.Features({"queries": _STRING, "responses": _STRING}),
        datasets.Features({"queries": _STRINGS, "responses": _STRING}),
    ],
    "fluency": datasets.Features({"responses": _STRING}),
    "diversity": datasets.Features({"response_groups": _STRINGS}),
    "consistency": datasets.Features({"histories": _STRINGS, "responses": _STRING}),
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Holistic(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        if self.config_name not in ASPECTS:
            raise ValueError(
                f"choose an aspect: evaluate.load('dialeval/holistic', <aspect>) with aspect one of {ASPECTS}"
                f", not {self.config_name!r}"
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_FEATURES[self.config_name],
            homepage="https://github.com/alexzhou907/dialogue_evaluation",
            reference_urls=["https://aclanthology.org/2020.acl-main.333/"],
        )

    def compute(self, **kwargs):
        """Score the inputs of this aspect (see the arguments below); bad arguments raise a ValueError.
        """
        # Validate before evaluate stores anything: its own errors for these cases are an IndexError
        # (empty lists), a TypeError (a missing input, an unknown keyword) or a silently ignored option.
        check_compute_args(self.config_name, kwargs, self.input_names(), self.compute_options())
        # an option given as None takes its aspect's default (the scoring method's)
        return super().compute(**{name: value for name, value in kwargs.items() if value is not None})

    def compute_options(self):
        """This aspect's options: the parameters of its scoring method (``_coherence``, ...) that are no input."""
        inputs = self.input_names()
        return [name for name in inspect.signature(self._aspect_method()).parameters if name not in inputs]

    def _aspect_method(self):
        return getattr(self, f"_{self.config_name}")

    def _compute(self, responses=None, queries=None, response_groups=None, histories=None, model=None, nli=None,
                 cutoff=None, reduction=None, speakers=None, response_speakers=None, batch_size=None, device=None,
                 pmi_weight=None, precision=None):
        # every aspect's inputs and options; compute() let through only this aspect's
        given = {name: value for name, value in locals().items() if name != "self" and value is not None}
        return self._aspect_method()(**given)

    def _coherence(self, queries, responses, model=None, cutoff="model", reduction=None, batch_size=16, device=None,
                   pmi_weight=None, precision=None):
        return self._likelihood("coherence", responses, queries, model, cutoff, reduction, batch_size, device,
                                pmi_weight, precision)

    def _fluency(self, responses, model=None, cutoff="model", reduction=None, batch_size=16, device=None,
                 precision=None):
        return self._likelihood("fluency", responses, None, model, cutoff, reduction, batch_size, device,
                                precision=precision)

    def _diversity(self, response_groups):
        return diversity(response_groups)

    def _consistency(self, histories, responses, speakers=None, response_speakers=None, nli=None, batch_size=16,
                     device=None, precision=None):
        from dialeval.holistic.runner import default_nli_model

        scorer = self._scorer(ConsistencyScorer, nli or default_nli_model(), device=device, batch_size=batch_size,
                              precision=runner_precision(precision, device, AUTO_PRECISIONS))
        return scorer.score(histories, responses, speakers=speakers, response_speakers=response_speakers)

    def _likelihood(self, aspect, responses, queries, model, cutoff, reduction, batch_size, device, pmi_weight=None,
                    precision=None):
        from dialeval.holistic.runner import default_holistic_model

        scorer = self._scorer(LikelihoodScorer, model or default_holistic_model(), device=device, batch_size=batch_size,
                              precision=runner_precision(precision, device, AUTO_PRECISIONS))
        return scorer.score(aspect, responses, queries, cutoff=cutoff, reduction=reduction, pmi_weight=pmi_weight)

    def _scorer(self, kind, model, **settings):
        return kept_scorer(self, (kind.__name__, model, sorted(settings.items())), lambda: kind(model, **settings))
