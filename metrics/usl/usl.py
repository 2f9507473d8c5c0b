"""USL-H: understandability, sensibleness and specificity combined hierarchically (Phy et al. 2020), an evaluate module.

A thin wrapper: the implementation is ``dialeval.usl``; the weights are the bundled
``hub/usl-dailydialog`` folder (``dialeval/usl-dailydialog``).
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.usl.formula import DEFAULT_HIERARCHY
from dialeval.usl.heads import DEFAULT_MODEL
from dialeval.usl.scorer import USLScorer
from dialeval.usl.scorer import check_inputs
from dialeval.usl.runner import AUTO_PRECISIONS
from dialeval.core.precision import runner_precision

_CITATION = """\
@inproceedings{phy-etal-2020-deconstruct,
    title = "Deconstruct to Reconstruct a Configurable Evaluation Metric for Open-Domain Dialogue Systems",
    author = "Phy, Vitou and Zhao, Yang and Aizawa, Akiko",
    booktitle = "Proceedings of the 28th International Conference on Computational Linguistics",
    year = "2020",
    pages = "4164--4178",
    doi = "10.18653/v1/2020.coling-main.368",
}
"""

_DESCRIPTION = """\
USL-H scores a response to its dialogue context from three parts, each in [0, 1]: U, the probability
that it is a valid utterance (a classifier trained to tell DailyDialog responses from their reordered,
word-dropped or word-repeated corruptions); S, the probability that it is the context's true next
turn rather than a random response; L, its specificity (its negative log-likelihood under a
DailyDialog-tuned language model, clipped to the quartiles of DailyDialog validation responses and
scaled). They combine hierarchically as the authors' released scorer does (and so every published
USL-H number after the paper): USL-H = 0.33*U + 0.33*S + 0.34*S*L; the paper's formula, where a
response must first be understandable, then sensible, 0.33*U + 0.33*U*S + 0.34*U*S*L, is
hierarchy="H". The bundled model
(dialeval/usl-dailydialog) was trained on DailyDialog only, offline, on all-mpnet-base-v2 (BERT-base size), frozen
but for U's LoRA adapter on its top layer.
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts (list of list of str): the dialogue turns before each response (oldest first).
    responses (list of str): the responses to score, one per context.
    hierarchy (str, optional): "HS" (default, what the authors' scorer reports and Yeh et al. 2021 measured:
        0.33*U + 0.33*S + 0.34*S*L) or "H" (the paper's formula: 0.33*U + 0.33*U*S + 0.34*U*S*L).
    model (str, optional): "dialeval/usl-dailydialog" (default, bundled) or a folder written by training/usl.py.
    device (str, optional): torch device, default CPU.
    precision (str, optional): the encoder's arithmetic, "float32" (default), "bfloat16", "int8",
        "bfloat16-matmul" or "auto" (float32 until a reduced precision has passed the fidelity check);
        the signature names any but float32.
Returns:
    usl: mean USL-H; usl_scores: per item; usl_u, usl_s, usl_l (and _scores): the three parts; signature: the
    model (with its content hash), encoder, LM, hierarchy and dialeval version; flags: per item, empty /
    no_words / repetitive / echo / salad for a response scored 0 in every part by the degenerate-response
    policy. Range and direction: all in 0 to 1, higher = better; dialeval.registry.describe("usl", name)
    gives each one's meaning.
Examples:
    >>> usl = evaluate.load("dialeval/usl")
    >>> results = usl.compute(contexts=[["Can I help you?"], ["Do you like reading books?"]],
    ...                       responses=["", "Yes, mostly novels. I read one every week."])
    >>> [round(s, 3) for s in results["usl_scores"]], results["flags"]
    ([0.0, 0.787], [['empty'], []])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Usl(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"contexts": datasets.Sequence(datasets.Value("string")), "responses": datasets.Value("string")}
            ),
            homepage="https://github.com/vitouphy/usl_dialogue_metric",
            reference_urls=["https://aclanthology.org/2020.coling-main.368/"],
        )

    def _check_inputs(self, given):
        # Check before evaluate's features cast the inputs (an int would silently become "7").
        if given.get("responses") is not None:
            check_inputs(given.get("contexts"), given["responses"])

    def _compute(self, contexts, responses, hierarchy=DEFAULT_HIERARCHY, model=DEFAULT_MODEL, device=None,
                 precision=None):
        precision = runner_precision(precision, device, AUTO_PRECISIONS)
        return self._scorer(model, device, precision).score(contexts, responses, hierarchy)

    def _scorer(self, model, device, precision):
        return kept_scorer(self, (model, device, precision), lambda: USLScorer(model, device, precision))
