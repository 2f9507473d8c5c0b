"""FED (Mehri & Eskenazi 2020): 18 fine-grained dialogue qualities from follow-up likelihoods.

A thin evaluate wrapper: the implementation is ``dialeval.fed``.
"""

import datasets
import evaluate
import dialeval
from dialeval.fed import DEFAULT_MODEL, FEDScorer

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
        turn-level scores the last turn is the system response being rated.
    level (str): "turn" (default), "dialog" or "both".
    model (str): causal LM, a local path or hub id (default microsoft/DialoGPT-large).
    mode (str): "reference" (the authors' code, default) or "conditional" (the paper's Eq. 1).
    qualities (list of str, optional): subset of quality names.
    batch_size (int), device (str), eos_token (str, optional).
Returns:
    turn_<quality> / dialog_<quality>: mean score; <name>_scores: per conversation;
    turn_overall / dialog_overall: mean of the level's qualities; signature.
Examples:
    >>> fed = evaluate.load("dialeval/fed")
    >>> results = fed.compute(conversations=[["Hi!", "Hello, how is your day?"]], model="path/to/dialogue-lm")
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Fed(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"conversations": datasets.Sequence(datasets.Value("string"))}),
            homepage="https://github.com/Shikib/fed",
            reference_urls=["https://aclanthology.org/2020.sigdial-1.28/"],
        )

    def _compute(self, conversations, level="turn", model=DEFAULT_MODEL, mode="reference", qualities=None,
                 batch_size=32, device=None, eos_token=None):
        settings = (model, mode, tuple(qualities) if qualities else None, batch_size, device, eos_token,
                    dialeval.__version__)
        # Keep the loaded model on the module, keyed by its settings: a second compute() reloads nothing.
        if getattr(self, "_cached_key", None) != settings:
            self._cached_scorer = FEDScorer(model, device=device, batch_size=batch_size, mode=mode,
                                            eos_token=eos_token, qualities=qualities)
            self._cached_key = settings
        return self._cached_scorer.score(conversations, level=level)
