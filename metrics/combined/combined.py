"""The combined dialeval metric, an evaluate module: the mean percentile among human replies of the
dialeval components that pass the behavioural suite (design chosen leave-one-source-out, issue 57).

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
The combined metric scores a response with the dialeval components that pass every declared kind of
the behavioural suite themselves, its features (named as in its signature): holistic coherence
(coherence), GRADE (grade) and SSREM's reference-free context fit (ssrem_f). Each score is read as
its percentile among human replies to DailyDialog test contexts (the components' stored references)
and the combined score is the mean of the three, in [0, 1]: no weight is fitted and no human rating
is read. Among six designs compared leave-one-source-out on the shared human-judgment sets (one
paper's sets held out together), it is the one above GRADE alone on the most sources; where it is
not (the model card says where), use GRADE. It needs a context (every component reads one); references
are not read. It costs its three components (their per-item scores are cached), not FED or FULL.
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts (list of list of str): the turns before each response.
    responses (list of str): the responses to score.
    references (list of list of str, optional): reference responses; read only by a model of another
        design that has referenced features (training/combined.py --design a), not by the default.
    model (str, optional): a folder holding combined.json or "dialeval/combined-judgments" (default, bundled).
Returns:
    combined: the mean score; combined_scores: per item, the mean of the components' percentiles
    among human replies, in [0, 1], higher = better; signature: the model, the features used, the
    number of sets its weights were fitted on (0: none) and every component's weights; flags: per item, empty / no_words / repetitive / echo / salad / unknown_words (set by the
    response or by a component) for a response scored 0.
Examples:
    >>> combined = evaluate.load("dialeval/combined")
    >>> result = combined.compute(contexts=[["Do you like reading books?"]],
    ...                           responses=["Yes, mostly novels. I read one every week."])
    >>> round(result["combined"], 3), result["flags"]
    (0.932, [[]])
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
