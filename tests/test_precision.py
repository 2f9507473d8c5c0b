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
    (BF16, ("bfloat16", "bfloat16-matmul", "float32")),
    (VNNI, ("int8", "float32")),
    (BOTH, ("int8", "bfloat16", "bfloat16-matmul", "float32")),
    (NO_FLAGS | {"amx_bf16", "amx_int8"}, ("int8", "bfloat16", "bfloat16-matmul", "float32")),
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
    (BF16, ("bfloat16-matmul",), "cpu", "bfloat16-matmul"),
    (BOTH, ("bfloat16", "bfloat16-matmul"), "cpu", "bfloat16"),
    (NO_FLAGS, ("bfloat16-matmul",), "cpu", "float32"),
    (NO_FLAGS, ("bfloat16-matmul",), "cuda", "float32"),  # oneDNN's math mode is a CPU path
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
    with pytest.raises(ValueError, match="CPU only"):
        prec.resolve_precision("bfloat16-matmul", "cuda:0")


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
@pytest.mark.parametrize("precision", ["bfloat16", "int8", "bfloat16-matmul"])
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
    elif precision == "bfloat16-matmul":  # float32 weights; oneDNN's math mode inside the forward only
        assert reduced.model.dtype == torch.float32
        modes = []
        reduced.model.get_output_embeddings().register_forward_hook(
            lambda *_: modes.append(torch.backends.mkldnn.matmul.fp32_precision))
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
    # the reduced forward really ran: float32 would give the same numbers. oneDNN's math mode may leave
    # these tiny products in float32 (it does on an AVX-512 EPYC), so there the check is that the mode is on
    if precision == "bfloat16-matmul":
        assert modes and set(modes) == {"bf16"}
    else:
        assert moved
        assert torch.backends.mkldnn.matmul.fp32_precision != "bf16"  # the mode ends with the model's forward


def test_log_probabilities_are_taken_in_float32():
    from dialeval.core.lm import _log_softmax

    logits = torch.tensor([[3.0, 1.0, -2.0]], dtype=torch.bfloat16)
    assert _log_softmax(logits).dtype == torch.float32


CONVERSATIONS = [["Hi!", "Hello, how is your day?"], ["What music do you like?", "Jazz, mostly."]]


@pytest.mark.parametrize("precision, field", [("float32", None), ("bfloat16", "precision:bfloat16"),
                                              ("int8", "precision:int8"),
                                              ("bfloat16-matmul", "precision:bfloat16-matmul"), ("auto", None)])
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
    matmul = cache_key("fed", {"device": "cpu", "precision": "bfloat16-matmul"}, ITEMS)
    assert len({plain, bf16, int8, matmul}) == 4
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
    # GRADE declares bfloat16 itself (issue 55, precision-grid.md); SSREM declares nothing
    assert keyed["precision"] == {"holistic": "bfloat16", "grade": "bfloat16", "ssrem": "float32"}


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


def test_every_precision_declared_for_auto_is_backed_by_both_measured_rules():
    """A metric's ``auto_precisions`` (its runner's ``AUTO_PRECISIONS``) only with the numbers behind them:
    every job of the metric in ``benchmarks/results/precision.json`` at a per-item Spearman >= 0.999
    against float32, measured on a CPU that runs the precision natively, and its grid cells in
    ``precision-grid.json`` moved by at most 0.005 (``benchmarks/precision_grid.py``)."""
    import json
    from pathlib import Path

    from dialeval import registry

    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    per_item = json.loads((results / "precision.json").read_text(encoding="utf-8"))
    grid = json.loads((results / "precision-grid.json").read_text(encoding="utf-8"))
    native = {p for p, flags in prec.NATIVE_CPU_FLAGS.items() if any(per_item["machine"]["flags"].get(f) for f in flags)}
    declared = {name: registry.spec(name).auto_precisions for name in registry.METRICS}
    for name, precisions in declared.items():
        jobs = [job for job in per_item["jobs"] if job["metric"] == name]
        for precision in precisions:
            assert precision in native, (name, precision, "measured where it is emulated")
            assert jobs and all(job["precisions"][precision]["min_spearman"] >= 0.999 for job in jobs), (name, precision)
            assert grid["metrics"][name][precision]["met"] and grid["metrics"][name][precision]["largest_move"] <= 0.005
    assert any(declared.values())  # the test reads a declaration (issue 55's bfloat16 for GRADE, USL-H)


def test_the_grid_rule_compares_each_reduced_cell_with_its_float32_cell(tmp_path, monkeypatch):
    """benchmarks/precision_grid.py: per metric and precision the largest move of a cell's Spearman, the
    rule met only when it is at most 0.005; cells of other items or without a float32 twin refused."""
    import json
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from precision_grid import compare

    def cell(set_name, job, rho, n=100, precision=None):
        return {"set": set_name, "job": job, "metric": job, "options": {"precision": precision} if precision else {},
                "correlations": {job: {"spearman": rho, "n": n}}}

    def grid(name, *cells):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"cells": list(cells)}))
        return path

    f32 = grid("f32", cell("a", "grade", 0.5), cell("b", "grade", 0.3), cell("a", "usl", 0.2))
    reduced = grid("bf16", cell("a", "grade", 0.504, precision="bfloat16"), cell("b", "grade", 0.294, precision="bfloat16"),
                   cell("a", "usl", 0.2))  # usl ran in float32 there: not compared
    assert compare(f32, reduced) == {"grade": {"bfloat16": {
        "cells": 2, "largest_move": 0.006, "cell": "b x grade:grade", "float32": 0.3, "reduced": 0.294, "met": False}}}
    within = compare(f32, grid("within", cell("a", "grade", 0.504, precision="bfloat16")))
    assert within["grade"]["bfloat16"]["met"] and within["grade"]["bfloat16"]["largest_move"] == 0.004
    with pytest.raises(ValueError, match="100 items in float32, 99"):
        compare(f32, grid("fewer", cell("a", "grade", 0.5, n=99, precision="bfloat16")))
    with pytest.raises(ValueError, match="no float32 cell"):
        compare(f32, grid("other", cell("c", "grade", 0.5, precision="bfloat16")))
