"""L's raw value: the response's negative log-likelihood under a causal LM.

The paper scores a response with a BERT masked LM fine-tuned on DailyDialog: the pseudo-log-
likelihood ``sum_i log P(x_i | x_{-i})`` (each token masked in turn), and L reads its negation, the
NLL (summed over the response's tokens, the authors' ``MLMScorer.predict``). No masked-LM weights
are offline (all-mpnet-base-v2 keeps no MLM head), so here ``nll = -sum_t log P(x_t | EOS, x_<t)``,
the response alone after the tokenizer's EOS token (else BOS), under a causal LM: by default
``dialeval/smollm2-dailydialog``, SmolLM2-135M-Instruct fine-tuned on DailyDialog (the same corpus
as the paper's MLM). An empty response would be the EOS alone; the scorer flags it before.
"""

from __future__ import annotations

from typing import Any, Sequence

DEFAULT_LM = "dialeval/smollm2-dailydialog"


class ResponseNLL:
    """The summed token NLL of responses under ``model`` (a name, folder or loaded ``(model, tokenizer)``)."""

    def __init__(self, model: str | tuple[Any, Any] = DEFAULT_LM, device: str | None = None,
                 batch_size: int = 16, precision: str = "float32"):
        from dialeval.core.lm import lm_scorer

        self.scorer, self.model_name = lm_scorer(model, device, batch_size=batch_size, precision=precision)
        tokenizer = self.scorer.tokenizer
        start = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.bos_token_id
        if start is None:
            raise ValueError("the tokenizer has neither a BOS nor an EOS token to start the text with")
        self.start = [start]

    def logprobs(self, responses: Sequence[str]) -> list[tuple[float, int]]:
        """``(log P(response | EOS), its token count)`` per response (each distinct response run once)."""
        tokenizer = self.scorer.tokenizer
        distinct = list(dict.fromkeys(responses))
        ids = [tokenizer.encode(r, add_special_tokens=False) for r in distinct]
        table = dict(zip(distinct, self.scorer.continuation_logprobs(self.start, ids)))
        return [table[r] for r in responses]

    def nll(self, responses: Sequence[str]) -> list[float]:
        """``-log P(response | EOS)`` per response: L's raw value."""
        return [-lp for lp, _ in self.logprobs(responses)]
