"""dialeval.integrations.compute_metrics inside a real transformers.Trainer evaluation step."""

import math

import numpy as np
import pytest
import torch

from dialeval.integrations import compute_metrics, decode
from dialeval.multiref.runner import run_multiref
from tiny_lm import tiny_gpt2

TEXTS = [
    "Hi! How are you doing today?",
    "I love jazz, rock and a bit of classical music.",
    "Do you like to read books?",
    "The movie was great.",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


def test_decode_replaces_ignore_index_and_reduces_logits(tiny):
    _, tokenizer = tiny
    ids = tokenizer("Hi there")["input_ids"]
    padded = np.array([ids + [-100, -100]])
    assert decode(tokenizer, padded) == ["Hi there"]
    logits = np.full((1, len(ids), len(tokenizer)), -5.0, dtype=np.float32)
    logits[0, np.arange(len(ids)), ids] = 5.0
    assert decode(tokenizer, (logits, None)) == ["Hi there"]
    with pytest.raises(ValueError, match="batch, length"):
        decode(tokenizer, np.array([1, 2, 3]))


def test_trainer_evaluate_scores_generations_including_an_empty_one(tiny, tmp_path):
    from transformers import Trainer, TrainingArguments

    model, tokenizer = tiny
    rows = [tokenizer(t)["input_ids"][:16] for t in TEXTS]
    width = max(map(len, rows))
    pad = tokenizer.pad_token_id
    dataset = [
        {"input_ids": torch.tensor(r + [pad] * (width - len(r))),
         "attention_mask": torch.tensor([1] * len(r) + [0] * (width - len(r))),
         "labels": torch.tensor(r + [-100] * (width - len(r)))}
        for r in rows
    ]
    seen: list[np.ndarray] = []

    def greedy_with_an_empty_row(logits, labels):
        ids = logits.argmax(-1)
        ids[0] = pad  # the first generation of every batch decodes to "" (an untrained model's output)
        seen.append(ids.numpy().copy())
        return ids

    references = [[t, "i am fine , thanks ."] for t in TEXTS]
    trainer = Trainer(
        model=model,
        args=TrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=2, report_to=[], use_cpu=True),
        eval_dataset=dataset,
        compute_metrics=compute_metrics(tokenizer, metrics="multiref", references=references,
                                        options={"multiref": {"metrics": ["bleu1", "rougeL"]}}),
        preprocess_logits_for_metrics=greedy_with_an_empty_row,
    )
    result = trainer.evaluate()

    generations = decode(tokenizer, np.concatenate(seen))
    assert generations[0] == "" and generations[2] == ""
    # The plain path: the runner on the decoded texts, means over all four items (empty ones count as 0).
    items = [{"context": [], "response": g, "references": r} for g, r in zip(generations, references)]
    per_item, _ = run_multiref(items, metrics=["bleu1", "rougeL"])
    assert per_item["bleu1"][0] == 0.0 and per_item["rougeL"][2] == 0.0
    for sub in ("bleu1", "rougeL"):
        assert math.isclose(result[f"eval_multiref_{sub}"], sum(per_item[sub]) / 4, rel_tol=1e-12)


def test_bad_arguments_are_named(tiny):
    _, tokenizer = tiny
    with pytest.raises(ValueError, match="unknown metrics"):
        compute_metrics(tokenizer, metrics=["bleu"])
    with pytest.raises(ValueError, match="not computed"):
        compute_metrics(tokenizer, metrics=["multiref"], options={"fed": {}})
    score = compute_metrics(tokenizer, metrics="multiref", references=[["a"]])
    ids = np.array([tokenizer("Hi")["input_ids"]] * 2)

    class Prediction:
        predictions, label_ids = ids, ids

    with pytest.raises(ValueError, match="1 references for 2 evaluation examples"):
        score(Prediction())


def test_a_sub_score_without_any_value_is_left_out_never_logged_as_nan(tiny, monkeypatch):
    """holistic diversity needs several generations per group: with none it is NaN for every item,
    and Trainer would log eval_holistic_diversity = nan at every evaluation."""
    from dialeval.scoring import runners

    _, tokenizer = tiny
    fake = lambda items, **options: ({"coherence": [0.5, 0.7], "diversity": [math.nan, math.nan]}, "metric:fake")
    monkeypatch.setitem(runners.RUNNERS, "holistic", fake)
    ids = np.array([tokenizer("Hi there")["input_ids"]] * 2)

    class Prediction:
        predictions, label_ids = ids, ids

    score = compute_metrics(tokenizer, metrics=["holistic"], contexts=[["a"], ["b"]])
    with pytest.warns(UserWarning, match="holistic diversity: no item has a value"):
        out = score(Prediction())
    assert out == {"skipped_rows": 0.0, "holistic_coherence": pytest.approx(0.6, rel=1e-12),
                   "holistic_coherence_unflagged": pytest.approx(0.6, rel=1e-12), "holistic_flagged": 0.0}
