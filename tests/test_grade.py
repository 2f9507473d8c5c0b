"""GRADE (Huang et al. 2020): keywords, knowledge/dialogue graph, GAT, loss, tiny training, scorer."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from dialeval.grade.gat import GraphBranch, HopGATLayer
from dialeval.grade.graph import KnowledgeGraph, dialogue_adjacency, normalized_adjacency
from dialeval.grade.keywords import IDFTable, KeywordExtractor
from dialeval.grade.model import GradeConfig, GradeHead, ranking_loss

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))


def idf_of(df: int, n: int = 100) -> float:
    return math.log((1 + n) / (1 + df)) + 1


# -- keywords ---------------------------------------------------------------------------------------
def test_keywords_rank_content_words_by_tf_idf_and_match_phrases():
    idf = IDFTable(100, {"dogs": 2, "beach": 5, "love": 50, "eating": 20})
    extractor = KeywordExtractor(idf, phrases=["ice cream", "dog"])
    text = "I love eating ice cream at the beach with my dogs ."
    # ice cream (unseen words: idf 5.62) > dogs (4.52) > beach (3.82) > eating (2.57) > love (1.68);
    # "I", "at", "the", "with", "my", "." are not content words.
    assert extractor.extract(text, 10) == ["ice cream", "dogs", "beach", "eating", "love"]
    assert extractor.extract(text, 2) == ["ice cream", "dogs"]
    assert extractor.salience(text)["beach"] == pytest.approx(idf_of(5))


def test_keywords_term_frequency_and_stopwords():
    idf = IDFTable(100, {"beach": 5, "dogs": 2})
    extractor = KeywordExtractor(idf)
    # beach twice: 2 * 3.82 = 7.65 beats dogs once (4.52)
    assert extractor.extract("the beach , the beach and dogs", 2) == ["beach", "dogs"]
    assert extractor.extract("ok . i am fine , thanks .", 5) == []  # fillers, pronouns, stop verbs
    assert extractor.extract("", 5) == []
    with pytest.raises(ValueError, match="limit"):
        extractor.extract("dogs", -1)


def test_idf_table_counts_documents_not_tokens(tmp_path):
    table = IDFTable.build(["a dog .", "dog dog cat", "the cat"], min_df=2)
    assert table.n_docs == 3 and table.df == {"dog": 2, "cat": 2}
    assert table.idf("dog") == pytest.approx(math.log(4 / 3) + 1)
    assert table.idf("unseen") == pytest.approx(math.log(4) + 1)
    table.save(tmp_path)
    assert IDFTable.load(tmp_path) == table
    with pytest.raises(ValueError, match="empty"):
        IDFTable.build([])


# -- graphs -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_graph():
    edges = [("IsA", "dog", "animal"), ("RelatedTo", "animal", "cat"), ("AtLocation", "cat", "house"),
             ("HasProperty", "ice_cream", "cold"), ("RelatedTo", "dog", "bark")]
    return KnowledgeGraph(edges, max_hops=2)


def test_knowledge_graph_hops_neighbours_and_concepts(small_graph):
    g = small_graph
    assert "ice cream" in g and g.multiword() == ["ice cream"]
    assert g.hops("dog", "dog") == 0 and g.hops("dog", "animal") == 1 and g.hops("dog", "cat") == 2
    assert g.hops("dog", "house") is None and g.hops("dog", "nothing") is None  # 3 hops > max_hops, unknown
    assert g.neighbours("dog", 1) == ["animal", "bark"] and g.neighbours("dog", 2) == ["cat"]
    assert g.sample_neighbours("dog", 1, 1) == g.sample_neighbours("dog", 1, 1)  # seeded
    assert g.concept("dogs") == "dog" and g.concept("barking") == "bark" and g.concept("xyz") is None
    with pytest.raises(ValueError, match="k must be"):
        g.neighbours("dog", 3)


def test_dialogue_adjacency_links_context_to_response_by_inverse_hops(small_graph):
    adj = dialogue_adjacency(small_graph, ["dog", "house"], ["cat", None, "dog"])
    expected = np.zeros((5, 5), np.float32)
    # dog-cat 2 hops: 1/2; house-cat 1 hop: 1; dog-house 3 hops and unknown words: 1/(max_hops+1); dog-dog: 1
    expected[0, 2:] = [0.5, 1 / 3, 1.0]
    expected[1, 2:] = [1.0, 1 / 3, 1 / 3]
    expected = expected + expected.T
    np.testing.assert_allclose(adj, expected, rtol=1e-6)


def test_normalized_adjacency_is_augmented_and_symmetric_and_ignores_padding():
    adj = torch.tensor([[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    norm = normalized_adjacency(adj, mask)
    np.testing.assert_allclose(norm[0].numpy(), [[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 0]], rtol=1e-6)
    # weighted: A = [[0, .5], [.5, 0]] -> degrees 1.5: every entry / 1.5
    norm = normalized_adjacency(torch.tensor([[[0.0, 0.5], [0.5, 0.0]]]), torch.ones(1, 2))
    np.testing.assert_allclose(norm[0].numpy(), [[1 / 1.5, 0.5 / 1.5], [0.5 / 1.5, 1 / 1.5]], rtol=1e-6)


# -- GAT ---------------------------------------------------------------------------------------------
@torch.no_grad()
def test_gat_shapes_and_attention_masking():
    torch.manual_seed(0)
    branch = GraphBranch(node_dim=8, hops=2, hidden=16, heads=4, layers=3, out_dim=5).eval()
    inputs = torch.randn(2, 4, 3, 8)
    adj = torch.zeros(2, 4, 4)
    adj[:, 0, 2] = adj[:, 2, 0] = 1.0  # context node 0 <-> response node 2; node 1 isolated
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    out = branch(inputs, adj, mask)
    assert out.shape == (2, 5)
    layer = branch.layers[0]
    alpha, z = layer.attention(branch.init(inputs), normalized_adjacency(adj, mask))
    assert alpha.shape == (2, 4, 4, 4) and z.shape == (2, 4, 4, 4)
    assert torch.all(alpha[:, :, 0, 1] == 0) and torch.all(alpha[:, :, 1, 0] == 0)  # no edge, no attention
    np.testing.assert_allclose(alpha[0, :, 1, 1].numpy(), 1.0, rtol=1e-6)  # isolated node: itself only
    np.testing.assert_allclose(alpha[0, :, :3].sum(-1).numpy(), 1.0, rtol=1e-5)
    assert torch.all(alpha[0, :, 3] == 0)  # padding row attends to nothing
    changed = inputs.clone()
    changed[0, 3] += 100.0  # the padded slot of graph 0
    assert torch.allclose(branch(changed, adj, mask)[0], out[0], atol=1e-6)
    empty = branch(inputs[:1], torch.zeros(1, 4, 4), torch.zeros(1, 4))  # no node at all
    assert torch.allclose(empty[0], branch.out.bias, atol=1e-6)


@torch.no_grad()
def test_gat_logits_are_scaled_by_the_adjacency():
    torch.manual_seed(0)
    layer = HopGATLayer(4, 8, heads=2)
    h = torch.randn(1, 3, 4)
    near = torch.tensor([[[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    far = near.clone()
    far[0, 0, 2] = far[0, 2, 0] = 1 / 3  # node 2 three times as many hops away
    mask = torch.ones(1, 3)
    a_near, _ = layer.attention(h, normalized_adjacency(near, mask))
    a_far, _ = layer.attention(h, normalized_adjacency(far, mask))
    assert not torch.allclose(a_near[0, :, 0], a_far[0, :, 0])


# -- loss, head ---------------------------------------------------------------------------------------
def test_ranking_loss_sign_and_margin():
    assert ranking_loss(torch.tensor([0.9]), torch.tensor([0.1])).item() == 0.0  # right order, beyond margin
    assert ranking_loss(torch.tensor([0.1]), torch.tensor([0.9])).item() == pytest.approx(0.9)  # 0.1 - 0.1 + 0.9
    assert ranking_loss(torch.tensor([0.5]), torch.tensor([0.45])).item() == pytest.approx(0.05)  # inside margin
    assert ranking_loss(torch.tensor([0.5, 0.1]), torch.tensor([0.45, 0.9])).item() == pytest.approx(0.475)


def test_head_save_load_round_trip(tmp_path):
    config = GradeConfig(encoder_dim=12, node_dim=6, hidden=8, heads=4, graph_dim=4, mlp=[8, 4])
    config.save(tmp_path)
    torch.manual_seed(1)
    for graph in (True, False):
        head = GradeHead(config, graph).eval()
        head.save(tmp_path)
        again = GradeHead.load(tmp_path, graph)
        enc, inputs, adj, mask = torch.randn(3, 12), torch.randn(3, 2, 3, 6), torch.rand(3, 2, 2), torch.ones(3, 2)
        args = (enc, inputs, adj, mask) if graph else (enc,)
        with torch.no_grad():
            assert torch.equal(head(*args), again(*args))
            assert torch.all((head(*args) > 0) & (head(*args) < 1))
    assert GradeConfig.load(tmp_path) == config


# -- tiny training and the scorer ------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import grade as grade_training

    out = tmp_path_factory.mktemp("grade") / "tiny"
    grade_training.main(["--tiny", "--output", str(out), "--work", str(out.parent / "work"), "--threads", "1",
                         "--embedding-pool", "40"])
    return out


def test_similarity_skip_head_starts_as_the_scaled_cosine():
    from dialeval.grade.model import SKIP_INIT

    config = GradeConfig(encoder_dim=4 * 3, adapter_dim=5, mlp=[6], pair_encoding="dual", similarity_skip=True)
    head = GradeHead(config, graph=False).eval()
    c = torch.nn.functional.normalize(torch.tensor([[1.0, 2.0, 2.0], [0.0, 0.0, 1.0]]), dim=-1)
    r = torch.nn.functional.normalize(torch.tensor([[2.0, 1.0, 2.0], [1.0, 0.0, 0.0]]), dim=-1)
    features = torch.cat([c, r, c * r, (c - r).abs()], dim=1)
    bias = head.mlp[-1].bias.item()
    expected = torch.sigmoid(SKIP_INIT * torch.tensor([8 / 9, 0.0]) + bias)  # cos = (2 + 2 + 4) / 9 and 0
    with torch.no_grad():
        assert torch.allclose(head(features), expected, atol=1e-6)
    with pytest.raises(ValueError, match="similarity_skip needs pair_encoding='dual'"):
        GradeHead(GradeConfig(similarity_skip=True), graph=False)


def test_tiny_training_writes_a_complete_checkpoint(tiny_model):
    import json

    for name in ("config.json", "model.safetensors", "model-nograph.safetensors", "idf.json", "conceptnet.txt", "README.md",
                 "encoder/adapter_config.json", "encoder/adapter_model.safetensors", "encoder/dialeval_base.json",
                 "encoder-nograph/adapter_model.safetensors"):
        assert (tiny_model / name).is_file(), name
    assert GradeConfig.load(tiny_model).encoder_lora
    report = json.loads((tiny_model / "dialeval_training.json").read_text())
    assert report["heads"]["graph"]["step"] == 3 and len(report["heads"]["graph"]["losses"]) == 3
    assert set(report["heads"]["nograph"]["heldout_accuracy"]) == {"lexical", "embedding", "random", "mean"}
    assert report["contexts"] == {"train": 24, "validation": 8}


def test_scores_are_probabilities_and_reload_identically(tiny_model):
    from dialeval.grade.scorer import GradeScorer

    contexts = [["do you like dogs ?"], ["what is your job ?", "i teach math at a school ."]]
    responses = ["yes , i have two dogs and a cat .", "that sounds like hard work ."]
    first = GradeScorer(tiny_model).score(contexts, responses)
    assert len(first["grade_scores"]) == 2 and all(0 < s < 1 for s in first["grade_scores"])
    assert first["grade"] == pytest.approx(sum(first["grade_scores"]) / 2)
    assert "graph:yes" in first["signature"] and "@" in first["signature"]
    again = GradeScorer(tiny_model).score(contexts, responses)
    assert again["grade_scores"] == first["grade_scores"]
    nograph = GradeScorer(tiny_model).score(contexts, responses, graph=False)
    assert "graph:no" in nograph["signature"] and nograph["grade_scores"] != first["grade_scores"]


def test_merged_adapter_scores_equal_the_unmerged_training_path(tiny_model):
    """The scorer merges the encoder's LoRA adapter into the base (fast path); the training-time
    model keeps it as a separate low-rank update (reference). Same scores, and not the base's."""
    from dialeval.grade.encoder import PairEncoder
    from dialeval.grade.scorer import GradeScorer

    contexts = [["do you like dogs ?"], ["what is your job ?", "i teach math at a school ."]]
    responses = ["yes , i have two dogs and a cat .", "that sounds like hard work ."]
    scorer = GradeScorer(tiny_model)
    fast = scorer.score(contexts, responses)["grade_scores"]
    config = GradeConfig.load(tiny_model)
    unmerged = PairEncoder(config.encoder, config.max_length, adapter=tiny_model / "encoder", train=True)
    unmerged.model.eval()
    head = GradeHead.load(tiny_model, True, config)
    graphs = [scorer.featurizer.pair_graph(c, r) for c, r in zip(contexts, responses)]
    with torch.no_grad():
        reference = head(unmerged.features(contexts, responses, config.pair_encoding), *scorer.featurizer.batch(graphs))
    assert fast == pytest.approx(reference.tolist(), abs=1e-5)
    base = PairEncoder(config.encoder, config.max_length)
    assert not np.allclose(base.encode(contexts, responses, config.pair_encoding),
                           scorer.encoder_for(True).encode(contexts, responses, config.pair_encoding), atol=1e-6)


