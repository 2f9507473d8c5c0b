"""Behavioural suite: judgments that cannot be gamed (issue 32).

A metric that correlates with human ratings may still prefer an echo of the context, a word salad or
"I don't know." to what a person actually replied. For ``n`` contexts (DailyDialog test by default,
:mod:`~dialeval.metaeval.behaviour.cases`) the real reply is set against replies built from the same context
(:mod:`~dialeval.metaeval.behaviour.kinds`), all scored through the registry's runner and the score cache
(:mod:`~dialeval.metaeval.behaviour.suite`), and each metric is held to what it declares it must catch
(:attr:`dialeval.core.spec.MetricSpec.behaviour`) at a 90 % bar reached on enough contexts (a 95 % Wilson lower bound of at least 0.80,
:mod:`~dialeval.metaeval.behaviour.checks`);
:mod:`~dialeval.metaeval.behaviour.report` writes Markdown and JSON.

Method: CheckList (Ribeiro et al. 2020, "Beyond Accuracy: Behavioral Testing of NLP Models with
CheckList", ACL); DailyDialog++'s adversarial irrelevant responses (Sai et al. 2020, "Improving
Dialog Evaluation with a Multi-reference Adversarial Dataset and Large Scale Pretraining", TACL);
Khalid & Lee 2022 ("Explaining Dialogue Evaluation Metrics using Adversarial Behavioral Analysis",
NAACL).

    from dialeval.metaeval.behaviour import behaviour
    result = behaviour("<metric>", n=200)          # a MetricResult; .passed, .failures, .undecided, .to_dict()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from dialeval.metaeval.behaviour.cases import DEFAULT_N, DEFAULT_SPLIT, Case, dailydialog_cases, read_cases
from dialeval.metaeval.behaviour.report import markdown, to_json
from dialeval.metaeval.behaviour.suite import MetricResult, run, runnable_metrics

__all__ = ["Case", "MetricResult", "behaviour", "load_cases", "markdown", "runnable_metrics", "to_json"]


def load_cases(dataset: str | Path | None = None, n: int | None = None, seed: int = 0) -> tuple[list[Case], str]:
    """The suite's cases and where they come from: ``n`` (default 200) from DailyDialog test, or the
    first ``n`` (default: all) of a JSON-lines ``dataset``."""
    if dataset is None:
        return dailydialog_cases(DEFAULT_N if n is None else n, seed), f"DailyDialog {DEFAULT_SPLIT}"
    return read_cases(dataset, n), str(dataset)


def behaviour(metric: str, dataset: str | Path | None = None, n: int | None = None, seed: int = 0,
              options: Mapping[str, Any] | None = None, refresh: bool = False, progress: bool = True) -> MetricResult:
    """The behavioural suite of ``metric`` (module docstring)."""
    cases, source = load_cases(dataset, n, seed)
    return run(metric, cases, source, seed, options, refresh, progress)
