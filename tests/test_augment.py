"""Query augmentation (dialeval.holistic.augment): WordNet substitution and conditional generation."""

import argparse
import importlib.util
import json

import pytest

from dialeval.core import pos
from dialeval.core.pos import pos_tag, token_spans
from dialeval.holistic import augment
from dialeval.holistic.augment import WS_POS, augment_file, ctg_paraphrases, ws_paper_group, ws_paraphrases
from dialeval.core.resources import load_wordnet
from tiny_lm import tiny_gpt2, tiny_tokenizer

TEXT = "The old man quickly drank cold water and wrote a long letter to his good friend ."
CLASSES = {"verb": {"v"}, "noun": {"n"}, "adj_adv": {"a", "r"}, "all": {"v", "n", "a", "r"}}
HISTORY = ["Hi! How are you doing today?", "I'm doing well, thanks for asking."]


def wordnet_pos(tag):
    if tag.startswith("VB"):
        return "v"
    if tag in ("NN", "NNS"):
        return "n"
    return {"JJ": "a", "RB": "r"}.get(tag[:2])


def changes(original, paraphrase):
    """``(original token, its tag, new token)`` at each position where the two texts differ."""
    tagged = pos_tag(original)
    new = [paraphrase[a:b] for a, b in token_spans(paraphrase)]
    assert len(new) == len(tagged), "a substitute must stay one token"
    return [(tok, tag, n) for (tok, tag), n in zip(tagged, new) if n != tok]


def test_tagger_works_offline():
    tags = dict(pos_tag("i can watch tv now ."))
    assert (tags["i"], tags["watch"], tags["tv"], tags["now"]) == ("PRP", "VB", "NN", "RB")
    assert [t for t, _ in pos_tag("I don't know.")] == ["I", "do", "n't", "know", "."]


@pytest.mark.parametrize("pos", WS_POS)
def test_ws_changes_only_that_pos_and_only_to_wordnet_synonyms(pos):
    wordnet = load_wordnet()
    paraphrases = ws_paraphrases(TEXT, pos=pos, k=5, seed=1)
    assert len(paraphrases) == 5 and len(set(paraphrases)) == 5 and TEXT not in paraphrases
    changed_classes = set()
    for p in paraphrases:
        diff = changes(TEXT, p)
        assert diff, p
        for token, tag, new in diff:
            wn_pos = wordnet_pos(tag)
            assert wn_pos in CLASSES[pos], (pos, token, tag)
            heads = {s.lemmas()[0].name().lower() for s in wordnet.synsets(token.lower(), wn_pos)}
            assert new.lower() in heads, (token, new)
            changed_classes.add(wn_pos)
    if pos == "all":
        assert len(changed_classes) >= 3


def test_ws_same_word_same_substitute_and_case_kept():
    text = "Drink more water . I drink water , you drink tea ."
    for p in ws_paraphrases(text, pos="verb", k=3, seed=0):
        first, *others = [n for token, _, n in changes(text, p)]
        assert first[0].isupper() and {first.lower()} == {n.lower() for n in others} and len(others) == 2


def test_ws_paper_group_is_one_draw():
    group = ws_paper_group(TEXT, seed=3)
    assert len(group) == 5 and group[0] == TEXT
    verb, noun, adj_adv, every = (dict((t, n) for t, _, n in changes(TEXT, p)) for p in group[1:])
    assert every == {**verb, **noun, **adj_adv}
    assert ws_paraphrases(TEXT, "verb", k=1, seed=3) == [group[1]] or group[1] == TEXT


def test_ws_deterministic_given_seed():
    assert ws_paraphrases(TEXT, seed=7) == ws_paraphrases(TEXT, seed=7)
    assert ws_paraphrases(TEXT, seed=7) != ws_paraphrases(TEXT, seed=8)
    assert ws_paper_group(TEXT, seed=7) == ws_paper_group(TEXT, seed=7)


def test_ws_rate_and_too_few_synonyms():
    full, sparse = ws_paraphrases(TEXT, k=1, seed=0)[0], ws_paraphrases(TEXT, k=1, seed=0, rate=0.2)[0]
    assert len(changes(TEXT, sparse)) < len(changes(TEXT, full))
    assert ws_paraphrases("hello !", k=3) == []
    assert 1 <= len(ws_paraphrases("i drank .", pos="verb", k=50)) < 50


@pytest.mark.parametrize("kwargs, match", [
    (dict(text=TEXT, pos="adverb"), "pos must be one of .*'verb', 'noun', 'adj_adv', 'all'"),
    (dict(text=""), "non-empty"),
    (dict(text="   "), "non-empty"),
    (dict(text=TEXT, k=0), "k must be"),
    (dict(text=TEXT, rate=0.0), "rate"),
    (dict(text=TEXT, rate=1.5), "rate"),
])
def test_ws_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ws_paraphrases(**kwargs)


