"""USL-H (dialeval.usl): the combination and L's normalisation by hand, the perturbations of U with
scripted random draws, input checks, the degenerate policy and a tiny training run end to end."""

from __future__ import annotations

import json
import random

import pytest

from dialeval.usl import perturb
from dialeval.usl.formula import normalise_nll, quartiles, usl_h
from float_noise import ROUNDING, SUM


class Scripted(random.Random):
    """A random source that returns the given draws of ``random()`` in order."""

    def __init__(self, draws):
        super().__init__(0)
        self.draws = list(draws)

    def random(self):
        return self.draws.pop(0)


def test_usl_h_and_the_authors_hs_by_hand():
    # H: 0.33*0.8 + 0.33*0.8*0.5 + 0.34*0.8*0.5*0.25 = 0.264 + 0.132 + 0.034
    assert usl_h(0.8, 0.5, 0.25, "H") == pytest.approx(0.43, rel=1e-12)
    # HS, the default (the authors' scorer, what Yeh et al. measured): 0.33*0.8 + 0.33*0.5 + 0.34*0.5*0.25
    # = 0.264 + 0.165 + 0.0425
    assert usl_h(0.8, 0.5, 0.25, "HS") == pytest.approx(0.4715, rel=1e-12)
    assert usl_h(0.8, 0.5, 0.25) == usl_h(0.8, 0.5, 0.25, "HS")
    # the hierarchy: an unintelligible response (U = 0) scores 0 under H whatever S and L say; HS still counts S
    assert usl_h(0.0, 1.0, 1.0, "H") == 0.0 and usl_h(1.0, 1.0, 1.0, "H") == pytest.approx(1.0, rel=1e-12)
    assert usl_h(0.0, 1.0, 1.0, "HS") == pytest.approx(0.67, rel=1e-12)
    with pytest.raises(ValueError, match="hierarchy"):
        usl_h(0.5, 0.5, 0.5, "A")


def test_l_is_the_nll_clipped_to_its_quartiles_and_scaled():
    assert normalise_nll(30.0, 20.0, 60.0) == pytest.approx(0.25, rel=1e-12)
    assert normalise_nll(5.0, 20.0, 60.0) == 0.0 and normalise_nll(99.0, 20.0, 60.0) == 1.0
    with pytest.raises(ValueError, match="low < high"):
        normalise_nll(1.0, 3.0, 3.0)
    # numpy's linear interpolation: positions 0.25 * 4 = 1 and 0.75 * 4 = 3 of the sorted values
    assert quartiles([5.0, 1.0, 2.0, 4.0, 3.0]) == (2.0, 4.0)


def test_word_drop_uses_one_threshold_and_keeps_the_order():
    # threshold 0.6 / 2 = 0.3; draws 0.1 (drop a), 0.5 (keep b), 0.2 (drop c), 0.9 (keep d)
    assert perturb.drop(list("abcd"), Scripted([0.6, 0.1, 0.5, 0.2, 0.9])) == ["b", "d"]
    # all kept (threshold 0.1), then all dropped (0.45), are both redrawn; then 0.4: keep a, drop b
    draws = [0.2, 0.5, 0.5, 0.9, 0.0, 0.0, 0.8, 0.9, 0.1]
    assert perturb.drop(list("ab"), Scripted(draws)) == ["a"]
    with pytest.raises(ValueError, match="at least 2"):
        perturb.drop(["a"], Scripted([]))


def test_word_repeat_appends_the_last_words_with_the_authors_probabilities():
    # after a: 0.5 (no); after b: 0.05 < 0.1, width draw 0.8 -> 2 of (0.75, 1), times draw 0.9 -> 2 of
    # (0.8, 0.95, 1): "a b" twice more; after c: 0.5 (no)
    assert perturb.repeat(list("abc"), Scripted([0.5, 0.05, 0.8, 0.9, 0.5])) == list("abababc")
    # nothing repeated the first time: redrawn
    assert perturb.repeat(["x"], Scripted([0.5, 0.0, 0.1, 0.1])) == ["x", "x"]


