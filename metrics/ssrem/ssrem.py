"""SSREM, the Speaker Sensitive Response Evaluation Model (Bak & Oh 2020), an evaluate module.

A thin wrapper: the implementation is ``dialeval.ssrem.scorer``; the weights are the bundled
``hub/ssrem-chitchat-mpnet`` folder (``dialeval/ssrem-chitchat-mpnet``; the GloVe model
``dialeval/ssrem-chitchat`` is an option).
"""

import datasets
import evaluate
import dialeval.modules.metric_base
from dialeval.modules import kept_scorer
from dialeval.ssrem.scorer import DEFAULT_MODEL
from dialeval.ssrem.scorer import DEFAULT_SCALING
from dialeval.ssrem.scorer import SSREMScorer
from dialeval.ssrem.scorer import check_context_fit_inputs
from dialeval.ssrem.scorer import check_inputs
from dialeval.ssrem.runner import AUTO_PRECISIONS
from dialeval.core.precision import runner_precision

_CITATION = """\
@inproceedings{bak-oh-2020-speaker,
    title = "Speaker Sensitive Response Evaluation Model",
    author = "Bak, JinYeong and Oh, Alice",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    doi = "10.18653/v1/2020.acl-main.568",
}
"""

_DESCRIPTION = """\
SSREM scores a response from its context and a reference response: the mean of
f(c, r) = v(c)^T M v(r), a context-response model trained to pick the true response among
speaker-sensitive negatives (the same speaker's other utterances in the same conversation, with the
same partner, elsewhere, and random ones), and g, a word-vector mover's similarity with the
reference, each min-max scaled to [0, 1] with the constants stored with the model. v is the frozen
all-mpnet-base-v2 sentence embedding (v(c): the mean of the last 3 turns' vectors; the option
dialeval/ssrem-chitchat: the paper's word average, GloVe 6B 50d, centred); the bundled weights were
trained on the chit-chat corpus (PyPI chitchat-dataset). With reference_free=True it scores f alone
(ssrem_f), which needs no references.
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts (list of list of str): the turns before each response (the last 3 are used).
    responses (list of str): the responses to score.
    references (list of str, or list of list of str): reference response(s); g takes the best. Not
        needed with reference_free=True (any given are not read).
    reference_free (bool, optional): True scores the context fit ssrem_f alone, without references
        (scaling and mover do not apply); the result holds ssrem_f, ssrem_f_scores, signature (part:f,
        nrefs:0) and flags.
    model (str, optional): a checkpoint folder, "dialeval/ssrem-chitchat-mpnet" (default, bundled) or
        "dialeval/ssrem-chitchat" (bundled, GloVe).
    scaling (str, optional): min-max constants, "model" (default: the 1st / 99th percentiles stored
        with the checkpoint, as the CLI and the benchmarks; a score does not depend on the other
        items), "set" (the scored set's, the paper) or "auto" ("set" from 50 items on, else "model").
    mover (str, optional): g's variant, "sms" (default, sentence mover's similarity), "wms" or "s+wms".
    word_vectors (str, optional): a GloVe / word2vec text file for g instead of GloVe 6B 50d.
    device (str, optional): for a sentence-encoder checkpoint (the default's mpnet).
    precision (str, optional): that encoder's arithmetic, "float32" (default), "bfloat16", "int8" (the
        CPU's dynamic int8), "bfloat16-matmul" (float32 products in oneDNN's bfloat16 math) or "auto"
        (the fastest the device runs natively among those that passed the fidelity check against
        float32; float32 until one has); the signature names any but float32.
Returns:
    ssrem: mean combined score h in [0, 1]; ssrem_scores: per item; ssrem_f, ssrem_g (and _scores):
    the two parts before scaling; ssrem_f_min ... ssrem_g_max: the min-max constants used;
    signature: model (with its content hash), encoder, g, scaling and version; flags: per item, empty /
    no_words / repetitive / echo / salad / unknown_words for a response scored as the worst (h 0, g 0, f its floor -1000).
    Range and direction: ssrem 0 to 1, higher = better; ssrem_f raw, unbounded, higher = better;
    ssrem_g raw, 0 to 1, higher = better; the raw parts are comparable only under one model.
    dialeval.registry.describe("ssrem", name) gives each one's meaning. percentiles=True adds
    ssrem_f_percentiles: ssrem_f's percentile among human replies to DailyDialog test contexts (100:
    better than every one), with references or without.
Examples:
    >>> ssrem = evaluate.load("dialeval/ssrem")
    >>> result = ssrem.compute(contexts=[["What do you want to do tonight?", "Why don't we go see a movie?"]],
    ...                        responses=["That sounds good! Have you seen Thor?"],
    ...                        references=["Yeah let's go to the theater"])
    >>> round(result["ssrem"], 3), round(result["ssrem_f"], 3), round(result["ssrem_g"], 3)
    (0.511, 0.868, 0.127)
    >>> fit = ssrem.compute(contexts=[["What do you want to do tonight?", "Why don't we go see a movie?"],
    ...                               ["What do you want to do tonight?", "Why don't we go see a movie?"]],
    ...                     responses=["That sounds good! Have you seen Thor?", ""], reference_free=True,
    ...                     percentiles=True)
    >>> [round(f, 3) for f in fit["ssrem_f_scores"]], fit["flags"], fit["ssrem_f_percentiles"][0]
    ([0.868, -1000.0], [[], ['empty']], 65.0)
"""

_STRING = datasets.Value("string")
_STRINGS = datasets.Sequence(datasets.Value("string"))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ssrem(dialeval.modules.metric_base.CheckedMetric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"contexts": _STRINGS, "responses": _STRING, "references": _STRINGS}),
                datasets.Features({"contexts": _STRINGS, "responses": _STRING, "references": _STRING}),
            ],
            homepage="https://github.com/NoSyu/SSREM",
            reference_urls=["https://aclanthology.org/2020.acl-main.568/"],
        )

    def compute(self, **kwargs):
        """As evaluate's ``compute``; with ``reference_free=True`` the references may be left out: each
        item then stores an empty list (evaluate stores every feature), which is not read."""
        responses = kwargs.get("responses")
        if kwargs.get("reference_free") and kwargs.get("references") is None and isinstance(responses, (list, tuple)):
            kwargs["references"] = [[] for _ in responses]
        return super().compute(**kwargs)

    def _check_inputs(self, given):
        # Check before evaluate's features cast the inputs (an int would silently become "7").
        if given.get("responses") is None:
            return
        if given.get("reference_free"):
            check_context_fit_inputs(given.get("contexts"), given["responses"])
        elif given.get("references") is None:
            raise ValueError("compute() needs references (a list with one entry per item), or reference_free=True "
                             "for the context fit ssrem_f alone")
        else:
            check_inputs(given.get("contexts"), given["responses"], given["references"])

    def _compute(self, contexts, responses, references, model=DEFAULT_MODEL, scaling=DEFAULT_SCALING, mover="sms",
                 word_vectors=None, device=None, reference_free=None, precision=None):
        scorer = self._scorer(model, word_vectors, device, runner_precision(precision, device, AUTO_PRECISIONS))
        if reference_free:
            return scorer.score_context_fit(contexts, responses)
        return scorer.score(contexts, responses, references, scaling=scaling, mover=mover)

    def _scorer(self, *settings):
        return kept_scorer(self, settings, lambda: SSREMScorer(*settings))
