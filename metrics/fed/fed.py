"""FED (Mehri & Eskenazi 2020): 18 fine-grained dialogue qualities from follow-up likelihoods.

A thin evaluate wrapper: the implementation is ``dialeval.fed.scorer``.
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.fed.scorer import DEFAULT_MODE
from dialeval.fed.scorer import FEDScorer
from dialeval.fed.runner import default_dialogue_model
from dialeval.fed.runner import AUTO_PRECISIONS
from dialeval.core.precision import runner_precision

_CITATION = """\
@inproceedings{mehri-eskenazi-2020-unsupervised,
    title = "Unsupervised Evaluation of Interactive Dialog with {D}ialo{GPT}",
    author = "Mehri, Shikib and Eskenazi, Maxine",
    booktitle = "Proceedings of the 21th Annual Meeting of the Special Interest Group on Discourse and Dialogue",
    year = "2020",
    pages = "225--235",
}
"""

_DESCRIPTION = """\
FED scores a conversation without references or training: a dialogue language model (DialoGPT)
plays the user, and a response is good on a quality when the model finds positive follow-ups
("Wow that is really interesting.") more likely than negative ones ("That's really boring.").
8 turn-level qualities (the last turn is the response being rated) and 10 dialog-level ones.
"""

_KWARGS_DESCRIPTION = """
Args:
    conversations (list of list of str): the turns of each conversation, oldest first; for
        turn-level scores the last turn is the system response being rated (it may be empty, an
        empty generation: it is then flagged and gets each score's worst value; other turns must be
        non-empty).
    level (str): "turn" (default), "dialog" or "both".
    mode (str): the variant, "conditional" (default, best measured: the paper's Eq. 1 with means
        over the follow-ups, whole conversation as context), "paper" (Eq. 1 with sums and the
        Section 6.1 context rule: the last response alone for most turn-level qualities) or
        "reference" (the authors' code: whole-string loss). The signature names it.
    model (str, optional): causal LM, a local path, a name under $DIALEVAL_MODELS or a Hub id
        (default microsoft/DialoGPT-large when it can be had, else the local stand-ins).
    qualities (list of str, optional): subset of quality names.
    batch_size (int, default 32), device (str, default CUDA when available else CPU),
    eos_token (str, optional).
    precision (str, optional): the model's arithmetic, "float32" (default), "bfloat16", "int8" (the
        CPU's dynamic int8), "bfloat16-matmul" (float32 products in oneDNN's bfloat16 math) or "auto"
        (the fastest the device runs natively among those that passed the fidelity check against
        float32; float32 until one has); the signature names any but float32.
    Any other keyword is a ValueError.
Returns:
    turn_<quality> / dialog_<quality>: mean score; <name>_scores: per conversation;
    turn_overall / dialog_overall: mean of the level's qualities; signature; flags: per
    conversation, empty / no_words / repetitive / echo / salad or none (docs/inputs.md). A flagged
    conversation counts in each mean at the score's worst value (the floor -1000 for a
    log-likelihood difference: 4 blank replies of 8 take turn_overall to about -500); beside each
    mean, <name>_unflagged is the mean over the unflagged conversations and flagged their number;
    percentiles=True adds <name>_percentile, the mean percentile among human replies with a
    flagged reply at 0.
    Range and direction: every score is a raw difference of log-likelihoods, log P(positive
    follow-ups) - log P(negative ones): higher = better, unbounded (0: both equally likely; negative:
    the negative follow-ups are likelier), comparable only under one model and mode (the
    signature). Qualities without positive follow-ups (turn relevant, correct; dialog coherent,
    error recovery, consistent, diverse, depth, understand) are -log P(negative follow-ups): 0 or
    more, higher = better. dialeval.registry.describe("fed", name) gives each one's meaning.
Examples:
    >>> fed = evaluate.load("dialeval/fed")
    >>> results = fed.compute(conversations=[["Hi!", "Hello, how is your day?"]], model="dialeval/gemma3-dialogue",
    ...                       qualities=["interesting", "fluent"])
    >>> round(results["turn_interesting"], 2), round(results["turn_fluent"], 2)
    (4.05, 4.62)
    >>> results["flagged"], round(results["turn_fluent_unflagged"], 2)
    (0, 4.62)
    >>> results["signature"]
    'metric:fed|model:dialeval/gemma3-dialogue@...|mode:conditional|level:turn|version:...'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Fed(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"conversations": datasets.Sequence(datasets.Value("string"))}),
            homepage="https://github.com/Shikib/fed",
            reference_urls=["https://aclanthology.org/2020.sigdial-1.28/"],
        )

    def _compute(self, conversations, level="turn", mode=DEFAULT_MODE, model=None, qualities=None,
                 batch_size=32, device=None, eos_token=None, precision=None):
        model = model or default_dialogue_model()
        precision = runner_precision(precision, device, AUTO_PRECISIONS)
        settings = (model, None if qualities is None else tuple(qualities), batch_size, device, eos_token, precision)
        scorer = kept_scorer(self, settings, lambda: FEDScorer(model, device=device, batch_size=batch_size,
                                                               eos_token=eos_token, qualities=qualities,
                                                               precision=precision))
        return scorer.score(conversations, level=level, mode=mode)