def test_reorder_is_a_permutation_and_negatives_need_three_tokens():
    rng = random.Random(3)
    tokens = "I really do not like the burger at all".split()
    assert sorted(perturb.reorder(tokens, rng)) == sorted(tokens)
    assert perturb.negative("Hi there", rng) is None  # 2 tokens: no negative
    # kinds by the cumulative (0.3, 0.6, 1.0): draws 0.29 / 0.59 / 0.61
    assert perturb.NEGATIVE_KINDS[perturb.pick(perturb.NEGATIVE_CUMULATIVE, Scripted([0.29]))] == "reorder"
    assert perturb.NEGATIVE_KINDS[perturb.pick(perturb.NEGATIVE_CUMULATIVE, Scripted([0.59]))] == "drop"
    assert perturb.NEGATIVE_KINDS[perturb.pick(perturb.NEGATIVE_CUMULATIVE, Scripted([0.61]))] == "repeat"


def test_positive_corruptions_keep_the_response_valid():
    tokens = perturb.tokens_of("I don't think the cat's hungry .")
    assert tokens == ["I", "do", "n't", "think", "the", "cat", "'s", "hungry", "."]
    assert perturb.no_final_punctuation(tokens, None) == tokens[:-1]
    assert perturb.no_final_punctuation(["hi"], None) == ["hi"]
    assert perturb.no_articles(tokens, None) == ["I", "do", "think", "cat", "hungry", "."]
    assert perturb.simplify(perturb.tokens_of("The train leaves from the station at noon"), None) == [
        "train", "leaves", "from", "station", "at", "noon"]
    # draw 0.15 -> "simplify" (0.1, 0.2, 0.3, 1); a simplification that leaves nothing keeps the text
    assert perturb.positive("Hi !", Scripted([0.15])) == ("unchanged", "Hi !")
    assert perturb.positive("Okay .", Scripted([0.05])) == ("no_final_punctuation", "Okay")
    assert perturb.positive("Okay .", Scripted([0.5])) == ("unchanged", "Okay .")


def test_training_examples_pair_each_response_with_its_negative():
    from dialeval.usl.training import responses_of, s_examples, u_examples

    dialogues = [["a b", "c d e", "f"], ["g h i j"]]
    assert responses_of(dialogues) == [(["a b"], "c d e"), (["a b", "c d e"], "f")]
    texts, labels, _ = u_examples(["one two three", "hi"], random.Random(0))
    assert labels == [1, 0, 1]  # "hi" has no negative
    pairs = [(["q"], "r"), (["p"], "s")]
    contexts, responses, labels = s_examples(pairs, random.Random(3))
    draws = random.Random(3)
    assert contexts == [["q"], ["q"], ["p"], ["p"]] and labels == [1, 0, 1, 0]
    # each negative is the response of a uniformly drawn pair, one draw per pair
    assert responses == ["r", pairs[draws.randrange(2)][1], "s", pairs[draws.randrange(2)][1]]


def test_distinct_rows_index_back_to_the_rows():
    from dialeval.usl.training import distinct_rows

    rows = ["b", "a", "b", ["x", "y"], ["x", "y"], "c"]
    table, index = distinct_rows(rows)
    assert table == ["b", "a", ["x", "y"], "c"] and index.tolist() == [0, 1, 0, 2, 2, 3]


def test_s_dual_input_by_hand():
    import numpy as np

    from dialeval.usl.features import dual, s_dim

    c, r = np.array([[1.0, -2.0]], dtype=np.float32), np.array([[3.0, 0.5]], dtype=np.float32)
    assert dual(c, r).tolist() == [[1.0, -2.0, 3.0, 0.5, 3.0, -1.0, 2.0, 2.5]]  # [c; r; c*r; |c-r|]
    assert s_dim(384, "dual") == 1536 and s_dim(384, "pair") == 384
    with pytest.raises(ValueError, match="s_input"):
        s_dim(384, "cross")


@pytest.mark.slow
def test_length_batches_give_each_text_its_unbatched_features():
    """The encoder's length batches (padding inside a batch) against one text at a time, in input order."""
    import numpy as np

    from dialeval.usl.features import FrozenEncoder

    texts = ["Sure.", "I would love to, but I have to work late on Friday night, sorry.", "No way!",
             "What time does the train leave for London tomorrow?"]
    contexts = [["Hi there."], ["Can you come to the party on Friday?", "It starts at eight."]]
    batched, alone = FrozenEncoder(batch_size=8), FrozenEncoder(batch_size=1)
    assert np.allclose(batched.single(texts, progress=False), alone.single(texts, progress=False), rtol=SUM, atol=SUM)
    assert np.allclose(batched.contexts(contexts, progress=False), alone.contexts(contexts, progress=False),
                       rtol=SUM, atol=SUM)
    assert batched.single([], progress=False).shape == (0, batched.dim)


