"""The ``precision`` option (dialeval.core.precision): ``auto``'s choice with the CPU's flags faked,
each reduced path on the tiny GPT-2 against float32 within the bound of tests/float_noise.py, the
precision named in the signature and keyed in the score cache. Every other test pins float32."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from float_noise import reduced_logit_tolerance
from tiny_lm import tiny_gpt2
from transformers import AutoModelForCausalLM

from dialeval.core import precision as prec
from dialeval.core.lm import LMScorer
from dialeval.fed.scorer import FEDScorer

NO_FLAGS = frozenset({"avx", "avx2", "fma"})  # this project's 2-core EPYC: neither bfloat16 nor VNNI
BF16 = NO_FLAGS | {"avx512f", "avx512_bf16"}
VNNI = NO_FLAGS | {"avx512f", "avx512_vnni"}
BOTH = BF16 | VNNI
TEXTS = ["Hi! How are you doing today? I'm doing well.", "Do you like to read books? I mostly read science fiction.",
         "That's really interesting!", "Sure! Numbers like 1, 2, 3 and 42 are fine."]


def fake_flags(monkeypatch, flags):
    monkeypatch.setattr(prec, "cpu_flags", lambda: frozenset(flags))


def test_bad_precision_is_named():
    with pytest.raises(ValueError, match=r"precision must be one of .*'float16'"):
        prec.check_precision("float16")
    assert prec.check_precision(None) == "float32"


@pytest.mark.parametrize("flags, native", [
    (NO_FLAGS, ("float32",)),
    (BF16, ("bfloat16", "float32")),
    (VNNI, ("int8", "float32")),
    (BOTH, ("int8", "bfloat16", "float32")),
    (NO_FLAGS | {"amx_bf16", "amx_int8"}, ("int8", "bfloat16", "float32")),
    (NO_FLAGS | {"avx_vnni"}, ("int8", "float32")),
])
def test_native_precisions_follow_the_cpu_flags(monkeypatch, flags, native):
    fake_flags(monkeypatch, flags)
    assert prec.native_precisions("cpu") == native
    assert prec.native_precisions("cuda:0") == ("bfloat16", "float32")  # whatever the CPU


@pytest.mark.parametrize("flags, passing, device, chosen", [
    (NO_FLAGS, ("bfloat16", "int8"), "cpu", "float32"),  # declared, but emulated here: float32
    (BOTH, (), "cpu", "float32"),  # native, but nothing declared passing: float32
    (BF16, ("bfloat16", "int8"), "cpu", "bfloat16"),
    (VNNI, ("bfloat16", "int8"), "cpu", "int8"),
    (BOTH, ("bfloat16", "int8"), "cpu", "int8"),  # the faster of the two
    (BOTH, ("bfloat16",), "cpu", "bfloat16"),
    (NO_FLAGS, ("bfloat16", "int8"), "cuda", "bfloat16"),  # dynamic int8 is a CPU path
    (NO_FLAGS, ("int8",), "cuda", "float32"),
])
def test_auto_picks_the_fastest_declared_native_precision(monkeypatch, flags, passing, device, chosen):
    fake_flags(monkeypatch, flags)
    assert prec.resolve_precision("auto", device, passing) == chosen


def test_an_explicit_precision_is_kept_and_int8_is_cpu_only(monkeypatch):
    fake_flags(monkeypatch, NO_FLAGS)
    assert prec.resolve_precision("bfloat16", "cpu") == "bfloat16"  # forced: emulated, but as asked
    assert prec.resolve_precision("int8", "cpu") == "int8"
    with pytest.raises(ValueError, match="CPU only"):
        prec.resolve_precision("int8", "cuda")


def test_cpu_flags_are_read_from_cpuinfo():
    flags = prec.cpu_flags()
    assert isinstance(flags, frozenset)
    # Linux with x86 here and in CI; elsewhere the set is empty and auto keeps float32
    assert not flags or "sse2" in flags or "fp" in flags or "neon" in flags or "asimd" in flags


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_gpt2")
    tiny_gpt2(path)
    return path


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory):
    """A tiny random Llama (seed 0): every projection an ``nn.Linear``, as in Gemma and SmolLM2, so
    that int8 quantises the attention and the MLPs too (GPT-2's are ``Conv1D``)."""
    from tiny_lm import tiny_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    path = tmp_path_factory.mktemp("tiny_llama")
    tokenizer = tiny_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                         initializer_range=0.5, bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def fresh(tiny_dir):
    """A new copy of the tiny model (bfloat16 casts a model in place)."""
    from tiny_lm import tiny_tokenizer

    return AutoModelForCausalLM.from_pretrained(tiny_dir), tiny_tokenizer()


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
@pytest.mark.parametrize("precision", ["bfloat16", "int8"])
def test_reduced_paths_match_float32_within_the_rounding_bound(request, kind, precision):
    folder = request.getfixturevalue({"gpt2": "tiny_dir", "llama": "tiny_llama_dir"}[kind])
    model, tokenizer = fresh(folder)
    seqs = [tokenizer.encode(t) for t in TEXTS]
    reference = LMScorer(model, tokenizer, batch_size=2)
    with torch.no_grad():
        max_logit = max(model(torch.tensor([s])).logits.abs().max().item() for s in seqs)
    tol = reduced_logit_tolerance(model.config.num_hidden_layers, max_logit, precision)
    reduced = LMScorer(fresh(folder)[0], tokenizer, batch_size=2, precision=precision)
    assert reduced.precision == precision
    if precision == "bfloat16":
        assert reduced.model.dtype == torch.bfloat16
    else:
        linears = [m for m in reduced.model.modules() if isinstance(m, torch.ao.nn.quantized.dynamic.Linear)]
        assert isinstance(reduced.model.lm_head, torch.ao.nn.quantized.dynamic.Linear)
        assert len(linears) == {"gpt2": 1, "llama": 1 + 2 * 7}[kind]  # the head; q, k, v, o, gate, up, down
        assert not any(isinstance(m, torch.nn.Linear) for m in reduced.model.modules())
        assert all(m.weight().qscheme() == torch.per_channel_affine for m in linears)  # one scale per row
    # whole sequences (padded batches), one prefix with packed continuations, FED's grouped forward
    prefix, conts = seqs[0], seqs[1:]
    groups = [(seqs[0], seqs[2:]), (seqs[1], seqs[2:] + [seqs[0][:3]])]
    pairs = [
        (reference.sequence_logprobs(seqs), reduced.sequence_logprobs(seqs)),
        (reference.continuation_logprobs(prefix, conts), reduced.continuation_logprobs(prefix, conts)),
        *[(ref_cont, red_cont) for (_, ref_cont), (_, red_cont) in
          zip(reference.grouped_logprobs(groups), reduced.grouped_logprobs(groups))],
    ]
    moved = False
    for expected, got in pairs:
        for (want, count), (have, n) in zip(expected, got):
            assert n == count
            assert abs(have - want) <= 2 * count * tol, (precision, want, have, count, tol)
            moved |= have != want
    assert moved  # the reduced forward really ran: float32 would give the same numbers


def test_log_probabilities_are_taken_in_float32():
    from dialeval.core.lm import _log_softmax

    logits = torch.tensor([[3.0, 1.0, -2.0]], dtype=torch.bfloat16)
    assert _log_softmax(logits).dtype == torch.float32


CONVERSATIONS = [["Hi!", "Hello, how is your day?"], ["What music do you like?", "Jazz, mostly."]]


@pytest.mark.parametrize("precision, field", [("float32", None), ("bfloat16", "precision:bfloat16"),
                                              ("int8", "precision:int8"), ("auto", None)])
def test_the_signature_names_the_precision_used(monkeypatch, tiny_dir, precision, field):
    fake_flags(monkeypatch, BOTH)  # auto without a declared precision stays float32 even here
    result = FEDScorer(fresh(tiny_dir), batch_size=8, precision=precision).score(CONVERSATIONS)
    parts = result["signature"].split("|")
    assert [p for p in parts if p.startswith("precision:")] == ([field] if field else [])


ITEMS = [{"context": ["Hi!"], "response": "Hello there.", "references": ["Hello."]}]


def declaring(monkeypatch, passing, metric="fed"):
    """``metric``'s spec declares ``passing`` as the precisions ``auto`` may pick."""
    from dialeval import registry

    real = registry.spec
    monkeypatch.setattr(registry, "spec", lambda name: dataclasses.replace(real(name), auto_precisions=passing)
                        if name == metric else real(name))


def test_the_cache_key_holds_the_precision_as_run(monkeypatch, tmp_path):
    from dialeval.scoring.cache import cache_key

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    plain = cache_key("fed", {"device": "cpu"}, ITEMS)
    assert cache_key("fed", {"device": "cpu", "precision": "float32"}, ITEMS) == plain  # the default, left out
    bf16 = cache_key("fed", {"device": "cpu", "precision": "bfloat16"}, ITEMS)
    int8 = cache_key("fed", {"device": "cpu", "precision": "int8"}, ITEMS)
    assert len({plain, bf16, int8}) == 3
    fake_flags(monkeypatch, NO_FLAGS)
    declaring(monkeypatch, ("bfloat16",))
    assert cache_key("fed", {"device": "cpu", "precision": "auto"}, ITEMS) == plain  # auto ran float32 here
    fake_flags(monkeypatch, BF16)
    assert cache_key("fed", {"device": "cpu", "precision": "auto"}, ITEMS) == bf16  # auto ran bfloat16


def test_combined_keys_each_components_precision(monkeypatch):
    from dialeval.scoring.runners import precision_keyed

    fake_flags(monkeypatch, BF16)
    declaring(monkeypatch, ("bfloat16",), "holistic")
    keyed = precision_keyed("combined", {"precision": "auto", "device": "cpu"})
    assert keyed["precision"] == {"holistic": "bfloat16", "grade": "float32", "ssrem": "float32"}  # the others declare nothing


def test_precision_is_not_a_neutral_option_of_the_human_reference():
    from dialeval.scoring.human_reference import reference_options

    assert reference_options("fed", {"precision": "bfloat16"})["precision"] == "bfloat16"
    assert "precision" not in reference_options("fed")  # float32 references keep their key


def test_combined_names_its_components_precisions():
    from dialeval.combined.runner import precisions_named

    assert precisions_named({"fed": "metric:fed|precision:bfloat16|version:1", "grade": "metric:grade|version:1",
                             "full": "metric:full|precision:int8|version:1"}) == "bfloat16+int8"
    assert precisions_named({"grade": "metric:grade|version:1"}) is None


@pytest.mark.parametrize("precision, field", [("bfloat16", ["precision:bfloat16"]), (None, [])])
def test_the_fed_module_takes_the_option(tiny_dir, precision, field):
    import evaluate

    from dialeval.modules.loading import module_dir

    fed = evaluate.load(str(module_dir("fed")))
    result = fed.compute(conversations=CONVERSATIONS, model=str(tiny_dir), qualities=["interesting"],
                         **({} if precision is None else {"precision": precision}))
    assert [p for p in result["signature"].split("|") if p.startswith("precision:")] == field
    with pytest.raises(ValueError, match="precision must be one of"):
        fed.compute(conversations=CONVERSATIONS, model=str(tiny_dir), precision="fp8")
