"""dialeval.core.nli (label order from the config, batching, validation, offline errors), the NLI corpus
reader and training/nli.py in its tiny mode, on a tiny random BERT built here."""

import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))

import nli as train_nli  # noqa: E402  (training/nli.py)

from dialeval.corpora import NLI_LABELS, NLI_SOURCES, nli_pairs  # noqa: E402
from dialeval.models import ModelNotFoundError  # noqa: E402
from dialeval.core.nli import NLIScorer, contradiction_index  # noqa: E402

WORDS = (
    "a the man woman dog cat is are not playing sleeping running in on park house outside inside "
    "two people some child children sitting standing eating food , . ! ? i you he she it like "
    "likes love hate do don ' t have has no yes red blue"
).split()
UNUSUAL = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
PREMISES = [
    "a man is playing in the park .", "two children are sitting inside the house", "i like dogs",
    "the cat is sleeping", "some people are eating food outside !", "she has a red dog",
    "he is not running", "you love the blue house", "a woman is standing", "it is a dog ?",
]
HYPOTHESES = [
    "a man is sleeping .", "children are outside", "i hate dogs", "the cat is running in the house",
    "people eat", "she has no dog", "he is running in the park", "you do not like the house",
    "a woman is sitting", "yes",
]


def tiny_bert(path: Path, id2label: dict[int, str] | None = UNUSUAL, classifier: bool = True, seed: int = 0) -> Path:
    """A seeded random 2-layer BERT (with a WordPiece vocabulary written here) saved to ``path``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    letters = sorted(set("".join(WORDS)) | set("abcdefghijklmnopqrstuvwxyz0123456789"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(WORDS) | set(letters)),
             *(f"##{c}" for c in letters)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(str(path / "vocab.txt"))  # positional: `vocab_file` in v4, `vocab` in v5
    assert tokenizer.tokenize("A dog, zebra!") == ["a", "dog", ",", "z", "##e", "##b", "##r", "##a", "!"]
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, initializer_range=0.5,
        **({"id2label": id2label, "label2id": {v: k for k, v in id2label.items()}} if id2label else {}),
    )
    torch.manual_seed(seed)
    model = (BertForSequenceClassification if classifier else BertModel)(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("nli") / "tiny")


@pytest.fixture(scope="module")
def scorer(tiny_dir):
    return NLIScorer(str(tiny_dir), device="cpu", batch_size=8)


def test_contradiction_label_is_read_from_config(scorer):
    assert scorer.labels == ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"] and scorer.contradiction == 0
    name, weights = scorer.model_name.split("@")  # the signature names the exact weights
    assert name.endswith("tiny") and len(weights) == 12
    assert scorer.tokenizer.tokenize("A man") == ["a", "man"]  # the saved vocabulary came back
    probs = scorer.probs(PREMISES, HYPOTHESES)
    contra = scorer.contradiction_probs(PREMISES, HYPOTHESES)
    assert contra == pytest.approx([p["CONTRADICTION"] for p in probs], abs=1e-12)
    assert all(sum(p.values()) == pytest.approx(1.0, abs=1e-6) for p in probs)
    assert max(contra) - min(contra) > 1e-3  # the random model does tell pairs apart
    import torch

    with torch.no_grad():  # output 0 of the raw model, pair by pair
        direct = [
            torch.softmax(scorer.model(**scorer.tokenizer(p, h, return_tensors="pt")).logits[0], -1)[0].item()
            for p, h in zip(PREMISES, HYPOTHESES)
        ]
    assert contra == pytest.approx(direct, abs=1e-5)
    assert contradiction_index({0: "entailment", 1: "neutral", 2: "contradiction"}) == 2


def test_batch_size_and_order_invariance(tiny_dir, scorer):
    one = NLIScorer(str(tiny_dir), device="cpu", batch_size=1)
    eight = scorer.contradiction_probs(PREMISES, HYPOTHESES)
    assert one.contradiction_probs(PREMISES, HYPOTHESES) == pytest.approx(eight, abs=1e-5)
    alone = [scorer.contradiction_probs([p], [h])[0] for p, h in zip(PREMISES, HYPOTHESES)]
    assert alone == pytest.approx(eight, abs=1e-5)  # input order kept despite length sorting
    long = " ".join(["the dog is playing in the park"] * 40)  # 280 tokens: cut to the 128 positions
    assert scorer.max_length == 128 and len(scorer.contradiction_probs([long], [long])) == 1


@pytest.mark.parametrize("premises, hypotheses, message", [
    (PREMISES, HYPOTHESES[:3], "mismatched lengths"),
    ([], [], "premises is empty"),
    (PREMISES[:1], [3], r"hypotheses\[0\] must be a string"),
    ("a man", "a woman", "premises must be a list"),
    (["a man", ""], ["x", "y"], r"premises\[1\] is an empty string"),
])
def test_bad_inputs_raise(scorer, premises, hypotheses, message):
    with pytest.raises(ValueError, match=message):
        scorer.contradiction_probs(premises, hypotheses)


def test_model_without_contradiction_label(tmp_path):
    tiny_bert(tmp_path / "m", id2label={0: "POSITIVE", 1: "NEGATIVE", 2: "OTHER"})
    with pytest.raises(ValueError, match="POSITIVE"):
        NLIScorer(str(tmp_path / "m"))


def test_missing_model_offline_fails_fast(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    start = time.time()
    with pytest.raises(ModelNotFoundError, match="training/nli.py"):
        NLIScorer("roberta-large-mnli")
    with pytest.raises(ModelNotFoundError):
        NLIScorer("some-org/not-an-nli-model")
    assert time.time() - start < 5


def test_nli_pairs_labels_and_sources():
    pairs = nli_pairs()
    assert {p.label for p in pairs} == set(NLI_LABELS)
    counts = {(s, label): 0 for s in NLI_SOURCES for label in NLI_LABELS}
    for p in pairs:
        counts[p.source, p.label] += 1
        assert p.premise and p.hypothesis and p.premise == " ".join(p.premise.split())
    assert all(n > 0 for n in counts.values()), counts
    with pytest.raises(ValueError, match="unknown NLI source"):
        nli_pairs(["rte"])


def test_heldout_split_is_fixed_and_by_premise():
    pairs = nli_pairs(["snli"])
    train, held = train_nli.split_heldout(pairs, 0.1)
    assert (train, held) == train_nli.split_heldout(pairs, 0.1)
    assert not {p.premise for p in train} & {p.premise for p in held}
    assert 0.08 < len(held) / len(pairs) < 0.12


def test_tiny_training_saves_a_loadable_classifier(tmp_path):
    base = tiny_bert(tmp_path / "base", id2label=None, classifier=False)
    out = train_nli.main([
        "--tiny", "--base", str(base), "--output", str(tmp_path / "out"), "--batch-size", "4",
        "--max-length", "32", "--threads", "1", "--device", "cpu", "--frozen-layers", "1",
    ])
    assert not (out / ".cache-layer1.pt").exists()  # the cache of layer outputs is removed at the end
    report = json.loads((out / "dialeval_training.json").read_text())
    assert report["step"] == 3 and len(report["losses"]) == 3 and report["steps_per_minute"] > 0
    assert report["train_pairs"] == {s: 8 for s in NLI_SOURCES}
    assert report["heldout"]["n"] == 4 * len(NLI_SOURCES) and 0 <= report["heldout"]["accuracy"] <= 1
    assert set(report["heldout"]["per_source"]) == set(NLI_SOURCES)

    scorer = NLIScorer(str(out), device="cpu")
    assert scorer.labels == list(NLI_LABELS) and scorer.contradiction == 2
    assert len(scorer.contradiction_probs(PREMISES, HYPOTHESES)) == len(PREMISES)
    # a LoRA adapter + head (the default), its base and labels recorded; over another base it fails
    from dialeval import hub

    assert (out / "adapter_config.json").is_file() and not (out / "config.json").exists()
    assert hub.read_base(out).id2label == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    tiny_bert(base, id2label=None, classifier=False, seed=1)
    with pytest.raises(hub.BaseMismatchError, match=hub.read_base(out).tensor_hash):
        NLIScorer(str(out), device="cpu")


def test_cached_lower_layers_give_the_full_models_logits(tmp_path):
    """--frozen-layers K: LoRA only above layer K, whose cached outputs give the full forward's logits."""
    import argparse

    import torch
    from transformers import AutoTokenizer

    from dialeval.core.nli import classifier_from_encoder, encode_pairs

    base = tiny_bert(tmp_path / "base", id2label=None, classifier=False)
    model = classifier_from_encoder(base, dict(enumerate(NLI_LABELS)))
    args = argparse.Namespace(frozen_layers=1, lora_r=4, lora_alpha=8, lora_dropout=0.0)
    model = train_nli.wrap_lora_top(model, args).eval()
    with torch.no_grad():  # a non-zero adapter, so the check covers the LoRA path too
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    lora = sorted({n.split(".lora_")[0] for n, _ in model.named_parameters() if "lora_A" in n})
    assert lora and all(".layer.1." in n or "pooler" in n for n in lora)  # nothing in layer 0
    assert any("pooler" in n for n in lora)
    tokenizer = AutoTokenizer.from_pretrained(base)
    features = encode_pairs(tokenizer, PREMISES, HYPOTHESES, 32)
    cached = train_nli.cache_hidden(model, tokenizer, features, 1, batch_size=3)
    with torch.no_grad():
        full = model(**tokenizer.pad(features, return_tensors="pt")).logits
        short = train_nli.top_logits(model, cached, 1)
    assert torch.allclose(full, short, atol=2e-2)  # float16 cache
    assert cached[0].dtype == torch.float16 and cached[0].shape == (len(features[0]["input_ids"]), 32)
    with pytest.raises(ValueError, match="frozen-layers"):
        train_nli.wrap_lora_top(classifier_from_encoder(base, dict(enumerate(NLI_LABELS))),
                                argparse.Namespace(frozen_layers=2, lora_r=4, lora_alpha=8, lora_dropout=0.0))


def test_bundled_nli_labels_an_obvious_contradiction():
    """The bundled dialeval/minilm-nli (loads offline, no options): pinned probabilities."""
    scorer = NLIScorer("minilm-nli", device="cpu")
    assert scorer.model_name == "minilm-nli@666d0802b62a" and scorer.labels == list(NLI_LABELS)
    premises = ["A woman is sleeping.", "I have two dogs and a cat.", "The shop opens at nine."]
    hypotheses = ["The woman is running in a race.", "I do not have any pets.", "The shop opens at nine."]
    probs = scorer.probs(premises, hypotheses)
    assert [max(p, key=p.get) for p in probs] == ["contradiction", "contradiction", "entailment"]
    assert [p["contradiction"] for p in probs] == pytest.approx([0.96740, 0.75332, 0.02217], abs=2e-4)
    assert probs[2]["entailment"] == pytest.approx(0.96243, abs=2e-4)