def test_a_repeated_text_is_encoded_once_and_gets_the_same_features():
    """FrozenEncoder encodes each distinct text (or context, or pair) once: a reply repeated in a set
    gets bit-identical features wherever it stands, not features rounded otherwise in another batch
    (~1e-6, which reorders near-tied U scores between CPUs and precisions: precision-grid.md)."""
    import numpy as np

    from dialeval.usl.features import FrozenEncoder

    encoder = FrozenEncoder(batch_size=2)
    encoded = []
    forward = encoder._forward

    def counting(first, second, *args, **kwargs):
        encoded.append(len(first))
        return forward(first, second, *args, **kwargs)

    encoder._forward = counting
    texts = ["I'm sorry to hear that.", "What time does the train leave?", "I'm sorry to hear that.", "Ok.",
             "I'm sorry to hear that."]
    found = encoder.single(texts, progress=False)
    assert encoded == [3] and (found[0] == found[2]).all() and (found[0] == found[4]).all()
    assert np.array_equal(found[[0, 1, 3]], encoder.single([texts[0], texts[1], texts[3]], progress=False))
    contexts = [["Hi."], ["Hi.", "Hello!"], ["Hi."]]
    assert (encoder.contexts(contexts, progress=False)[0] == encoder.contexts(contexts, progress=False)[2]).all()
    encoded.clear()
    pairs = encoder.pairs([["Hi."], ["Hi."], ["Hey."]], ["Hello!", "Hello!", "Hello!"], progress=False)
    assert encoded == [2] and (pairs[0] == pairs[1]).all() and not (pairs[0] == pairs[2]).all()


def test_the_top_layers_alone_continue_the_encoder_from_its_hidden_state(tmp_path):
    """dialeval.usl.tuned.top_model on a tiny random BERT: its top k layers fed the hidden state k
    below the last give the last hidden state (padding masked), whatever k; k outside 1..layers
    and a folder naming u_top without its adapter are refused."""
    import torch
    from transformers import BertConfig, BertModel

    from dialeval.usl.tuned import load_tuned_top, top_model

    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                                 intermediate_size=32)).eval()
    ids, mask = torch.tensor([[2, 7, 9, 4, 0], [2, 5, 3, 0, 0]]), torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    with torch.no_grad():
        found = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        for top in (1, 3):
            upper = top_model(model, top).eval()
            again = upper(inputs_embeds=found.hidden_states[-1 - top], attention_mask=mask).last_hidden_state
            assert torch.allclose(again[mask.bool()], found.last_hidden_state[mask.bool()], rtol=SUM, atol=SUM)
        wrong = top_model(model, 1)(inputs_embeds=found.hidden_states[-3], attention_mask=mask).last_hidden_state
        assert not torch.allclose(wrong, found.last_hidden_state, atol=1e-2)  # one state too low: another output
    for top in (0, 4):
        with pytest.raises(ValueError, match="between 1 and the encoder's 3 layers"):
            top_model(model, top)
    with pytest.raises(FileNotFoundError, match="u_top=1 but there is no u_encoder/ adapter"):
        load_tuned_top(model, tmp_path, 1)


