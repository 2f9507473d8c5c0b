"""Multi-reference evaluation of dialogue responses (Gupta et al. 2019), an evaluate module.

A thin wrapper: the implementation is ``dialeval.multiref``.
"""

import datasets
import evaluate
import dialeval
from dialeval.multiref import QUALITY_METRICS, MultiRefScorer

_CITATION = """\
@inproceedings{gupta-etal-2019-investigating,
    title = "Investigating Evaluation of Open-Domain Dialogue Systems With Human Generated Multiple References",
    author = "Gupta, Prakhar and Mehri, Shikib and Zhao, Tiancheng and Pavel, Amy and Eskenazi, Maxine and Bigham, Jeffrey",
    booktitle = "Proceedings of the 20th Annual SIGdial Meeting on Discourse and Dialogue",
    year = "2019",
    pages = "379--391",
    doi = "10.18653/v1/W19-5944",
}
"""

_DESCRIPTION = """\
Word-overlap and word-embedding metrics for dialogue responses scored against several valid
references: each sub-metric is the maximum over the references (Gupta et al. 2019, Eq. 1).
Sub-metrics: BLEU-1..4 (NLTK sentence BLEU, smoothing method 1), METEOR (NLTK, WordNet synonyms),
ROUGE-L F1, Embedding Average, Vector Extrema and Greedy Matching (GloVe 6B 50d). The
"diversity" configuration scores groups of responses to one context: referenced recall (Eq. 2)
for every sub-metric, Distinct-1/2/3 and 1 - Self-BLEU.
"""

_KWARGS_DESCRIPTION = """
Args (configuration "quality", the default):
    predictions (list of str): the responses to score.
    references (list of str, or list of list of str): one or more references per response.
    metrics (list of str, optional): sub-metrics to compute, default all of
        bleu1 bleu2 bleu3 bleu4 meteor rougeL embedding_average vector_extrema greedy_matching.
    word_vectors (str, optional): a GloVe / word2vec text file instead of GloVe 6B 50d.
    rouge_beta (float, optional): recall weight of ROUGE-L, default 1.0 (F1).
Args (configuration "diversity"):
    predictions (list of list of str): groups of responses, each group to one context.
    references (list of list of str): valid responses per context; [] for unreferenced only.
Returns:
    <sub-metric>: mean over items; <sub-metric>_scores: per-item list; signature: a string naming
    the settings and dialeval version, to report with the numbers.
Examples:
    >>> multiref = evaluate.load("dialeval/multiref")
    >>> results = multiref.compute(predictions=["i am fine , thanks ."],
    ...                            references=[["fine , thank you .", "i am good ."]])
    >>> round(results["bleu1"], 3)
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Multiref(evaluate.Metric):
    def _info(self):
        if self.config_name == "diversity":
            features = datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Sequence(datasets.Value("string")),
                }
            )
        else:
            features = [
                datasets.Features(
                    {
                        "predictions": datasets.Value("string"),
                        "references": datasets.Sequence(datasets.Value("string")),
                    }
                ),
                datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
                ),
            ]
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=features,
            homepage="https://github.com/prakharguptaz/multirefeval",
            reference_urls=["https://aclanthology.org/W19-5944/"],
        )

    def _compute(self, predictions, references, metrics=QUALITY_METRICS, word_vectors=None, rouge_beta=1.0):
        scorer = self._scorer(tuple(metrics), word_vectors, rouge_beta)
        if self.config_name == "diversity":
            return scorer.diversity(predictions, references)
        return scorer.quality(predictions, references)

    def _scorer(self, metrics, word_vectors, rouge_beta):
        # Keep the loaded scorer (WordNet, word vectors) on the module, keyed by its settings,
        # so a second compute() reloads nothing.
        key = (metrics, word_vectors, rouge_beta, dialeval.__version__)
        if getattr(self, "_cached_key", None) != key:
            self._cached_scorer = MultiRefScorer(metrics, word_vectors, rouge_beta)
            self._cached_key = key
        return self._cached_scorer
