"""GRADE (Huang et al. 2020): keywords, knowledge/dialogue graph, GAT, loss, tiny training, scorer."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from dialeval.grade.gat import GraphBranch, HopGATLayer
from dialeval.grade.graph import KnowledgeGraph, dialogue_adjacency, normalized_adjacency
from dialeval.grade.keywords import IDFTable, KeywordExtractor
from dialeval.grade.model import GradeConfig, GradeHead, ranking_loss
from float_noise import ABSOLUTE, COSINE, RELATIVE, ROUNDING, SUM

ROOT = Path(__file__).resolve().parents[1]


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
    assert extractor.salience(text)["beach"] == pytest.approx(idf_of(5), rel=1e-12)


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
    assert table.idf("dog") == pytest.approx(math.log(4 / 3) + 1, rel=1e-12)
    assert table.idf("unseen") == pytest.approx(math.log(4) + 1, rel=1e-12)
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
    """The paper's code: weight 1 / (d + 1), d the shortest path (same concept 1, neighbours 1/2);
    unknown words and pairs beyond ``max_hops`` get 1 / (max_hops + 1)."""
    adj = dialogue_adjacency(small_graph, ["dog", "house"], ["cat", None, "dog"])
    expected = np.zeros((5, 5), np.float32)
    # dog-cat 2 hops: 1/3; house-cat 1 hop: 1/2; dog-house 3 hops > max_hops and unknown words: 1/3; dog-dog: 1
    expected[0, 2:] = [1 / 3, 1 / 3, 1.0]
    expected[1, 2:] = [1 / 2, 1 / 3, 1 / 3]
    expected = expected + expected.T
    np.testing.assert_allclose(adj, expected, rtol=ROUNDING)


def test_sentence_node_vectors_embed_concept_names_in_one_batch(small_graph):
    """``node_vectors="sentence"``: a concept's vector is the encoder's embedding of its name; the
    featurizer hands every node and sampled neighbour of a batch to the encoder at once."""
    from dialeval.grade.features import GraphFeaturizer
    from dialeval.grade.nodes import SentenceVectors

    calls = []

    def embed(names):
        calls.append(list(names))
        return np.array([[len(n), n.count("a")] for n in names], dtype=np.float64)

    vectors = SentenceVectors(embed, 2, "sentence:fake")
    idf = IDFTable(10, {})
    featurizer = GraphFeaturizer(KeywordExtractor(idf, small_graph.multiword()), small_graph, vectors, [2, 2], 10, 5)
    graphs = [featurizer.pair_graph(["my dog barks"], "a cat"), featurizer.pair_graph(["ice cream ?"], "xyz")]
    inputs, _, mask = featurizer.batch(graphs)
    # nodes dog, bark | cat ; ice cream | xyz (outside the graph), neighbours of dog: animal, bark / cat;
    # of bark: dog / animal; of cat: animal, house / dog; of ice cream: cold
    assert calls == [["animal", "bark", "cat", "cold", "dog", "house", "ice cream", "xyz"]]
    assert inputs.dtype == torch.float32 and mask.tolist() == [[1, 1, 1], [1, 1, 0]]
    # dog: its own vector [3, 0], mean of 1-hop animal [6, 2] and bark [4, 1], 2-hop cat [3, 1]
    assert inputs[0, 0].tolist() == [[3.0, 0.0], [5.0, 1.5], [3.0, 1.0]]
    assert vectors.vector("house").tolist() == [5.0, 0.0] and len(calls) == 1  # kept from the batch
    assert vectors.vector("zebra").tolist() == [5.0, 1.0] and calls[-1] == ["zebra"]  # one more call


def test_hop_search_is_deep_by_default_and_prefetch_gives_the_same_distances():
    """Default ``max_hops`` 19 (the paper code's unreachable hop 20): a 3-hop pair gets 1/4, not the
    floor; an unconnected pair and an unknown word 1/20; :meth:`prefetch` changes nothing."""
    from dialeval.grade.graph import DEFAULT_MAX_HOPS, hop_weight

    edges = [("IsA", "dog", "animal"), ("RelatedTo", "animal", "cat"), ("AtLocation", "cat", "house"),
             ("HasProperty", "ice_cream", "cold"), ("RelatedTo", "dog", "bark")]
    g = KnowledgeGraph(edges)
    assert DEFAULT_MAX_HOPS == 19 and g.max_hops == 19
    assert g.hops("dog", "house") == 3 and g.hops("bark", "house") == 4 and g.hops("dog", "cold") is None
    assert [hop_weight(g, "dog", b) for b in ("dog", "animal", "cat", "house", "cold", None)] == pytest.approx(
        [1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 20, 1 / 20], rel=1e-12)
    before = dialogue_adjacency(g, ["dog", "bark", "cold"], ["house", "cat", None])
    fresh = KnowledgeGraph(edges)
    assert fresh.prefetch(["dog", "bark", "cold"], ["house", "cat"]) == (2, 3)
    assert fresh._block is not None
    np.testing.assert_array_equal(dialogue_adjacency(fresh, ["dog", "bark", "cold"], ["house", "cat", None]), before)


def test_normalized_adjacency_is_augmented_and_symmetric_and_ignores_padding():
    adj = torch.tensor([[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    norm = normalized_adjacency(adj, mask)
    np.testing.assert_allclose(norm[0].numpy(), [[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 0]], rtol=ROUNDING)
    # weighted: A = [[0, .5], [.5, 0]] -> degrees 1.5: every entry / 1.5
    norm = normalized_adjacency(torch.tensor([[[0.0, 0.5], [0.5, 0.0]]]), torch.ones(1, 2))
    np.testing.assert_allclose(norm[0].numpy(), [[1 / 1.5, 0.5 / 1.5], [0.5 / 1.5, 1 / 1.5]], rtol=ROUNDING)


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
    np.testing.assert_allclose(alpha[0, :, 1, 1].numpy(), 1.0, rtol=ROUNDING)  # isolated node: itself only
    np.testing.assert_allclose(alpha[0, :, :3].sum(-1).numpy(), 1.0, rtol=ROUNDING)
    assert torch.all(alpha[0, :, 3] == 0)  # padding row attends to nothing
    changed = inputs.clone()
    changed[0, 3] += 100.0  # the padded slot of graph 0
    assert torch.allclose(branch(changed, adj, mask)[0], out[0], atol=ROUNDING)
    empty = branch(inputs[:1], torch.zeros(1, 4, 4), torch.zeros(1, 4))  # no node at all
    assert torch.allclose(empty[0], torch.nn.functional.elu(branch.out.bias), atol=ROUNDING)  # Eq. 10: ELU(FC0(.))


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
    assert not torch.allclose(a_near[0, :, 0], a_far[0, :, 0], atol=SUM)


@torch.no_grad()
def test_gat_layer_is_equation_9_on_hand_computed_numbers():
    """Eq. 7-9 on two nodes joined by an edge of weight 1/2, one head, W = I, a_src = (1, 0),
    a_dst = (0, 1), V = [[1, 1], [0, -1]]. Â = D^-1/2 (A + I) D^-1/2 = [[2/3, 1/3], [1/3, 2/3]].
    Logits a_src.z_i + a_dst.z_j: node 1 -> (1, 2), node 2 -> (0, 1); times Â: (2/3, 2/3) and (0, 2/3);
    softmax: (1/2, 1/2) and (1/(1+e^(2/3)), e^(2/3)/(1+e^(2/3))) = (0.339244, 0.660756).
    h' = ELU(V h_i + sum_j alpha_ij z_j): node 1 ELU((1, 0) + (0.5, 0.5)) = (1.5, 0.5);
    node 2 ELU((1, -1) + (0.339244, 0.660756)) = (1.339244, e^-0.339244 - 1 = -0.287691)."""
    layer = HopGATLayer(2, 2, heads=1)
    layer.proj.weight.copy_(torch.eye(2))
    layer.att_src.copy_(torch.tensor([[1.0, 0.0]]))
    layer.att_dst.copy_(torch.tensor([[0.0, 1.0]]))
    layer.self_proj.weight.copy_(torch.tensor([[1.0, 1.0], [0.0, -1.0]]))
    h = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    norm = normalized_adjacency(torch.tensor([[[0.0, 0.5], [0.5, 0.0]]]), torch.ones(1, 2))
    np.testing.assert_allclose(norm[0].numpy(), [[2 / 3, 1 / 3], [1 / 3, 2 / 3]], rtol=ROUNDING)
    alpha, _ = layer.attention(h, norm)
    np.testing.assert_allclose(alpha[0, 0].numpy(), [[0.5, 0.5], [0.339244, 0.660756]], atol=ROUNDING)
    np.testing.assert_allclose(layer(h, norm)[0].numpy(), [[1.5, 0.5], [1.339244, -0.287691]], atol=ROUNDING)
    plain = HopGATLayer(2, 2, heads=1, self_term=False)  # the layer before issue #18: no V h_i
    plain.load_state_dict({k: v for k, v in layer.state_dict().items() if not k.startswith("self_proj")})
    np.testing.assert_allclose(plain(h, norm)[0].numpy(), [[0.5, 0.5], [0.339244, 0.660756]], atol=ROUNDING)


def test_bm25_negatives_are_queried_with_the_true_response():
    """Section 3.5: the lexical negative is retrieved with the ground-truth response as the query.
    Here the response is about pizza and the context about the weather: the two queries pick
    different negatives (the middle of the 3 best-ranked responses other than the true one)."""
    import random

    from dialeval.grade.negatives import LexicalSampler

    corpus = ["i love pizza with extra cheese", "pizza is my favourite food", "cheese pizza tonight , extra cheese",
              "we ordered pizza", "the weather is sunny today", "sunny weather makes me happy",
              "i like sunny beaches", "what a sunny morning , nice weather", "my cat sleeps all day"]
    sampler = LexicalSampler(corpus, depth=3)
    positive, context = corpus[0], "is the weather sunny today ?"
    by_response = sampler.sample([positive], random.Random(0))
    by_context = sampler.sample([positive], random.Random(0), queries=[context])
    assert by_response == sampler.sample([positive], random.Random(0), queries=[positive])
    assert by_response == [3] and corpus[by_response[0]].count("pizza")
    assert by_context == [5] and "sunny" in corpus[by_context[0]]


# -- loss, head ---------------------------------------------------------------------------------------
def test_ranking_loss_sign_and_margin():
    assert ranking_loss(torch.tensor([0.9]), torch.tensor([0.1])).item() == 0.0  # right order, beyond margin
    assert ranking_loss(torch.tensor([0.1]), torch.tensor([0.9])).item() == pytest.approx(0.9, abs=ROUNDING)  # 0.1 - 0.1 + 0.9
    assert ranking_loss(torch.tensor([0.5]), torch.tensor([0.45])).item() == pytest.approx(0.05, abs=ROUNDING)  # inside margin
    assert ranking_loss(torch.tensor([0.5, 0.1]), torch.tensor([0.45, 0.9])).item() == pytest.approx(0.475, abs=ROUNDING)


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
            x = torch.tanh(head.adapter(enc))  # the forward pass by hand (dropout off in eval)
            if graph:
                x = torch.cat([x, head.graph(inputs, adj, mask)], -1)
            for i, layer in enumerate(head.mlp):
                x = layer(x) if i == len(head.mlp) - 1 else torch.nn.functional.elu(layer(x))
            assert torch.allclose(head(*args), torch.sigmoid(x.squeeze(-1)), atol=SUM)
    assert GradeConfig.load(tmp_path) == config


# -- tiny training and the scorer ------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from training_scripts import script

    out = tmp_path_factory.mktemp("grade") / "tiny"
    script("grade").main(["--tiny", "--lora-r", "8", "--output", str(out), "--work", str(out.parent / "work"),
                         "--threads", "1"])
    return out


def test_utterance_dropout_zeroes_u_per_context_in_training_only():
    """``keep`` = rand(n) >= p in training (one draw per context, shared by its true and negative
    responses); a dropped context is scored from ``[0; g]``; eval, p = 0 or no graph: all kept."""
    config = GradeConfig(encoder_dim=8, adapter_dim=4, node_dim=3, neighbours=[2], hidden=4, heads=1, layers=1,
                         graph_dim=5, mlp=[6], utterance_dropout=0.5)
    head = GradeHead(config, graph=True).train()
    torch.manual_seed(3)
    expected = torch.rand(1000) >= 0.5
    torch.manual_seed(3)
    assert torch.equal(head.utterance_keep(1000), expected)
    assert head.eval().utterance_keep(4) is None
    assert GradeHead(config, graph=False).train().utterance_keep(4) is None
    assert GradeHead(GradeConfig(**{**config.__dict__, "utterance_dropout": 0.0}), graph=True).train().utterance_keep(4) is None
    assert config.departures()[-1] == "udrop0.5"

    torch.manual_seed(0)
    enc, inputs = torch.randn(2, 8), torch.randn(2, 3, 2, 3)
    adj, mask = torch.ones(2, 3, 3), torch.ones(2, 3)
    with torch.no_grad():
        scores = head(enc, inputs, adj, mask, keep=torch.tensor([True, False]))
        x = torch.cat([torch.tanh(head.adapter(enc)) * torch.tensor([[1.0], [0.0]]), head.graph(inputs, adj, mask)], dim=-1)
        by_hand = torch.sigmoid(head.mlp[1](torch.nn.functional.elu(head.mlp[0](x))).squeeze(-1))
        assert torch.allclose(scores, by_hand, atol=SUM)
        assert scores[0] == head(enc, inputs, adj, mask)[0] and scores[1] != head(enc, inputs, adj, mask)[1]


def test_heldout_accuracy_reports_the_shuffled_graph_spearman_and_the_graph_alone():
    """On a fake head whose score is ``u(context, response) + g(graph)``: accuracy per kind of
    negative, the Spearman between own-graph and deranged-graph scores, and the accuracy of ``g``."""
    from scipy import stats

    from dialeval.grade.benchmark import derangement
    from dialeval.grade.training.accuracy import heldout_accuracy
    from dialeval.grade.training.examples import ALL_KINDS

    kinds = ALL_KINDS
    u = {"positive": torch.tensor([3.0, 2.0, 1.0, 0.0]), "lexical": torch.tensor([2.0, 3.0, 0.0, 1.0]),
         "embedding": torch.tensor([0.0, 0.0, 0.0, 0.0]), "random": torch.tensor([1.0, 1.0, 1.0, 1.0])}
    g = {"positive": torch.tensor([0.5, 0.0, 0.4, 0.0]), "lexical": torch.tensor([0.0, 0.6, 0.0, 0.2]),
         "embedding": torch.tensor([0.1, 0.3, 0.0, 0.9]), "random": torch.tensor([0.2, 0.2, 0.0, 0.0])}

    class FakeHead:
        use_graph = True

    class FakeModel:
        head = FakeHead()

        def eval(self):
            return self

        def scores(self, split, kinds_, idx, graph_order=None, utterance=True):
            graph_idx = idx if graph_order is None else graph_order[idx]
            return {k: (u[k][idx] if utterance else 0) + g[k][graph_idx] for k in kinds_}

    class FakeSplit:
        n, texts = 4, dict.fromkeys(kinds)

        def present(self, kind, idx):
            return torch.ones(len(idx), dtype=torch.bool)

    out = heldout_accuracy(FakeModel(), FakeSplit(), batch_size=3)
    # own scores: positive 3.5 2.0 1.4 0.0; lexical 2.0 3.6 0.0 1.2; embedding 0.1 0.3 0.0 0.9; random 1.2 1.2 1.0 1.0
    assert (out["lexical"], out["embedding"], out["random"]) == (0.5, 0.75, 0.75)
    assert out["mean"] == pytest.approx(2.0 / 3, rel=1e-12)
    # g alone: positive 0.5 0.0 0.4 0.0 beats lexical in 2, embedding in 2, random in 2 of 4
    assert out["graph_alone"] == pytest.approx(0.5, rel=1e-12)
    perm = torch.tensor(derangement(4, 0))
    own = torch.cat([u[k] + g[k] for k in kinds])
    shuffled = torch.cat([u[k] + g[k][perm] for k in kinds])
    assert out["shuffled_graph_spearman"] == pytest.approx(stats.spearmanr(own.numpy(), shuffled.numpy())[0], rel=1e-12)
    assert out["shuffled_graph_spearman"] < 1.0


def test_pairwise_accuracy_counts_only_the_contexts_that_have_a_negative():
    """A kind built for some contexts only (salads) is judged on those; the mean stays the paper's three."""
    from dialeval.grade.training.accuracy import pairwise_accuracy

    scores = {"positive": [3.0, 2.0, 1.0, 0.0], "lexical": [2.0, 3.0, 0.0, 1.0], "embedding": [0.0] * 4,
              "random": [1.0] * 4, "salad": [9.0, 0.0, 9.0, 9.0]}
    out = pairwise_accuracy(scores, {"salad": [False, True, False, True]})
    assert out == {"lexical": 0.5, "embedding": 0.75, "random": 0.5, "salad": 0.5, "mean": pytest.approx(1.75 / 3, rel=1e-12)}


def test_degenerate_examples_echo_a_context_turn_and_salad_a_sample():
    """``--negatives degenerate``: an echo of one of the last two turns for every context, a salad of
    the context's words as long as the true response for ``salads`` seeded contexts, None elsewhere."""
    from dialeval.grade.training.examples import degenerate_examples

    examples = {"contexts": [["hello there", "hi , how are you ?"], ["good morning !"], ["a b", "c d e"]],
                "positive": ["fine , thanks .", "morning .", "f g"]}
    out = degenerate_examples(examples, 2, "0-train")
    assert out == degenerate_examples(examples, 2, "0-train")  # seeded
    assert all(e in c[-2:] for e, c in zip(out["echo"], examples["contexts"]))
    assert out["echo"][1] == "good morning !"
    assert sum(s is not None for s in out["salad"]) == 2
    for salad, context, positive in zip(out["salad"], examples["contexts"], examples["positive"]):
        if salad is not None:  # every word a context word; as many words as the reply (punctuation dropped)
            assert set(salad.split()) <= set(" ".join(context).split()) - {",", "?", "!"}
            assert len(salad.split()) == len([w for w in positive.split() if w.isalnum()])


def test_reply_shaped_salads_keep_the_true_responses_punctuation():
    """``--salad-form reply``: each word of the true response replaced by a context word, its
    punctuation tokens kept in place; the words form is drawn as before (same seed, same salads)."""
    import random

    from dialeval.core.degenerate import shaped_salad
    from dialeval.grade.training.examples import degenerate_examples

    context = ["where did the break-in happen ?", "call 911 now"]
    salad = shaped_salad(context, "It happened at my house .", random.Random(0))
    tokens = salad.split()
    assert len(tokens) == 6 and tokens[-1] == "."
    assert set(tokens[:-1]) <= {"where", "did", "the", "break-in", "happen", "call", "911", "now"}
    assert shaped_salad(["?"], "Thank you .", random.Random(0)) == "Thank you ."  # no context word

    examples = {"contexts": [["hello there", "hi , how are you ?"], ["good morning !"]],
                "positive": ["fine , thanks .", "morning ."]}
    shaped = degenerate_examples(examples, 2, "0-train", "reply")
    assert [s.split()[1] for s in shaped["salad"][:1]] == [","] and shaped["salad"][1].endswith(" .")
    assert shaped["echo"] == degenerate_examples(examples, 2, "0-train")["echo"]
    with pytest.raises(ValueError, match="salad_form"):
        degenerate_examples(examples, 2, "0-train", "letters")


def test_extension_kinds_are_weighted_against_the_papers_kinds():
    """``--extension-weight``: (lexical + embedding + w * salad) / (2 + w); w = 1 is the plain mean."""
    import torch

    from dialeval.grade.training.trainee import weighted_loss

    terms = [("lexical", torch.tensor(1.0)), ("embedding", torch.tensor(3.0)), ("salad", torch.tensor(5.0))]
    assert weighted_loss(terms, 0.5).item() == pytest.approx((1 + 3 + 2.5) / 2.5, rel=ROUNDING)
    assert weighted_loss(terms).item() == pytest.approx(3.0, rel=ROUNDING)
    assert weighted_loss(terms[:2], 0.25).item() == pytest.approx(2.0, rel=ROUNDING)


def test_degenerate_negatives_train_against_echoes_and_salads(tmp_path):
    """A tiny frozen-encoder run with ``--negatives degenerate``: the salads and missing echoes are
    embedded once under ``--work``; held-out accuracy reports both kinds, and the untrained cosine's
    echo accuracy equals the one recomputed from the texts."""
    import json

    from dialeval.grade.encoder import MINILM_PACKAGE, load_encoder
    from training_scripts import script

    work = tmp_path / "work"
    out = script("grade").main(["--tiny", "--lora-r", "0", "--graph-only", "--negatives", "degenerate", "--salads", "5",
                               "--output", str(tmp_path / "deg"), "--work", str(work), "--threads", "1"])
    assert sorted(p.name for p in work.glob("texts-*-texts.json")) == [
        "texts-train-24-s0-degenerate-5-texts.json", "texts-validation-8-s0-degenerate-8-texts.json"]
    train_texts = json.loads((work / "texts-train-24-s0-degenerate-5-texts.json").read_text())
    assert 5 <= len(train_texts) <= 5 + 24  # the 5 salads and echoes that were not embedded yet
    state = json.loads((out / "dialeval_training.json").read_text())
    assert {"echo", "salad"} <= set(state["heads"]["graph"]["heldout_accuracy"])
    examples = json.loads((work / "validation-8-s0-examples.json").read_text())
    from dialeval.grade.training.examples import degenerate_examples

    echo = degenerate_examples(examples, 8, "0-validation")["echo"]
    encoder = load_encoder(MINILM_PACKAGE, 128, None)
    context = encoder.embed([" ".join(c) for c in examples["contexts"]])
    positive = (context * encoder.embed(examples["positive"])).sum(1)
    echoed = (context * encoder.embed(echo)).sum(1)
    # texts embedded in other batches differ by float32 noise (~1e-7): no pair may be that close to a tie
    assert (abs(positive - echoed) > 1e-4).all()
    assert state["untrained_cosine_heldout"]["echo"] == pytest.approx(float((positive > echoed).mean()), rel=1e-12)


def test_mpnet_is_a_grade_encoder_by_its_name(monkeypatch, tmp_path):
    from dialeval.grade import encoder

    monkeypatch.setattr(encoder, "mpnet_dir", lambda: tmp_path)
    assert encoder.encoder_path("all-mpnet-base-v2") == str(tmp_path)
    assert GradeConfig(encoder="all-mpnet-base-v2", pair_encoding="dual").departures()[:3] == ["encoder-mpnet", "frozen", "dual"]


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
        assert torch.allclose(head(features), expected, atol=SUM)
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
    assert set(report["heads"]["graph"]["heldout_accuracy"]) == {"lexical", "embedding", "random", "mean", "graph_alone",
                                                                 "shuffled_graph_spearman"}
    assert report["contexts"] == {"train": 24, "validation": 8}


def test_a_lora_run_with_cached_examples_embeds_nothing(tiny_model, tmp_path, monkeypatch):
    """The frozen encoder's tables (training responses, validation texts) only feed the negative
    sampling and the frozen variant: a LoRA run over a cache holding its examples and graphs (a cache
    carried to another machine without its embeddings) must not embed the corpus again."""
    import shutil

    from training_scripts import script
    from dialeval.grade.training import prepare

    work = tmp_path / "work"
    work.mkdir()
    for path in (tiny_model.parent / "work").iterdir():
        if "examples" in path.name or "graphs" in path.name:
            shutil.copy(path, work / path.name)

    def refuse(*args, **kwargs):
        raise AssertionError("embedded although the examples are cached")

    monkeypatch.setattr(prepare, "cached_embeddings", refuse)
    script("grade").main(["--tiny", "--lora-r", "8", "--output", str(tmp_path / "out"), "--work", str(work),
                          "--threads", "1", "--heldout", str(tiny_model)])
    assert not list(work.glob("*.npy"))


def test_the_saved_checkpoint_ranks_validation_as_the_run_reported(tiny_model):
    """The scorer (adapter merged, its own keyword graphs) reproduces the held-out accuracy the run
    computed with its trainee over the cached graphs, for both heads (``tests/test_cuda.py`` checks the
    same for a run on the GPU)."""
    import json

    from dialeval.grade.training.accuracy import checkpoint_heldout

    report = json.loads((tiny_model / "dialeval_training.json").read_text())
    examples = json.loads(next((tiny_model.parent / "work").glob("validation-*-examples.json")).read_text())
    kinds = ("lexical", "embedding", "random")
    for graph, head in ((True, "graph"), (False, "nograph")):
        found = checkpoint_heldout(tiny_model, examples, graph)
        assert {k: found[k] for k in kinds} == {k: report["heads"][head]["heldout_accuracy"][k] for k in kinds}, head


def test_scores_are_probabilities_and_reload_identically(tiny_model):
    from dialeval.grade.scorer import GradeScorer

    contexts = [["do you like dogs ?"], ["what is your job ?", "i teach math at a school ."]]
    responses = ["yes , i have two dogs and a cat .", "that sounds like hard work ."]
    scorer = GradeScorer(tiny_model)
    first = scorer.score(contexts, responses)
    graphs = [scorer.featurizer.pair_graph(c, r) for c, r in zip(contexts, responses)]
    by_hand = scorer.score_features(scorer.encoder_for(True).encode(contexts, responses, scorer.config.pair_encoding),
                                    graphs, scorer.head(True))
    assert first["grade_scores"] == pytest.approx(by_hand, abs=SUM)
    assert first["grade"] == pytest.approx(sum(first["grade_scores"]) / 2, rel=1e-12)
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
    assert fast == pytest.approx(reference.tolist(), abs=SUM)
    base = PairEncoder(config.encoder, config.max_length)
    assert not np.allclose(base.encode(contexts, responses, config.pair_encoding),
                           scorer.encoder_for(True).encode(contexts, responses, config.pair_encoding), atol=SUM)


def test_adapter_over_another_base_is_refused(tiny_model, tmp_path):
    import json
    import shutil

    from dialeval.grade.scorer import GradeScorer
    from dialeval.models.hub import BASE_FILE, BaseMismatchError

    copy = tmp_path / "tampered"
    shutil.copytree(tiny_model, copy)
    record = json.loads((copy / "encoder" / BASE_FILE).read_text())
    (copy / "encoder" / BASE_FILE).write_text(json.dumps({**record, "tensor_hash": "000000000000"}))
    with pytest.raises(BaseMismatchError, match="tensor hash 000000000000"):
        GradeScorer(copy).score([["hi there"]], ["hello"])


def test_shuffled_batches_follow_the_plain_reshuffling_loop():
    """The training order: the plain loop (reshuffle by one seeded ``Random`` when fewer than a batch
    are left, take the first ``batch_size``) gives the same batches, for any ``n`` against the size."""
    import itertools
    import random

    from dialeval.grade.training.trainee import shuffled_batches

    for n, size in ((12, 4), (14, 4), (3, 4)):
        rng, order, expected = random.Random("0-graph"), [], []
        for _ in range(10):
            if len(order) < size:
                order = list(range(n))
                rng.shuffle(order)
            expected.append(order[:size])
            order = order[size:]
        assert list(itertools.islice(shuffled_batches(n, size, "0-graph"), 10)) == expected


def test_a_resumed_run_continues_the_batch_order(tmp_path, monkeypatch):
    """``--resume`` after a stop trains on the batches the uninterrupted run would have used next,
    not on the start of the epoch again (the order is seeded and the done steps are skipped). The tiny
    run: 3 steps of 8 of its 24 contexts, saved every 2; the stop comes in step 3."""
    from dialeval.grade.training.trainee import Trainee
    from training_scripts import script

    seen: list[list[int]] = []
    scores, stop_at = Trainee.scores, [None]

    def recorded(self, split, kinds, idx, *options):
        if split.n == 24:  # a training batch (held-out accuracy scores the 8 validation contexts)
            seen.append(idx.tolist())
            if len(seen) == stop_at[0]:
                raise KeyboardInterrupt
        return scores(self, split, kinds, idx, *options)

    monkeypatch.setattr(Trainee, "scores", recorded)
    base = ["--tiny", "--lora-r", "0", "--graph-only", "--work", str(tmp_path / "work"), "--threads", "1"]
    script("grade").main([*base, "--output", str(tmp_path / "whole")])
    whole, seen[:] = list(seen), []
    stop_at[0] = 3
    with pytest.raises(KeyboardInterrupt):
        script("grade").main([*base, "--output", str(tmp_path / "parts")])
    stop_at[0] = None
    script("grade").main([*base, "--output", str(tmp_path / "parts"), "--resume"])
    assert len(whole) == 3 and len({tuple(b) for b in whole}) == 3
    assert seen == whole + whole[2:]  # steps 1-3 (stopped in 3, saved at 2), then step 3 again on resume


def test_frozen_encoder_training_caches_encodings(tmp_path):
    """``--lora-r 0``: the frozen-encoder variant (encodings cached once, only the head trains)."""
    from dialeval.grade.scorer import GradeScorer
    from dialeval.grade.training.examples import ALL_KINDS
    from training_scripts import script

    out = script("grade").main(["--tiny", "--lora-r", "0", "--graph-only", "--output", str(tmp_path / "frozen"),
                               "--work", str(tmp_path / "work"), "--threads", "1"])
    assert not GradeConfig.load(out).encoder_lora and not (out / "encoder").exists()
    # every distinct training response, validation text and chosen context embedded once
    assert sorted(p.name for p in (tmp_path / "work").glob("*-texts.json")) == [
        "contexts-24-s0-texts.json", "responses-texts.json", "val-texts-texts.json"]
    assert sorted(p.name for p in (tmp_path / "work").glob("*-examples.json")) == [
        "train-24-s0-examples.json", "validation-8-s0-examples.json"]
    assert "lora:no" in GradeScorer(out).score([["do you like dogs ?"]], ["yes ."])["signature"]
    # the untrained cosine's held-out accuracy, recomputed from the texts with the same encoder
    import json

    from dialeval.grade.encoder import MINILM_PACKAGE, load_encoder

    examples = json.loads((tmp_path / "work" / "validation-8-s0-examples.json").read_text())
    encoder = load_encoder(MINILM_PACKAGE, 128, None)
    context = encoder.embed([" ".join(c) for c in examples["contexts"]])
    cosine = {k: (context * encoder.embed(examples[k])).sum(1) for k in ALL_KINDS}
    expected = {k: float((cosine["positive"] > cosine[k]).mean()) for k in ALL_KINDS[1:]}
    state = json.loads((out / "dialeval_training.json").read_text())["untrained_cosine_heldout"]
    assert {k: state[k] for k in expected} == pytest.approx(expected, rel=1e-12)
    assert state["mean"] == pytest.approx(sum(expected.values()) / 3, rel=1e-12)


def test_response_without_keywords_gets_a_defined_score(tiny_model):
    from dialeval.grade.scorer import GradeScorer

    scorer = GradeScorer(tiny_model)
    graph = scorer.featurizer.pair_graph(["ok ."], "ok .")
    assert graph.nodes == () and graph.adj.shape == (0, 0)
    result = scorer.score([["ok ."], ["do you like dogs ?"]], ["ok .", "yes ."])
    empty = scorer.score_features(scorer.encoder_for(True).encode([["ok ."]], ["ok ."], scorer.config.pair_encoding),
                                  [graph], scorer.head(True))
    assert result["grade_scores"][0] == pytest.approx(empty[0], abs=SUM) and not math.isnan(empty[0])


@pytest.mark.parametrize("contexts, responses, message", [
    ([], [], "responses is empty"),
    ([["hi"]], ["a", "b"], "mismatched lengths"),
    ([["hi"]], [None], r"responses\[0\] is None"),
    ([[]], ["hello"], r"contexts\[0\] must be a non-empty list"),
    ([["", " "]], ["hello"], r"contexts\[0\]\[0\] is an empty string"),
    ([["hi", ""]], ["hello"], r"contexts\[0\]\[1\] is an empty string"),  # refused like SSREM (issue 30)
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
    from dialeval.scoring.runners import get_runner

    module = dialeval.load("grade")
    result = module.compute(contexts=[["do you like dogs ?"]], responses=["yes , two dogs ."], model=str(tiny_model))
    per_item, signature = get_runner("grade")([{"context": ["do you like dogs ?"], "response": "yes , two dogs ."}],
                                              model=str(tiny_model))
    assert per_item["grade"] == pytest.approx(result["grade_scores"], abs=SUM)
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


# -- issue #18: hop attention, k-hop off, benchmark reference rows and the shuffled-graph control -----
@torch.no_grad()
def test_attention_without_hop_weights_is_a_plain_gat_softmax_over_the_edges():
    """``hop_scaled=False``: alpha_ij = softmax_j LeakyReLU(a_s.z_i + a_d.z_j) over the edges, the
    same for near and far edges (reference loop); with hop scaling the two differ."""
    torch.manual_seed(0)
    layer = HopGATLayer(4, 8, heads=2, hop_scaled=False)
    h = torch.randn(1, 3, 4)
    near = torch.tensor([[[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    far = near.clone()
    far[0, 0, 2] = far[0, 2, 0] = 1 / 3
    mask = torch.ones(1, 3)
    a_near, z = layer.attention(h, normalized_adjacency(near, mask))
    a_far, _ = layer.attention(h, normalized_adjacency(far, mask))
    assert torch.allclose(a_near, a_far, atol=ROUNDING)
    edges = {0: [0, 1, 2], 1: [0, 1], 2: [0, 2]}  # A + I
    for head in range(2):
        for i, js in edges.items():
            logits = torch.stack([torch.nn.functional.leaky_relu(
                (z[0, head, i] * layer.att_src[head]).sum() + (z[0, head, j] * layer.att_dst[head]).sum(), 0.2) for j in js])
            expected = torch.zeros(3)
            expected[js] = torch.softmax(logits, 0)
            assert torch.allclose(a_near[0, head, i], expected, atol=SUM)
    scaled = HopGATLayer(4, 8, heads=2)
    scaled.load_state_dict(layer.state_dict())
    assert not torch.allclose(scaled.attention(h, normalized_adjacency(near, mask))[0],
                              scaled.attention(h, normalized_adjacency(far, mask))[0], atol=SUM)


@torch.no_grad()
def test_no_khop_branch_reads_only_the_node_vector():
    torch.manual_seed(0)
    branch = GraphBranch(node_dim=6, hops=0, hidden=8, heads=2, layers=1, out_dim=3).eval()
    inputs, adj, mask = torch.randn(2, 3, 1, 6), torch.rand(2, 3, 3), torch.ones(2, 3)
    assert branch(inputs, adj, mask).shape == (2, 3) and len(branch.init.hops) == 0
    assert torch.equal(branch.init(inputs), inputs[..., 0, :])
    config = GradeConfig(encoder_dim=12, node_dim=6, hidden=8, heads=2, graph_dim=4, mlp=[4], neighbours=[],
                         hop_attention=False)
    head = GradeHead(config, True)
    assert all(not layer.hop_scaled for layer in head.graph.layers) and len(head.graph.init.hops) == 0


def test_derangement_moves_every_item_and_is_seeded():
    from dialeval.grade.benchmark import derangement

    for n in (2, 3, 10, 600):
        perm = derangement(n, 0)
        assert sorted(perm) == list(range(n)) and all(perm[i] != i for i in range(n))
    assert derangement(50, 1) == derangement(50, 1) != derangement(50, 2)


def test_per_system_pools_every_item_and_averages_four_table1_correlations():
    from types import SimpleNamespace

    from dialeval.grade.benchmark import per_system

    human = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    scores = [1, 2, 3, 5, 4, 3.5, 1.5, 2.5, 5.5, 4.5]
    systems = ["transformer_ranker"] * 5 + ["transformer_generator"] * 5
    items = [SimpleNamespace(score=h, system=s) for h, s in zip(human, systems)]
    out = per_system(scores, items)
    # ranker: one swapped pair, rho = 1 - 6*2/120 = 0.9 and r = 9/10; generator: rank differences
    # (2, -1, -1, 1, -1), rho = 1 - 6*8/120 = 0.6, r = 6/10; Table 1's mean of four = 0.75
    assert out["per_system"]["transformer_ranker"]["spearman"] == pytest.approx(0.9, rel=1e-12)
    assert out["per_system"]["transformer_ranker"]["pearson"] == pytest.approx(0.9, rel=1e-12)
    assert out["per_system"]["transformer_generator"]["spearman"] == pytest.approx(0.6, rel=1e-12)
    assert out["per_system"]["transformer_generator"]["pearson"] == pytest.approx(0.6, rel=1e-12)
    assert out["mean"]["table1_avg4"] == pytest.approx(0.75, rel=1e-12)
    # pooled over the 10 items: the Spearman of the full lists, not a mean of the two systems
    from scipy import stats

    assert out["pooled"]["spearman"] == pytest.approx(stats.spearmanr(scores, human)[0], rel=1e-12) == pytest.approx(
        0.7385489, abs=1e-6)


def test_versus_cosine_bootstrap_matches_a_plain_loop_over_the_same_resamples():
    """The vectorised paired bootstrap of (GRADE - cosine) in Table 1's average of four equals a
    scipy loop over the documented resamples; identical metrics give 0 everywhere."""
    from types import SimpleNamespace

    import numpy as np
    from scipy import stats

    from dialeval.grade.benchmark import TABLE1_SYSTEMS, per_system, versus_cosine

    rng = np.random.default_rng(7)
    systems = ["transformer_ranker"] * 12 + ["transformer_generator"] * 10 + ["dialogGPT"] * 4
    human = rng.integers(1, 6, len(systems)).astype(float)  # ties, as in mean ratings
    grade_scores = (human + rng.normal(0, 1.0, len(systems))).tolist()
    cosine = (human + rng.normal(0, 2.0, len(systems))).tolist()
    items = [SimpleNamespace(score=h, system=s) for h, s in zip(human, systems)]
    out = versus_cosine(grade_scores, cosine, items, n_resamples=50, seed=3)

    draw = np.random.default_rng(3)
    counts = {s: systems.count(s) for s in TABLE1_SYSTEMS}
    indices = {s: draw.integers(0, counts[s], size=(50, counts[s])) for s in TABLE1_SYSTEMS}
    diffs = []
    for b in range(50):
        avg = []
        for metric in (grade_scores, cosine):
            four = []
            for s in TABLE1_SYSTEMS:
                where = [i for i, name in enumerate(systems) if name == s]
                x = [metric[where[j]] for j in indices[s][b]]
                y = [human[where[j]] for j in indices[s][b]]
                four += [stats.pearsonr(x, y)[0], stats.spearmanr(x, y)[0]]
            avg.append(np.mean(four))
        diffs.append(avg[0] - avg[1])
    assert out["interval"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-9)
    assert out["share_at_least"] == pytest.approx(np.mean(np.asarray(diffs) >= 0), rel=1e-12)
    assert out["delta"] == pytest.approx(per_system(grade_scores, items)["mean"]["table1_avg4"]
                                         - per_system(cosine, items)["mean"]["table1_avg4"], rel=1e-12)
    assert out["delta"] > 0.1  # the less noisy metric is ahead
    same = versus_cosine(cosine, cosine, items, n_resamples=20)
    assert same["delta"] == 0 and same["interval"] == [0, 0] and same["share_at_least"] == 1
    no_table1 = [SimpleNamespace(score=h, system="dialogGPT") for h in human]
    assert versus_cosine(grade_scores, cosine, no_table1) is None


def test_cosine_row_uses_the_last_three_turns():
    from dialeval.grade.benchmark import cosine_scores
    from dialeval.grade.encoder import MINILM_PACKAGE, load_encoder

    contexts = [["i hate rain .", "my cat is sick .", "the vet is closed today .", "what should i do ?"]]
    responses = ["call another vet for your cat ."]
    encoder = load_encoder(MINILM_PACKAGE, 128, None)
    c = encoder.embed([" ".join(contexts[0][-3:])])[0]
    r = encoder.embed(responses)[0]
    got = cosine_scores(MINILM_PACKAGE, contexts, responses)
    assert got == pytest.approx([float(c @ r)], abs=COSINE)
    all_turns = float(encoder.embed([" ".join(contexts[0])])[0] @ r)
    assert abs(got[0] - all_turns) > 1e-4
    # GRADE's degenerate-response policy: a pair GRADE flags gets the cosine's worst value
    assert cosine_scores(MINILM_PACKAGE, contexts * 2, responses * 2, flags=[["echo"], []]) == pytest.approx(
        [-1.0, got[0]], abs=COSINE)


def test_shuffled_graph_control_scores_each_pair_with_another_pairs_graph(tiny_model):
    from types import SimpleNamespace

    from dialeval.grade.benchmark import derangement, shuffled_graph_control
    from dialeval.grade.scorer import GradeScorer

    contexts = [["do you like dogs ?"], ["what is your job ?"], ["where do you live ?"], ["any plans for the weekend ?"]]
    responses = ["yes , i have two dogs .", "i teach math at a school .", "near the beach in a small town .",
                 "i will go fishing with my brother ."]
    items = [SimpleNamespace(score=s, system="transformer_ranker") for s in (4.0, 2.0, 3.0, 1.0)]
    scorer = GradeScorer(tiny_model)
    result = scorer.score(contexts, responses)
    scores = result["grade_scores"]
    control = shuffled_graph_control(scorer, contexts, responses, items, scores, result["flags"], seeds=2)
    # reference loop: seed 0's derangement, scored one pair at a time with the moved graph
    perm = derangement(4, 0)
    encodings = scorer.encoder_for(True).encode(contexts, responses, scorer.config.pair_encoding)
    graphs = [scorer.featurizer.pair_graph(c, r) for c, r in zip(contexts, responses)]
    one_by_one = [scorer.score_features(encodings[i : i + 1], [graphs[perm[i]]], scorer.head(True))[0] for i in range(4)]
    from scipy import stats

    assert control["runs"][0]["pooled"]["spearman"] == pytest.approx(stats.spearmanr(one_by_one, [4, 2, 3, 1])[0], rel=1e-12)
    assert control["runs"][0]["score_spearman"] == pytest.approx(stats.spearmanr(one_by_one, scores)[0], rel=1e-12)
    # score_spearman: own-graph vs shuffled-graph scores (issue #18); human_spearman: with the ratings
    assert control["score_spearman"] == pytest.approx(
        (control["runs"][0]["score_spearman"] + control["runs"][1]["score_spearman"]) / 2, rel=1e-12)
    # a flagged pair keeps its worst value, 0, with another pair's graph too
    flagged = shuffled_graph_control(scorer, contexts, responses, items, [0.0] + scores[1:],
                                     [["echo"], [], [], []], seeds=1)
    assert flagged["runs"][0]["score_spearman"] == pytest.approx(
        stats.spearmanr([0.0] + one_by_one[1:], [0.0] + scores[1:])[0], rel=1e-12)
    assert control["human_spearman"] == pytest.approx(
        (control["runs"][0]["pooled"]["spearman"] + control["runs"][1]["pooled"]["spearman"]) / 2, rel=1e-12)


def test_tiny_ablations_write_the_table3_variants(tmp_path):
    """``--ablations``: each variant's config carries its change (no k-hop inputs, unscaled attention,
    one kind of negative), and its head scores through the ordinary scorer."""
    import json

    from dialeval.grade.scorer import GradeScorer
    from training_scripts import script

    root = tmp_path / "abl"
    script("grade").main(["--tiny", "--lora-r", "0", "--output", str(tmp_path / "shared"), "--work", str(tmp_path / "work"),
                         "--threads", "1", "--ablations", "1", "--ablation-root", str(root),
                         "--ablation-variants", "no-khop", "no-hop-attention", "lexical-only"])
    no_khop, no_att, lexical = (GradeConfig.load(root / v / "seed0") for v in ("no-khop", "no-hop-attention", "lexical-only"))
    assert no_khop.neighbours == [] and no_khop.hop_attention
    assert no_att.neighbours == [10, 10] and not no_att.hop_attention
    assert lexical.neighbours == [10, 10] and lexical.hop_attention
    state = json.loads((root / "lexical-only" / "seed0" / "dialeval_training.json").read_text())
    assert json.loads(json.dumps(state["args"]))["negatives"] == "lexical"
    scores = GradeScorer(root / "no-khop" / "seed0").score([["do you like dogs ?"]], ["yes , two dogs ."])
    assert "hops:0" in scores["signature"] and "K0" in scores["signature"]


def test_sweep_specs_parse_and_reject_unknown_keys():
    from dialeval.grade.training.variants import parse_spec

    assert parse_spec("graph=0,skip=1,lr=1e-3,epochs=0.5") == {"graph": 0, "skip": 1, "lr": 1e-3,
                                                                              "epochs": 0.5}
    assert parse_spec("udrop=0.5") == {"udrop": 0.5}
    with pytest.raises(ValueError, match="not key=value"):
        parse_spec("graph=1,dropout=0.2")


PINNED_CONTEXTS = [["do you like dogs ?", "i love them , i have two ."], ["what is your job ?"]]
PINNED_RESPONSES = ["what are their names ?", "i like pizza ."]


def assert_pinned_heads(scorer, graph_scores: list[float], nograph_scores: list[float]) -> None:
    """A bundled folder's graph and no-graph head scores of the two pinned pairs (sigmoid outputs of
    float32 sums pinned in another process: float_noise.RELATIVE and ABSOLUTE)."""
    assert scorer.score(PINNED_CONTEXTS, PINNED_RESPONSES, graph=True)["grade_scores"] == pytest.approx(
        graph_scores, rel=RELATIVE, abs=ABSOLUTE)
    assert scorer.score(PINNED_CONTEXTS, PINNED_RESPONSES, graph=False)["grade_scores"] == pytest.approx(
        nograph_scores, rel=RELATIVE, abs=ABSOLUTE)


def test_bundled_folder_scores_of_both_heads_are_pinned():
    """The bundled ``dialeval/grade-dailydialog`` (issue #18: Eq. 1-12 as the default, frozen
    all-mpnet-base-v2, dual encoding, no similarity skip, all DailyDialog train pairs for 3 epochs): graph and no-graph
    heads on two pairs, values recorded when the folder was trained. A changed head, encoder, hop
    search or featurizer moves them."""
    from dialeval.grade.scorer import GradeScorer

    scorer = GradeScorer("dialeval/grade-dailydialog")
    assert_pinned_heads(scorer, [0.5746946930885315, 0.44351789355278015], [0.6017256379127502, 0.3669535219669342])
    config = scorer.config
    assert not config.similarity_skip and scorer.head(True).skip is None
    assert config.gat_self_term and config.graph_out_elu and config.max_hops == 19
    assert all(layer.self_proj is not None for layer in scorer.head(True).graph.layers)
    assert config.departures() == ["encoder-mpnet", "frozen", "dual", "glove", "cn100k"]
    assert "departures:encoder-mpnet+frozen+dual+glove+cn100k" in scorer.signature(True)


def test_the_default_cross_encoder_folder_scores_of_both_heads_are_pinned():
    """The default ``dialeval/grade-dailydialog-cross`` (all-mpnet-base-v2 fine-tuned as the paper's
    cross-encoder through one LoRA adapter per head, trained on a GPU for one epoch): graph and no-graph
    heads on the two pairs above, values recorded on the CPU when the folder was bundled. A changed head, adapter
    loading, pair encoding or featurizer moves them."""
    from dialeval.grade.scorer import DEFAULT_MODEL, GradeScorer

    assert DEFAULT_MODEL == "dialeval/grade-dailydialog-cross"
    scorer = GradeScorer(DEFAULT_MODEL)
    assert_pinned_heads(scorer, [0.822418212890625, 0.5521986484527588], [0.8391563296318054, 0.520382285118103])
    config = scorer.config
    assert config.pair_encoding == "cross" and config.encoder_lora and not config.similarity_skip
    assert config.departures() == ["encoder-mpnet", "lora", "glove", "cn100k"]
    assert "pair:cross|lora:yes" in scorer.signature(True)


def test_degenerate_and_nonsense_responses_get_zero_and_a_flag():
    """Degenerate-response policy with the bundled model: "", "The the the the the" (0.917 before)
    and "asdf qwer zxcv" (0.896 before) get 0 and their flag; real replies keep their scores,
    computed as without the flagged ones; an unknown option is a ValueError like the other modules'."""
    import dialeval

    module = dialeval.load("grade")
    context = ["Do you like reading books?"]
    replies = ["Yes, mostly novels. I read one every week.", "The train leaves at half past seven."]
    degenerate = ["", "The the the the the", "asdf qwer zxcv"]
    out = module.compute(contexts=[context] * 5, responses=replies + degenerate)
    assert out["flags"] == [[], [], ["empty"], ["repetitive"], ["unknown_words"]]
    assert out["grade_scores"][2:] == [0.0, 0.0, 0.0]
    alone = module.compute(contexts=[context] * 2, responses=replies)["grade_scores"]
    assert out["grade_scores"][:2] == pytest.approx(alone, abs=SUM) and min(alone) > 0.0
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['grahp'\]"):
        module.compute(contexts=[context], responses=replies[:1], grahp=False)



def test_graph_signal_statistics_on_a_hand_built_graph():
    """benchmarks/grade_graph_signal.py: mean, max and count of close pairs (w >= 1/2) of the
    context-response weights only (not the symmetric copy, not the diagonal); no edge -> zeros."""
    import importlib.util

    import numpy as np

    from dialeval.grade.features import PairGraph

    spec = importlib.util.spec_from_file_location("grade_graph_signal", ROOT / "benchmarks" / "grade_graph_signal.py")
    signal = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(signal)
    adj = np.zeros((4, 4), dtype=np.float32)
    cr = np.array([[1.0, 0.25], [0.5, 0.05]], dtype=np.float32)  # 2 context x 2 response keywords
    adj[:2, 2:], adj[2:, :2] = cr, cr.T
    graph = PairGraph(("dog", "cat"), ("dog", "house"), (True,) * 4, adj)
    assert signal.graph_statistics(graph) == pytest.approx(
        {"mean_weight": 1.8 / 4, "max_weight": 1.0, "close_pairs": 2.0}, rel=ROUNDING)
    empty = PairGraph(("dog",), (), (True,), np.zeros((1, 1), dtype=np.float32))
    assert signal.graph_statistics(empty) == {"mean_weight": 0.0, "max_weight": 0.0, "close_pairs": 0.0}