@pytest.mark.slow
def test_cached_context_states_continue_through_the_top_to_the_context_features(tmp_path, monkeypatch):
    """dialeval.usl.u_tuning.cached_states of contexts (cut as S reads them, longer than a cut response)
    pads them to the longest; the top layer over them gives the encoder's own context features, up to
    the float16 the states are kept in (2^-11 relative, through one layer: within 4e-3), and a tuned
    top read through ``contexts(tuned=...)`` that learned nothing gives them to float32 noise."""
    import numpy as np
    import torch

    from dialeval.usl import u_tuning
    from dialeval.usl.features import RESPONSE_TOKENS, FrozenEncoder
    from dialeval.usl.tuned import top_model

    monkeypatch.setattr(u_tuning, "cache_dir", lambda: tmp_path)
    encoder = FrozenEncoder(batch_size=2)
    long_turn = "Can you come to the party at my place on Friday night? " * 8
    contexts = [["Hi there."], ["Hello!", long_turn], ["Ok.", "Sure, see you."]]
    cut = [encoder.cut_context(c) for c in contexts]
    assert cut[1].startswith("you come") and cut[1].endswith("friday night?")  # the last tokens kept (uncased)
    states, lengths = u_tuning.cached_states(encoder, cut, 1)
    assert lengths.max() > RESPONSE_TOKENS + 2 and states.shape[1] == lengths.max()
    upper = top_model(encoder.model, 1).eval()
    with torch.no_grad():
        pooled = u_tuning.pooled_states(upper, states, lengths, np.arange(3)).numpy()
    frozen, tuned = encoder.contexts(contexts, progress=False, tuned=(upper, 1))
    assert np.allclose(pooled, frozen, rtol=4e-3, atol=4e-3)
    assert np.allclose(tuned, frozen, rtol=SUM, atol=SUM)
    assert not np.allclose(pooled[[1, 0, 2]], frozen, rtol=4e-3, atol=4e-3)  # the rows stay in order


def test_u_tuning_resumed_after_an_epoch_ends_where_one_uninterrupted_run_does(tmp_path):
    """dialeval.usl.u_tuning.run_epochs on a tiny random BERT's top layer with LoRA: two epochs in one run,
    and one epoch then the same call for two (a fresh learner, as a new process builds it), give the same
    adapter, head and validation curve (the batch order, optimiser moments and dropout's random state
    restored); past its deadline a run stops between epochs, naming how to go on."""
    import numpy as np
    import torch
    from peft import get_peft_model
    from transformers import BertConfig, BertModel

    from dialeval.core.chunk_cache import ChunksPaused
    from dialeval.usl.heads import head as fresh_head
    from dialeval.usl.tuned import lora_config, top_model
    from dialeval.usl.u_tuning import pooled_states, run_epochs

    rng = np.random.default_rng(0)
    states = rng.normal(size=(24, 6, 16)).astype(np.float16)
    lengths = rng.integers(2, 7, size=24)
    labels = [int(v) for v in rng.integers(0, 2, size=24)]
    batches = [list(range(i, i + 4)) for i in range(0, 24, 4)]

    def run(folder, epochs, deadline=None):
        torch.manual_seed(0)
        model = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=32))
        learner = get_peft_model(top_model(model, 1), lora_config(4))
        head = fresh_head(32, 0)

        def validate():
            with torch.no_grad():
                return float(head(pooled_states(learner, states, lengths, np.arange(24))).argmax(-1).float().mean())

        curve = run_epochs(learner, head, lambda idx: pooled_states(learner, states, lengths, idx), labels, batches,
                           validate, epochs=epochs, lr=1e-2, folder=folder, deadline=deadline)
        curve = [accuracy for accuracy, _ in curve]  # (accuracy, wall minutes) per epoch
        weights = {k: v.clone() for k, v in learner.named_parameters() if v.requires_grad}
        return curve, weights, {k: v.clone() for k, v in head.state_dict().items()}

    whole = run(tmp_path / "whole", 2)
    run(tmp_path / "halves", 1)
    resumed = run(tmp_path / "halves", 2)
    assert resumed[0] == whole[0]
    for found, expected in ((resumed[1], whole[1]), (resumed[2], whole[2])):
        assert found.keys() == expected.keys()
        assert all(torch.equal(found[k], expected[k]) for k in expected)
    once = run(None, 1)[1]  # an epoch moves the adapter: the comparison above can tell epochs apart
    assert any(not torch.equal(once[k], whole[1][k]) for k in once)
    with pytest.raises(ChunksPaused, match="time is up after epoch 2 of 3"):
        run(tmp_path / "halves", 3, deadline=0.0)


def test_u_tuning_is_refused_off_the_cpu(capsys):
    from training_scripts import script

    with pytest.raises(SystemExit):
        script("usl").main(["--tiny", "--device", "cuda"])
    assert "runs on the CPU only" in capsys.readouterr().err


