"""The shared tokenizer, input validation and model resolution."""

import time

import pytest

from dialeval.models import ModelNotFoundError, resolve_model
from dialeval.core.results import make_signature
from dialeval.core.text import check_reference_lists, check_texts, tokenize


def test_tokenize_lowercases_and_splits_punctuation():
    assert tokenize("I'm fine, thanks!") == ["i'm", "fine", ",", "thanks", "!"]
    assert tokenize("i 'm fine .") == ["i", "'m", "fine", "."]
    assert tokenize("   ") == []


@pytest.mark.parametrize(
    "items, message",
    [
        ("a string", "must be a list"),
        ([], "is empty"),
        (["ok", None], r"predictions\[1\] is None"),
        (["ok", 3], r"predictions\[1\] must be a string"),
        (["ok", "  "], r"predictions\[1\] is an empty string"),
    ],
)
def test_check_texts_names_the_bad_item(items, message):
    with pytest.raises(ValueError, match=message):
        check_texts(items, "predictions")


def test_check_reference_lists():
    assert check_reference_lists(["a", ["b", "c"]], 2) == [["a"], ["b", "c"]]
    with pytest.raises(ValueError, match="^references has 1 items but there are 2 predictions$"):
        check_reference_lists(["a"], 2)
    with pytest.raises(ValueError, match="^references has 1 items but there are 2 responses$"):
        check_reference_lists(["a"], 2, scored="responses")
    with pytest.raises(ValueError, match=r"references\[1\] is an empty list"):
        check_reference_lists(["a", []], 2)
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] must be a string"):
        check_reference_lists([["a", 1]], 1)


def test_signature_lists_fields_and_version():
    from dialeval import __version__

    sig = make_signature("fed", model="m", mode="reference", skip=None, fp16=False)
    assert sig == f"metric:fed|model:m|mode:reference|fp16:no|version:{__version__}"


def test_resolve_local_dir_and_models_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    (tmp_path / "org--model").mkdir()
    (tmp_path / "org--model" / "config.json").write_text("{}")
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model(str(tmp_path)) == str(tmp_path)
    assert resolve_model("org/model") == str(tmp_path / "org--model")
    (tmp_path / "org--model" / "config.json").unlink()  # a folder without a model is an error, not a model
    with pytest.raises(ModelNotFoundError, match="org--model is a folder but not a model"):
        resolve_model("org/model")


def test_missing_model_offline_fails_fast_with_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(ModelNotFoundError, match="training/finetune_lm.py"):
        resolve_model("microsoft/DialoGPT-large", what="FED dialogue model")
    assert time.perf_counter() - start < 5
    with pytest.raises(ModelNotFoundError, match="no directory"):
        resolve_model("./does/not/exist")