def test_adapter_over_another_base_is_refused(tiny_model, tmp_path):
    import json
    import shutil

    from dialeval.grade.scorer import GradeScorer
    from dialeval.hub import BASE_FILE, BaseMismatchError

    copy = tmp_path / "tampered"
    shutil.copytree(tiny_model, copy)
    record = json.loads((copy / "encoder" / BASE_FILE).read_text())
    (copy / "encoder" / BASE_FILE).write_text(json.dumps({**record, "tensor_hash": "000000000000"}))
    with pytest.raises(BaseMismatchError, match="tensor hash 000000000000"):
        GradeScorer(copy).score([["hi there"]], ["hello"])


def test_frozen_encoder_training_caches_encodings(tmp_path):
    """``--lora-r 0``: the frozen-encoder variant (encodings cached once, only the head trains)."""
    import grade as grade_training
    from dialeval.grade.scorer import GradeScorer

    out = grade_training.main(["--tiny", "--lora-r", "0", "--graph-only", "--output", str(tmp_path / "frozen"),
                               "--work", str(tmp_path / "work"), "--threads", "1", "--embedding-pool", "40"])
    assert not GradeConfig.load(out).encoder_lora and not (out / "encoder").exists()
    assert sorted(p.name for p in (tmp_path / "work").glob("train-dual-*.npy")) == [
        "train-dual-context.npy", "train-dual-embedding.npy", "train-dual-lexical.npy", "train-dual-positive.npy"]
    assert "lora:no" in GradeScorer(out).score([["do you like dogs ?"]], ["yes ."])["signature"]