def test_inputs_are_checked_with_the_item_named():
    from dialeval.usl.scorer import check_inputs

    assert check_inputs(["Hi", ["a", "b"]], ["x", ""]) == ([["Hi"], ["a", "b"]], ["x", ""])
    with pytest.raises(ValueError, match="contexts has 1 items but there are 2"):
        check_inputs([["a"]], ["x", "y"])
    with pytest.raises(ValueError, match=r"contexts\[1\]"):
        check_inputs([["a"], [3]], ["x", "y"])
    with pytest.raises(ValueError, match="responses"):
        check_inputs([["a"]], [None])
    with pytest.raises(ValueError, match="contexts must be a list"):
        check_inputs("a", ["x"])


def test_a_missing_model_names_the_command_that_builds_it(tmp_path):
    from dialeval.usl.heads import resolve_folder

    with pytest.raises(FileNotFoundError, match="python training/usl.py"):
        resolve_folder(tmp_path / "nothing")


@pytest.mark.slow
def test_tiny_training_run_scores_and_floors_degenerate_replies(tmp_path, monkeypatch):
    from training_scripts import script
    from dialeval.usl.features import dual
    from dialeval.usl.heads import load_folder, valid_probability
    from dialeval.usl.scorer import USLScorer
    from dialeval.usl.tuned import load_tuned_top

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    out = script("usl").main(["--tiny", "--encoder", "minilm-l6", "--output", str(tmp_path / "model"), "--threads", "1"])
    report = json.loads((out / "dialeval_training.json").read_text())
    assert report["data"]["u_valid_texts"] > 30 and 0.0 <= report["u"]["accuracy"] <= 1.0
    # U reads its own LoRA-tuned top layer (the default --u-lora 16 --u-top 1; two epochs for --tiny), kept
    # at the first epoch of best validation accuracy; the frozen head's numbers stay beside it
    tuning = report["u"]["tuned"]
    assert len(tuning["curve"]) == 2 and tuning["epoch"] == tuning["curve"].index(max(tuning["curve"])) + 1
    assert 0.0 <= report["u"]["frozen_head"]["accuracy"] <= 1.0
    assert json.loads((out / "config.json").read_text())["u_top"] == 1
    # the folder's adapter is the kept epoch's, not the last one's (both are saved under the cache)
    from safetensors.torch import load_file

    epochs = sorted((tmp_path / "cache" / "usl").glob("u-tuning-*/epoch-*"))
    assert [p.name for p in epochs] == ["epoch-1", "epoch-2"]
    bundled = load_file(str(out / "u_encoder" / "adapter_model.safetensors"))
    for epoch_dir in epochs:
        saved = load_file(str(epoch_dir / "u_encoder" / "adapter_model.safetensors"))
        same = bundled.keys() == saved.keys() and all((bundled[k] == saved[k]).all() for k in saved)
        assert same == (epoch_dir.name == f"epoch-{tuning['epoch']}")
    low, high = report["l"]["quartiles"]
    assert 0 < low < high
    chunks = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "cache" / "usl").iterdir())
    # the distinct texts (U's and S's responses), S's contexts, the NLLs, the states under U's top layer,
    # U's tuning by epoch
    assert chunks[:3] == ["minilm-l6-contexts", "minilm-l6-states-top1", "minilm-l6-texts"]
    assert chunks[3].startswith("nll-dialeval_smollm2-dailydialog@") and chunks[4] == "u-tuning"
    assert report["data"]["encoded_texts"] < report["data"]["u_train_texts"] + report["data"]["u_valid_texts"] \
        + report["data"]["s_train_pairs"] + report["data"]["s_valid_pairs"]  # each distinct text once

    import torch

    from dialeval.usl.features import max_mean

    scorer = USLScorer(out)
    contexts = [["Do you like reading books?"], ["What time does the train leave?"], ["Can I help you?"]]
    responses = ["Yes, mostly novels. I read one every week.", "", "can I help you ?"]
    result = scorer.score(contexts, responses)
    assert result["flags"] == [[], ["empty"], ["echo"]]
    for name in ("usl", "usl_u", "usl_s", "usl_l"):
        assert result[f"{name}_scores"][1:] == [0.0, 0.0]
    u, s, l = (result[f"usl_{p}_scores"][0] for p in "usl")
    assert result["usl_scores"][0] == pytest.approx(usl_h(u, s, l, "HS"), abs=ROUNDING)
    # U is the head's probability over the tuned top layer's states of the frozen encoder's second-last
    # hidden state (the adapter merged in, as the folder stores it)
    heads, _ = load_folder(out)
    tuned = load_tuned_top(scorer.encoder.model, out, 1)
    batch = scorer.encoder.tokenizer(responses[:1], return_tensors="pt")
    with torch.no_grad():
        below = scorer.encoder.model(**batch, output_hidden_states=True).hidden_states[-2]
        states = tuned(inputs_embeds=below, attention_mask=batch["attention_mask"]).last_hidden_state
    assert u == pytest.approx(valid_probability(heads["u"], max_mean(states, batch["attention_mask"]).numpy())[0],
                              abs=SUM)
    # S is the head's probability over [c; r; c*r; |c-r|] of the context's and the response's frozen features
    single = scorer.encoder.single(responses[:1])
    assert s == pytest.approx(valid_probability(heads["s"], dual(scorer.encoder.contexts(contexts[:1]), single))[0],
                              abs=ROUNDING)
    # the NLL is clipped to the stored quartiles
    nll = scorer.likelihood.nll(responses[:1])[0]
    assert l == pytest.approx(min(max((nll - low) / (high - low), 0.0), 1.0), abs=1e-4)
    assert "hierarchy:HS" in result["signature"] and "enc:minilm-l6" in result["signature"]
    assert scorer.score(contexts[:1], responses[:1], "H")["usl_scores"][0] == pytest.approx(usl_h(u, s, l, "H"), abs=ROUNDING)

    # the adapter records the tuned layers' tensor hash: read over other layers (u_top 2) it is refused
    from peft import get_peft_model

    from dialeval.models.hub import BaseMismatchError
    from dialeval.usl.tuned import lora_config, save_tuned_top, top_model

    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "u_top": 2}))
    with pytest.raises(BaseMismatchError):
        USLScorer(out)
    # an adapter that changes nothing (lora_B starts at zero) on the top two layers: U is the same head over
    # the frozen features of the response alone, S and L unchanged
    save_tuned_top(out, get_peft_model(top_model(scorer.encoder.model, 2), lora_config(4)), scorer.encoder, 2)
    same = USLScorer(out).score(contexts[:1], responses[:1])
    assert same["usl_u_scores"][0] == pytest.approx(valid_probability(heads["u"], single)[0], abs=SUM)
    assert abs(same["usl_u_scores"][0] - u) > 1e-4  # the trained adapter moved U
    assert [same[f"usl_{p}_scores"][0] for p in "sl"] == pytest.approx([s, l], abs=ROUNDING)


