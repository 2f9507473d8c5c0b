"""The LM metrics on CUDA (issue 34, item 5), skipped where torch sees no GPU: the same scores as on
the CPU from tiny random models, with the GPU's larger default batches of the grouped path.

float32 on both devices with TF32 off, so the two differ only in summation order: ``float_noise.SUM``
(1e-5) relative on a sum of log-probabilities, ``LOGPROB`` (1e-4) for sums near zero, ``PERPLEXITY``
on FULL's perplexities. The GPU's speed is measured by ``benchmarks/cuda_throughput.py``, not here.
"""

import pytest
import torch

from dialeval.core.lm import LMScorer, default_batch_tokens
from dialeval.fed.scorer import FEDScorer
from dialeval.full.scorer import FULLScorer
from dialeval.holistic.scorer import LikelihoodScorer
from float_noise import LOGPROB, PERPLEXITY, SUM
from tiny_lm import tiny_gpt2, tiny_tokenizer

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

CONVERSATIONS = [
    ["Hi!", "Hello, how is your day?", "It's good. How about you?"],
    ["What kind of music do you listen to?", "I love jazz and a bit of rock."],
    ["Sitting in a meeting", "What kind of meeting?", "Can't say", "It's probably boring, isn't it?"],
]


@pytest.fixture(autouse=True)
def no_tf32():
    old = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def pair(tmp_path, name):
    """A fresh tiny GPT-2 (seed 0) per device: a scorer moves its model in place."""
    return tiny_gpt2(tmp_path / name)


def close(a, b, rel=SUM):
    return a == pytest.approx(b, rel=rel, abs=LOGPROB)


def test_grouped_path_batches_far_larger_on_cuda_with_the_cpu_numbers(tmp_path):
    from test_lm import _random_groups, _tiny_llama

    tokenizer = tiny_tokenizer()
    groups = _random_groups(0, len(tokenizer), n=200)
    cpu = LMScorer(_tiny_llama(tokenizer), tokenizer, device="cpu")
    gpu = LMScorer(_tiny_llama(tokenizer), tokenizer, device="cuda")
    assert default_batch_tokens(gpu.device) > default_batch_tokens(cpu.device)
    expected = cpu.grouped_logprobs(groups, prefix_logprob=True)
    found = gpu.grouped_logprobs(groups, prefix_logprob=True)  # all 200 groups in one or two forwards
    for (fp, fc), (ep, ec) in zip(found, expected):
        assert fp[1] == ep[1] and close(fp[0], ep[0])
        assert [n for _, n in fc] == [n for _, n in ec] and all(close(a, b) for (a, _), (b, _) in zip(fc, ec))


def test_fed_on_cuda_equals_cpu(tmp_path):
    cpu = FEDScorer(pair(tmp_path, "cpu"), device="cpu").score(CONVERSATIONS, level="both")
    gpu = FEDScorer(pair(tmp_path, "gpu"), device="cuda").score(CONVERSATIONS, level="both")
    keys = [k for k, v in cpu.items() if isinstance(v, list) and v and isinstance(v[0], float)]
    assert keys
    for key in keys:
        assert all(close(a, b) for a, b in zip(gpu[key], cpu[key])), key


def test_full_on_cuda_equals_cpu(tmp_path):
    contexts = [turns[:-1] for turns in CONVERSATIONS]
    responses = [turns[-1] for turns in CONVERSATIONS]
    for level in ("turn", "dialog"):
        cpu = FULLScorer(pair(tmp_path, f"cpu-{level}"), device="cpu").score_all(contexts, responses, level)
        gpu = FULLScorer(pair(tmp_path, f"gpu-{level}"), device="cuda").score_all(contexts, responses, level)
        for variant, result in cpu.items():
            assert all(close(a, b, PERPLEXITY)
                       for a, b in zip(gpu[variant]["full_scores"], result["full_scores"])), variant


def test_holistic_likelihoods_on_cuda_equal_cpu(tmp_path):
    queries = [turns[:-1] for turns in CONVERSATIONS]
    responses = [turns[-1] for turns in CONVERSATIONS]
    cpu = LikelihoodScorer(pair(tmp_path, "cpu"), device="cpu")
    gpu = LikelihoodScorer(pair(tmp_path, "gpu"), device="cuda")
    for aspect in ("coherence", "fluency"):
        found = gpu.logprobs(aspect, responses, queries)
        expected = cpu.logprobs(aspect, responses, queries)
        assert [n for _, n in found] == [n for _, n in expected]
        assert all(close(a, b) for (a, _), (b, _) in zip(found, expected)), aspect


def test_grade_lora_cross_encoder_trains_on_cuda(tmp_path):
    """GRADE's LoRA cross-encoder training on the GPU, the path ``hub/grade-dailydialog-cross`` was
    trained on (head, adapter and each batch's graph tensors on the device, held-out scores back on
    the CPU, heads saved from the device): a tiny run writes a checkpoint the CPU scorer loads."""
    grade_trains_and_scores_alike_on_the_cpu(tmp_path, "cuda")


def grade_trains_and_scores_alike_on_the_cpu(tmp_path, device: str) -> None:
    """A tiny GRADE LoRA cross-encoder run on ``device``; the CPU scorer (adapter merged, its own keyword
    graphs) ranks the validation pairs as the run's held-out accuracy, computed on ``device``, says."""
    import json

    from training_scripts import script

    from dialeval.grade.training.accuracy import checkpoint_heldout

    out = script("grade").main(["--tiny", "--lora-r", "8", "--pair-encoding", "cross", "--device", device,
                                "--output", str(tmp_path / "out"), "--work", str(tmp_path / "work")])
    report = json.loads((out / "dialeval_training.json").read_text())
    examples = json.loads(next((tmp_path / "work").glob("validation-*-examples.json")).read_text())
    kinds = ("lexical", "embedding", "random")
    for graph, head in ((True, "graph"), (False, "nograph")):
        on_cpu = checkpoint_heldout(out, examples, graph)
        assert {k: on_cpu[k] for k in kinds} == {k: report["heads"][head]["heldout_accuracy"][k] for k in kinds}, head