def test_response_without_keywords_gets_a_defined_score(tiny_model):
    from dialeval.grade.scorer import GradeScorer

    scorer = GradeScorer(tiny_model)
    graph = scorer.featurizer.pair_graph(["ok ."], "ok .")
    assert graph.nodes == () and graph.adj.shape == (0, 0)
    result = scorer.score([["ok ."], ["do you like dogs ?"]], ["ok .", "yes ."])
    assert all(0 < s < 1 for s in result["grade_scores"])


@pytest.mark.parametrize("contexts, responses, message", [
    ([], [], "responses is empty"),
    ([["hi"]], ["a", "b"], "mismatched lengths"),
    ([["hi"]], [None], r"responses\[0\] is None"),
    ([["hi"]], [""], r"responses\[0\] is an empty string"),
    ([[]], ["hello"], r"contexts\[0\] must be a non-empty list"),
    ([["", " "]], ["hello"], r"contexts\[0\] has no non-empty turn"),
    ("hi", ["hello"], "contexts must be a list"),
])
def test_bad_inputs_raise_clear_errors(tiny_model, contexts, responses, message):
    from dialeval.grade.scorer import GradeScorer

    with pytest.raises(ValueError, match=message):
        GradeScorer(tiny_model).score(contexts, responses)


def test_bad_model_and_graph_option_raise(tiny_model):
    from dialeval.grade.scorer import GradeScorer

    with pytest.raises(ValueError, match="not a bundled dialeval model"):
        GradeScorer("/nonexistent/grade")
    with pytest.raises(ValueError, match="graph must be True or False"):
        GradeScorer(tiny_model).score([["hi"]], ["hello"], graph="no")


def test_evaluate_module_and_runner(tiny_model):
    import dialeval
    from dialeval.runners import get_runner

    module = dialeval.load("grade")
    result = module.compute(contexts=[["do you like dogs ?"]], responses=["yes , two dogs ."], model=str(tiny_model))
    per_item, signature = get_runner("grade")([{"context": ["do you like dogs ?"], "response": "yes , two dogs ."}],
                                              model=str(tiny_model))
    assert per_item["grade"] == pytest.approx(result["grade_scores"], abs=1e-6)
    assert signature == result["signature"]


def test_load_grade_reads_the_aligned_files():
    from dialeval.grade.data import load_grade

    items = load_grade("grade-convai2")
    assert len(items) == 600 and {it.system for it in items} == {"bert_ranker", "dialogGPT", "transformer_generator",
                                                                 "transformer_ranker"}
    assert all(len(it.context) >= 1 and it.references and 1 <= it.score <= 5 for it in items)
    assert len(load_grade("empathetic")) == 300
    with pytest.raises(ValueError, match="unknown GRADE data set"):
        load_grade("persona")