def test_the_benchmark_table_prints_yeh_et_al_beside_usl_h():
    from dialeval.usl.benchmark import format_yeh
    from dialeval.usl.spec import SPEC, YEH

    row = {"spearman": 0.5, "spearman_p": 0.01, "pearson": 0.4, "pearson_p": 0.02, "kendall": 0.3, "kendall_p": 0.01, "n": 9}
    text = format_yeh({"dataset": "fed-turn", "n": 9, "flagged": 0, "signature": "metric:usl|version:x",
                       "rows": {p: row for p in ("usl", "usl_u", "usl_s", "usl_l")},
                       "paper": {"source": "Yeh", "spearman": YEH["fed-turn"]}})
    usl_line = next(line for line in text.splitlines() if line.split()[0] == "usl")
    assert "0.500*" in usl_line and "0.189" in usl_line
    assert set(YEH) == {"grade-convai2", "grade-dailydialog", "grade-empathetic", "holistic-coherence", "fed-turn",
                        "fed-dialog"}
    assert set(SPEC.benchmarks) == {f"usl-{name}" for name in YEH}


def test_the_default_hierarchy_keys_the_score_cache():
    # a changed default must miss the scores cached under the old one (the grid served H's under HS once)
    from dialeval import registry
    from dialeval.usl.formula import DEFAULT_HIERARCHY

    assert DEFAULT_HIERARCHY == "HS"
    assert registry.resolved_defaults("usl")["usl"]["hierarchy"] == "HS"


