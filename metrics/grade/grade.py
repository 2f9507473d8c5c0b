"""GRADE: graph-enhanced coherence of dialogue responses (Huang et al. 2020), an evaluate module.

A thin wrapper: the implementation is ``dialeval.grade``.
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.grade.scorer import DEFAULT_MODEL, GradeScorer
from dialeval.grade.runner import AUTO_PRECISIONS
from dialeval.core.precision import runner_precision

_CITATION = """\
@inproceedings{huang-etal-2020-grade,
    title = "{GRADE}: Automatic Graph-Enhanced Coherence Metric for Evaluating Open-Domain Dialogue Systems",
    author = "Huang, Lishan and Ye, Zheng and Qin, Jinghui and Lin, Liang and Liang, Xiaodan",
    booktitle = "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year = "2020",
    pages = "9230--9240",
    doi = "10.18653/v1/2020.emnlp-main.742",
}
"""

_DESCRIPTION = """\
GRADE scores how coherent a response is with its dialogue context, in [0, 1], from two branches:
an encoder's representation of the (context, response) pair and a topic-level graph of context and
response keywords, linked with ConceptNet hop distances and reasoned over with graph attention.
The bundled model (dialeval/grade-dailydialog) was trained on DailyDialog with a margin ranking
loss against retrieved and embedding-sampled negative responses; it runs offline.
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts (list of list of str): the dialogue turns before each response (oldest first).
    responses (list of str): the responses to score, one per context.
    graph (bool, optional): False scores with the checkpoint's no-graph head (ablation). Default True.
    model (str, optional): "dialeval/grade-dailydialog" (default, bundled) or a folder written by
        training/grade.py.
    batch_size (int, optional): at most this many pairs per encoder batch, default 32.
    device (str, optional): torch device, default CPU.
    precision (str, optional): the encoder's arithmetic, "float32" (default), "bfloat16", "int8" (the
        CPU's dynamic int8), "bfloat16-matmul" (float32 products in oneDNN's bfloat16 math) or "auto"
        (the fastest the device runs natively among those that passed the fidelity check against
        float32; float32 until one has); the signature names any but float32.
Returns:
    grade: mean score; grade_scores: per-item scores in [0, 1]; signature: the model (with its
    content hash), encoder, graph setting and dialeval version, to report with the numbers; flags:
    per item, empty / no_words / repetitive / echo / salad / unknown_words for a response scored 0 by the
    degenerate-response policy. Range and direction: grade lies in 0 to 1, higher = better (a ranking model's sigmoid:
    relative, not a calibrated rating); dialeval.registry.describe("grade", "grade") gives its meaning.
Examples:
    >>> grade = evaluate.load("dialeval/grade")
    >>> results = grade.compute(contexts=[["do you like dogs ?"]], responses=["yes , i have two dogs ."])
    >>> round(results["grade"], 3), results["flags"]
    (0.856, [[]])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Grade(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"contexts": datasets.Sequence(datasets.Value("string")), "responses": datasets.Value("string")}
            ),
            homepage="https://github.com/li3cmz/GRADE",
            reference_urls=["https://aclanthology.org/2020.emnlp-main.742/"],
        )

    def _compute(self, contexts, responses, graph=True, model=DEFAULT_MODEL, batch_size=32, device=None,
                 precision=None):
        precision = runner_precision(precision, device, AUTO_PRECISIONS)
        return self._scorer(model, batch_size, device, precision).score(contexts, responses, graph=graph)

    def _scorer(self, model, batch_size, device, precision="float32"):
        return kept_scorer(self, (model, batch_size, device, precision),
                           lambda: GradeScorer(model, device=device, batch_size=batch_size, precision=precision))
