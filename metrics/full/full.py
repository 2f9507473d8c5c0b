"""FULL (De Bruyn et al. 2022): dialogue quality from the likelihood of negative follow-ups, an evaluate module.

A thin wrapper: the implementation is ``dialeval.full.scorer``.
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.modules.inputs import check_unicode
from dialeval.full.scorer import DEFAULT_VARIANT
from dialeval.full.scorer import FULLScorer
from dialeval.full.scorer import LOOKBACK
from dialeval.full.scorer import split_conversations
from dialeval.full.runner import default_full_model
from dialeval.full.runner import AUTO_PRECISIONS
from dialeval.core.precision import runner_precision

_CITATION = """\
@inproceedings{de-bruyn-etal-2022-open,
    title = "Open-domain Dialog Evaluation using Follow-Ups Likelihood",
    author = "De Bruyn, Maxime and Lotfi, Ehsan and Buhmann, Jeska and Daelemans, Walter",
    booktitle = "Proceedings of the 29th International Conference on Computational Linguistics",
    year = "2022",
    note = "arXiv:2209.05185",
}
"""

_DESCRIPTION = """\
FULL scores a response (turn level) or a whole conversation (dialog level) without references or
training: a dialogue model plays the user, and the conversation is good when negative follow-ups
("Not really relevant here.", "You're really boring.", ...) are unlikely after it. The score is the
mean perplexity of the follow-ups given the conversation (higher = better). The paper's model is
BlenderBot-400M-distill (encoder-decoder); offline, the bundled dialogue adapter stands in.
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts (list of list of str): the turns before each response, oldest first (may be empty).
    responses (list of str): the responses to score, one per context (an empty one is flagged).
    conversations (list of list of str, instead of contexts/responses): whole conversations; the
        last turn is the response (turn level) or the conversation's end (dialog level).
    level (str): "turn" (default: the response after its context) or "dialog" (the whole
        conversation, context + [response]).
    variant (str): "paper" (default: the released rule, mean perplexity of the 4 released
        follow-ups, turns joined by a tab), "five" (the 5 intended follow-ups), "loglik" (mean
        negative log-likelihood of the 5), "dialogue" ("five" on FED's eos-separated text) or
        "dialogue-loglik" ("loglik" on that text).
    lookback (int): the number of turns read, default 50.
    model (str, optional): facebook/blenderbot-400M-distill when it can be had, else the bundled
        dialeval/smollm2-dialogue; any causal or encoder-decoder LM, a local path or Hub id.
    batch_size (int, default 32), device (str, default CUDA when available else CPU).
    precision (str, optional): the model's arithmetic, "float32" (default), "bfloat16", "int8" (the
        CPU's dynamic int8), "bfloat16-matmul" (float32 products in oneDNN's bfloat16 math) or "auto"
        (the fastest the device runs natively among those that passed the fidelity check against
        float32; float32 until one has); the signature names any but float32.
    Any other keyword is a ValueError.
Returns:
    full: mean score; full_scores: per item; signature: model (with its content hash), variant,
    number of follow-ups, rule, text, lookback, level and dialeval version; flags: per item, empty /
    no_words / repetitive / echo / salad (a last turn that copies an earlier turn or shuffles the
    context's words) for a response scored 0 by the degenerate-response policy. Range and direction:
    raw, 0 or more (a mean perplexity is 1 or more), higher = better, comparable only under one
    model and variant; dialeval.registry.describe("full", "full") gives its meaning.
Examples:
    >>> full = evaluate.load("dialeval/full")
    >>> results = full.compute(contexts=[["Do you like reading books?"]], responses=["Yes, mostly novels."],
    ...                        model="dialeval/smollm2-dialogue")
    >>> round(results["full"], 1), results["flags"]
    (56.8, [[]])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Full(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"contexts": datasets.Sequence(datasets.Value("string")), "responses": datasets.Value("string")}
            ),
            homepage="https://github.com/maximedb/full",
            reference_urls=["https://arxiv.org/abs/2209.05185"],
        )

    def compute(self, *, conversations=None, **kwargs):
        """As evaluate's ``compute``; ``conversations`` is split into contexts and responses first."""
        if conversations is not None:
            if "contexts" in kwargs or "responses" in kwargs:
                raise ValueError("give conversations or contexts and responses, not both")
            kwargs["contexts"], kwargs["responses"] = split_conversations(conversations)
            check_unicode("conversations", conversations)  # named as given, not as the split inputs
        return super().compute(**kwargs)

    def _compute(self, contexts, responses, level="turn", variant=DEFAULT_VARIANT, lookback=LOOKBACK, model=None,
                 batch_size=32, device=None, precision=None):
        model = model or default_full_model()
        precision = runner_precision(precision, device, AUTO_PRECISIONS)
        scorer = kept_scorer(self, (model, batch_size, device, lookback, precision),
                             lambda: FULLScorer(model, device=device, batch_size=batch_size, lookback=lookback,
                                                precision=precision))
        return scorer.score(contexts, responses, level=level, variant=variant)