def test_the_benchmark_also_correlates_the_papers_hierarchy_of_the_same_parts(monkeypatch):
    # U = 0 on the best-rated reply: HS still counts its S, the paper's H zeroes it, so the two rows differ
    from dialeval import registry
    from dialeval.data.items import JudgmentItem
    from dialeval.usl import benchmark, scorer

    parts = [(0.0, 0.9, 0.9), (0.9, 0.2, 0.1), (0.8, 0.4, 0.5), (0.3, 0.5, 0.2)]
    human = [4.0, 1.0, 3.0, 2.0]
    items = [JudgmentItem(context=["hi"], response=f"reply {i}", score=h) for i, h in enumerate(human)]

    class Fixed:
        def score(self, contexts, responses, hierarchy):
            return {"signature": f"metric:usl|hierarchy:{hierarchy}", "flagged": 0,
                    "usl_scores": [usl_h(u, s, l, hierarchy) for u, s, l in parts],
                    **{f"usl_{p}_scores": [row[i] for row in parts] for i, p in enumerate("usl")}}

    monkeypatch.setattr(registry, "judgment_sets", lambda: {"fed-turn": lambda: items})
    monkeypatch.setattr(scorer, "cached_scorer", lambda *args: Fixed())
    rows = benchmark.yeh("fed-turn")["rows"]
    # HS by hand: 0.33*0 + 0.33*0.9 + 0.34*0.81 = 0.5724; 0.297 + 0.066 + 0.0068 = 0.3698;
    # 0.264 + 0.132 + 0.068 = 0.464; 0.099 + 0.165 + 0.034 = 0.298: ranks 4, 2, 3, 1 against 4, 1, 3, 2
    assert rows["usl"]["spearman"] == pytest.approx(0.8, rel=SUM)
    # H by hand: 0; 0.297 + 0.0594 + 0.00612 = 0.36252; 0.264 + 0.1056 + 0.0544 = 0.424; 0.099 + 0.0495 + 0.0102
    # = 0.1587: ranks 1, 3, 4, 2 against 4, 1, 3, 2
    assert rows["usl[H]"]["spearman"] == pytest.approx(-0.4, rel=SUM)
    assert set(rows) == {"usl", "usl_u", "usl_s", "usl_l", "usl[H]"}


def test_heads_are_stored_in_float16_and_read_back_as_the_training_report_scored_them(tmp_path):
    import torch
    from safetensors.torch import load_file

    from dialeval.usl.heads import WEIGHTS_FILE, head, load_folder, save_folder, stored

    torch.manual_seed(0)
    heads = {"u": head(8, 4), "s": head(32, 0)}
    original = {p: [w.detach().clone() for w in heads[p].parameters()] for p in heads}
    save_folder(tmp_path, heads, {"dim": 8, "s_input": "dual", "hidden_u": 4, "hidden_s": 0})
    assert {v.dtype for v in load_file(str(tmp_path / WEIGHTS_FILE)).values()} == {torch.float16}
    loaded, _ = load_folder(tmp_path)
    for part in heads:
        rounded = [w.to(torch.float16).float() for w in original[part]]
        read = list(loaded[part].parameters())
        assert all(r.dtype == torch.float32 for r in read)
        assert all(torch.equal(r, w) for r, w in zip(read, rounded))
        # what the training report scores: the same rounding in place
        assert all(torch.equal(r, w) for r, w in zip(stored(heads[part]).parameters(), rounded))
    # the rounding moved the weights, so stored() is not the identity
    assert any(not torch.equal(w, w.to(torch.float16).float()) for w in original["u"])


def test_card_counts_the_sets_at_or_above_yeh_and_where_s_alone_is():
    """The card's table: USL-H against Yeh et al.'s per set, and, among the sets below, those where S alone
    reaches Yeh's number (convai2: Yeh 0.457; fed-dialog: 0.152)."""
    from dialeval.usl.card import yeh_rows

    def result(usl, s):
        return {"rows": {"usl": {"spearman": usl}, "usl_u": {"spearman": 0.1}, "usl_s": {"spearman": s},
                         "usl_l": {"spearman": 0.0}}}

    text = yeh_rows({"grade-convai2": result(0.44, 0.46), "fed-dialog": result(0.152, 0.1)})
    assert "| grade-convai2 | 0.440 | 0.100 | 0.460 | 0.000 | - | 0.457 |" in text
    assert "| grade-empathetic | not run |" in text
    assert "on 1 of the 2 sets measured" in text
    assert "Of the 1 set below, S alone reads at or above Yeh's USL-H on 1 (grade-convai2)" in text
    below_everywhere = yeh_rows({"grade-convai2": result(0.44, 0.45)})
    assert "on 0 of the 1 sets measured" in below_everywhere and "S alone" not in below_everywhere