def test_missing_tagger_names_the_package(monkeypatch):
    pos.load_tagger.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    try:
        with pytest.raises(FileNotFoundError, match="pip install --no-deps textblob-aptagger"):
            pos_tag("hello")
    finally:
        pos.load_tagger.cache_clear()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_gpt2")
    model, tokenizer = tiny_gpt2(path)
    return model, tokenizer, path


def test_ctg_returns_k_beams(tiny):
    model, tokenizer, _ = tiny
    beams = ctg_paraphrases(HISTORY, model, tokenizer, k=3, max_new_tokens=6)
    assert len(beams) == 3 and all(isinstance(b, str) for b in beams)
    assert len(ctg_paraphrases(HISTORY * 30, model, tokenizer, k=2, max_new_tokens=6)) == 2  # > window


def test_ctg_seq2seq():
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    tokenizer = tiny_tokenizer()
    eos = tokenizer.eos_token_id
    config = BartConfig(
        vocab_size=len(tokenizer), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        pad_token_id=eos, bos_token_id=eos, eos_token_id=eos, decoder_start_token_id=eos,
    )
    torch.manual_seed(0)
    model = BartForConditionalGeneration(config).eval()
    assert len(ctg_paraphrases(HISTORY * 10, model, tokenizer, k=2, max_new_tokens=4)) == 2


def test_ctg_bad_input(tiny):
    model, tokenizer, _ = tiny
    with pytest.raises(ValueError, match="history is empty"):
        ctg_paraphrases([], model, tokenizer)
    with pytest.raises(ValueError, match="empty string"):
        ctg_paraphrases(["hi", " "], model, tokenizer)
    with pytest.raises(ValueError, match="tokenizer"):
        ctg_paraphrases(HISTORY, model)
    with pytest.raises(ValueError, match="no room"):
        ctg_paraphrases(HISTORY, model, tokenizer, max_new_tokens=500)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def cli(argv):
    parser = argparse.ArgumentParser()
    augment.add_arguments(parser)
    return augment.run(parser.parse_args(argv))


def test_augment_file_ws_resumes(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rows = [{"id": "a", "context": ["hello .", TEXT]}, {"query": "i drank cold water ."}, {"query": "i ate ."}]
    write_jsonl(src, rows)
    args = ["--method", "ws", "--input", str(src), "--output", str(out), "--k", "2", "--pos", "noun"]
    assert cli(args) == 0
    full = out.read_text().splitlines()
    lines = [json.loads(line) for line in full]
    assert [{k: v for k, v in line.items() if k != "paraphrases"} for line in lines] == rows
    assert lines[0]["paraphrases"] == [["hello ."] + [p] for p in ws_paraphrases(TEXT, "noun", k=2)]
    assert lines[1]["paraphrases"] == ws_paraphrases("i drank cold water .", "noun", k=2)
    out.write_text(full[0] + "\n" + full[1][:10])  # an interrupted run
    assert cli(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"output": str(out), "augmented": 2, "skipped": 1}
    assert out.read_text().splitlines() == full


def test_augment_file_paper_group_and_errors(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl(src, [{"query": TEXT}])
    assert augment_file(src, out, pos="paper", seed=2, progress=False) == 1
    assert read_jsonl(out)[0]["paraphrases"] == ws_paper_group(TEXT, seed=2)
    with pytest.raises(ValueError, match="method"):
        augment_file(src, tmp_path / "x.jsonl", method="bt")
    with pytest.raises(ValueError, match="pos must be one of"):
        augment_file(src, tmp_path / "x.jsonl", pos="adverb")
    write_jsonl(src, [{"query": TEXT}, {"response": "no query"}])
    with pytest.raises(ValueError, match=r"in.jsonl:2: needs a 'context'"):
        augment_file(src, tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_augment_file_ctg(tiny, tmp_path):
    model, tokenizer, path = tiny
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl(src, [{"context": HISTORY + ["Good to hear."]}])
    # the model is loaded from its path here
    assert augment_file(src, out, method="ctg", k=2, model=str(path), max_new_tokens=5, progress=False) == 1
    beams = ctg_paraphrases(HISTORY, model, tokenizer, k=2, max_new_tokens=5)
    assert read_jsonl(out)[0]["paraphrases"] == [HISTORY + [b] for b in beams]
    write_jsonl(src, [{"context": HISTORY}, {"query": "just one turn"}])
    with pytest.raises(ValueError, match=r"in.jsonl:2: CTG .* at least 2 turns"):
        augment_file(src, tmp_path / "x.jsonl", method="ctg", model=str(path))
