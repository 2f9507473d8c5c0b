"""Multi-reference evaluation of dialogue responses (Gupta et al. 2019), an evaluate module.

A thin wrapper: the implementation is ``dialeval.multiref.scorer``.
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.multiref.scorer import DEFAULT_TOOLING
from dialeval.multiref.scorer import QUALITY_METRICS
from dialeval.multiref.scorer import MultiRefScorer
from dialeval.multiref.scorer import check_config
from dialeval.multiref.scorer import check_diversity_inputs
from dialeval.multiref.scorer import check_quality_inputs

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
Sub-metrics: BLEU-1..4 (NLTK sentence BLEU, smoothing method 1), METEOR (the METEOR 1.5 jar, or
NLTK), ROUGE-L, Embedding Average, Vector Extrema and Greedy Matching (GloVe 6B 50d). The default
tooling="paper" scores as the authors did (whitespace tokens, METEOR 1.5 when Java is present,
ROUGE-L beta 1.2, mean vector for unknown words); tooling="dialeval" is the regex-tokenizer / NLTK
variant. The "diversity" configuration scores groups of responses to one context: referenced
recall (Eq. 2) for every sub-metric, Distinct-1/2/3 and 1 - Self-BLEU.
"""

_KWARGS_DESCRIPTION = """
Args (configuration "quality", the default):
    predictions (list of str): the responses to score.
    references (list of str, or list of list of str): one or more references per response.
    metrics (str or list of str, optional): sub-metrics to compute, default all of
        bleu1 bleu2 bleu3 bleu4 meteor rougeL embedding_average vector_extrema greedy_matching.
    tooling (str, optional): "paper" (default; Gupta et al.'s scorer) or "dialeval".
    meteor (str, optional): "jar" (METEOR 1.5, needs Java), "nltk" or "auto" (jar when Java is
        present); default: "auto" with tooling="paper", "nltk" with tooling="dialeval".
    bleu (str, optional): "nltk" (default, the paper's) or "coco" (nlg-eval's unsmoothed BLEU).
    word_vectors (str, optional): a GloVe / word2vec text file instead of GloVe 6B 50d.
    rouge_beta (float > 0, optional): recall weight of ROUGE-L; default 1.2 (paper) or 1.0.
Args (configuration "diversity"):
    predictions (list of list of str): groups of responses, each group to one context.
    references (list of list of str): valid responses per context; [] for unreferenced only.
Empty predictions score 0; empty references, non-strings and unknown options raise ValueError.
Returns:
    <sub-metric>: mean over items; <sub-metric>_scores: per-item list; signature: a string naming
    the settings and dialeval version, to report with the numbers.
    Range and direction: higher = better for every sub-metric, none is a raw value. bleu1..bleu4,
    meteor, rougeL: 0 to 1; embedding_average, vector_extrema, greedy_matching: -1 to 1 (cosines);
    the diversity configuration's recall_<sub-metric> has its sub-metric's range, distinct1..3 and
    self_bleu_diversity lie in 0 to 1 (higher = more diverse). dialeval.registry.describe("multiref",
    name) gives each one's range, direction and meaning.
Examples:
    >>> multiref = evaluate.load("dialeval/multiref")
    >>> results = multiref.compute(predictions=["i am fine , thanks ."],
    ...                            references=[["fine , thank you .", "i am good ."]])
    >>> round(results["bleu1"], 3)
    0.5
    >>> round(results["rougeL"], 4)
    0.6224
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Multiref(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        check_config(self.config_name)
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

    def _check_inputs(self, given):
        # Check types before evaluate's features cast them (an int would silently become "7").
        if given.get("predictions") is not None:
            check = check_diversity_inputs if self.config_name == "diversity" else check_quality_inputs
            check(given["predictions"], given.get("references"))

    def _compute(self, predictions, references, metrics=QUALITY_METRICS, word_vectors=None, rouge_beta=None,
                 tooling=DEFAULT_TOOLING, meteor=None, bleu="nltk"):
        scorer = self._scorer(metrics, word_vectors, rouge_beta, tooling, meteor, bleu)
        if self.config_name == "diversity":
            return scorer.diversity(predictions, references)
        return scorer.quality(predictions, references)

    def _scorer(self, *settings):
        return kept_scorer(self, settings, lambda: MultiRefScorer(*settings))
