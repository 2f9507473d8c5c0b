"""The combined dialeval metric, an evaluate module: the other dialeval metrics' headline scores,
combined by a non-negative ridge regression trained on human judgments (validated leave-one-set-out).

A thin wrapper: the implementation is ``dialeval.combined``; the weights are the bundled
``hub/combined-judgments`` folder (``dialeval/combined-judgments``).
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.combined.runner import DEFAULT_MODEL
from dialeval.combined.runner import run_combined
from dialeval.combined.scales import SCALES
from dialeval.core.results import summarize
from dialeval.modules.inputs import check_module_inputs

_CITATION = """\
@inproceedings{yeh-etal-2021-comprehensive,
    title = "A Comprehensive Assessment of Dialog Evaluation Metrics",
    author = "Yeh, Yi-Ting and Eskenazi, Maxine and Mehri, Shikib",
    booktitle = "The First Workshop on Evaluations and Assessments of Neural Conversation Systems",
    year = "2021",
    doi = "10.18653/v1/2021.eancs-1.3",
}
"""

_DESCRIPTION = """\
The combined metric scores a response with the dialeval metrics that apply to it and combines their
headline scores, its features (named as in its signature): FED's overall quality (fed_overall),
holistic coherence, fluency and consistency, GRADE (grade), SSREM's reference-free context fit
(ssrem_f) and FULL (full); with references also SSREM's headline score (ssrem) and the
multi-reference scores bleu2, meteor, rougeL and embedding_average. They are combined with a
non-negative ridge regression, standardised features, trained to predict the human rating's
percentile within a rated set. It is the one dialeval metric trained on the human-judgment sets;
every number reported for it on one of those sets comes from the model trained without that set. It
costs at most the sum of its components (their per-item scores are cached).
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts (list of list of str): the turns before each response.
    responses (list of str): the responses to score.
    references (list of list of str, optional): reference responses; with them the referenced
        components (SSREM's headline ssrem, multiref) join in and the model trained with them is used.
    model (str, optional): a folder holding combined.json or "dialeval/combined-judgments" (default, bundled).
Returns:
    combined: the mean score; combined_scores: per item, the predicted percentile of the human rating
    in [0, 1], higher = better; signature: the model, the features used, the number of training sets
    and every component's weights; flags: per item, empty / no_words / repetitive / echo / salad / unknown_words (set by the
    response or by a component) for a response scored 0.
Examples:
    >>> combined = evaluate.load("dialeval/combined")
    >>> result = combined.compute(contexts=[["Do you like reading books?"]],
    ...                           responses=["Yes, mostly novels. I read one every week."])
    >>> round(result["combined"], 3), result["flags"]
    (0.736, [[]])
"""

_STRING = datasets.Value("string")
_STRINGS = datasets.Sequence(datasets.Value("string"))
_REFERENCES = datasets.Features({"references": _STRINGS})


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Combined(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            # references are optional, so they are an option of compute() rather than a feature
            features=datasets.Features({"contexts": _STRINGS, "responses": _STRING}),
            reference_urls=["https://aclanthology.org/2021.eancs-1.3/"],
        )

    def _check_inputs(self, given):
        references = given.get("references")
        if references is not None:
            check_module_inputs(_REFERENCES, {"references": references})
            if isinstance(given.get("responses"), list) and len(references) != len(given["responses"]):
                raise ValueError(f"references has {len(references)} entries for {len(given['responses'])} responses")
            if any(not refs for refs in references):
                raise ValueError("references: every entry needs at least one reference")

    def _compute(self, contexts, responses, references=None, model=DEFAULT_MODEL):
        items = [{"context": list(c), "response": r, **({"references": list(references[i])} if references else {})}
                 for i, (c, r) in enumerate(zip(contexts, responses))]
        scores = run_combined(items, model)
        return summarize(*scores, scores.flags, SCALES)
