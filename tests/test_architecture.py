"""The layout ARCHITECTURE.md describes, checked (issue 17).

* One place per metric: outside a metric's own sub-package ``dialeval/<name>/`` (and its evaluate
  module, training and benchmark scripts, hub folder, tests and docs), no Python code names a
  metric, except the one registry list :data:`dialeval.registry.METRICS`. "Names" means code:
  identifiers, imports and string literals; docstrings and comments are documentation.
* No import cycle between dialeval's modules, counting every import statement (also the ones inside
  functions, which run later but still tie the two modules together).
* Every import statement points down ARCHITECTURE.md's layers (:data:`LAYERS`, top first) or stays
  within its layer; the registry imports each metric's ``spec`` and nothing else of a metric package;
  the known exceptions are :data:`EXCEPTIONS`, each with why.
* The top level of ``dialeval/`` is the layers of ARCHITECTURE.md (packages, ``registry.py``,
  ``integrations.py``, ``version.py``) and the metric packages; no module is over 600 lines;
  ``dialeval/stats/`` imports no other dialeval package but ``dialeval.version``.
* The old import paths of moved modules (:data:`dialeval.MOVED`) still work, with a
  ``DeprecationWarning``; dialeval's own code (the library, the evaluate modules, the demo Space)
  imports the new paths only.
"""

import ast
import importlib
import importlib.util
import re
import sys
import warnings
from pathlib import Path

import pytest

import dialeval
from dialeval import registry

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dialeval"
# Metric names that are also ordinary words of code and prose ("a full fine-tune", torch.full_like,
# CardSpec.full): for these only the forms that can mean nothing but the metric count: a string
# literal that is the name or starts with "<name>-", "<name>:" or "<name>/" (a set, a path), and
# "metric:<name>" (a signature) or "dialeval.<name>" / "dialeval/<name>" anywhere (imports, module ids).
ORDINARY_WORDS = {"full"}
DISTINCT = "|".join(m for m in registry.METRICS if m not in ORDINARY_WORDS)
WORDS = "|".join(m for m in registry.METRICS if m in ORDINARY_WORDS)
NAME = re.compile(r"(?<![A-Za-z0-9_])(%s)(?![A-Za-z0-9])" % DISTINCT)
WORD_ANYWHERE = re.compile(r"(?:metric:|dialeval[./])(%s)(?![A-Za-z0-9_])" % WORDS)
WORD_LITERAL = re.compile(r"^(%s)(?:[-:/].*)?$" % WORDS, re.DOTALL)


def names_a_metric(text: str, literal: bool) -> bool:
    """Whether ``text`` (a string literal when ``literal``, else an identifier or import) names a metric."""
    if NAME.search(text):
        return True
    return bool(WORDS) and bool(WORD_ANYWHERE.search(text) or (literal and WORD_LITERAL.search(text)))
# Checked: the library outside the metric sub-packages, and the demo Space. training/ and
# benchmarks/ hold one script per model or measurement (training/grade.py trains GRADE).
CHECKED = sorted(
    [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in registry.METRICS]
    + list((ROOT / "spaces").rglob("*.py"))
)
REGISTRY_LIST = PACKAGE / "registry.py"


def docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def metric_names_in_code(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every identifier, import or string literal of ``source`` naming a metric."""
    tree = ast.parse(source)
    docs = docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            texts = [node.value]
        elif isinstance(node, ast.Name):
            texts = [node.id]
        elif isinstance(node, ast.Attribute):
            texts = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts = [node.name]
        elif isinstance(node, ast.arg):
            texts = [node.arg]
        elif isinstance(node, ast.keyword) and node.arg:
            texts = [node.arg]
        elif isinstance(node, ast.Import):
            texts = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            texts = [node.module or ""] + [alias.name for alias in node.names]
        else:
            continue
        literal = isinstance(node, ast.Constant)
        found += [(getattr(node, "lineno", 0), text) for text in texts if names_a_metric(text, literal)]
    return found


def test_no_module_outside_a_metric_names_one():
    offenders = {}
    for path in CHECKED:
        found = metric_names_in_code(path.read_text(encoding="utf-8"))
        if path == REGISTRY_LIST:  # the one list, and nothing else
            tree = ast.parse(path.read_text(encoding="utf-8"))
            lists = [n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "METRICS"]
            allowed = set(range(lists[0].lineno, lists[0].end_lineno + 1)) if lists else set()
            found = [(line, text) for line, text in found if line not in allowed]
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"metric names outside the metric sub-packages: {offenders}"


def test_the_name_check_sees_code_not_documentation():
    source = '''"""The fed metric's docstring may say fed."""
# a comment about grade
from dialeval.fed.scorer import x
def f(holistic_model):
    """Neither here: ssrem."""
    return {"multiref": 1, "degrade": 2}
'''
    names = {text for _, text in metric_names_in_code(source)}
    assert names == {"dialeval.fed.scorer", "holistic_model", "multiref"}


def test_an_ordinary_word_metric_counts_only_where_it_means_the_metric():
    source = '''"""Docstring: full."""
import torch
from dialeval.full.scorer import x
def f(full_stem, full):
    return torch.full_like(full), "a full fine-tune", {"full": 1, "metric:full|v": 2, "full-fed-turn": 3, "dialeval/full": 4}
'''
    names = {text for _, text in metric_names_in_code(source)}
    assert names == {"dialeval.full.scorer", "full", "metric:full|v", "full-fed-turn", "dialeval/full"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the dialeval modules it imports (any import statement, at any depth). ``from
    dialeval import x`` where ``x`` is no module (``__version__``, ``load``) imports the package
    facade, ``dialeval``."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = {f"{node.module}.{alias.name}" for alias in node.names}
                if node.module != "dialeval" or names - set(modules):
                    targets.add(node.module)
                targets |= names
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_metric_declares_itself_completely():
    """Each registry name is a sub-package whose spec names it, scores items and describes every
    scale it declares; its judgment sets are its own, its samples on folders it loads, its benchmarks on its own
    sets or on sets another metric owns."""
    for spec in registry.specs():
        assert (PACKAGE / spec.name / "spec.py").is_file()
        assert spec.scales(), spec.name
        assert all(name.startswith(f"{spec.name}-") for name in spec.judgment_sets), spec.name
        # a paper benchmark is on a set of its own or on one another metric owns (FULL's on FED's sets)
        assert all(name.startswith(f"{spec.name}-") or registry.set_owner(name) not in (None, spec)
                   for name in spec.benchmarks), spec.name
        assert all(job.metric == spec.name for job in spec.grid_jobs), spec.name
        assert set(spec.samples) <= set(spec.bundled), spec.name
    assert [s.name for s in registry.specs()] == list(registry.METRICS)


STATS_ALLOWED = {"__future__", "dataclasses", "math", "typing", "warnings", "numpy", "scipy", "dialeval"}
VERSION = "dialeval.version"


def test_stats_is_pure_numpy_and_scipy():
    """``dialeval/stats/``: no I/O, no metric names (checked above with the rest of the library), and
    no other dialeval package: its modules import only each other, numpy, scipy, a few pure standard
    modules and ``dialeval.version`` (the signatures carry the version), never the package facade."""
    graph = import_graph()
    stats_modules = [name for name in graph if name == "dialeval.stats" or name.startswith("dialeval.stats.")]
    assert "dialeval.stats.paired" in stats_modules
    outside = {name: sorted(t for t in graph[name] if not t.startswith("dialeval.stats") and t != VERSION)
               for name in stats_modules}
    assert not any(outside.values()), f"dialeval.stats imports other dialeval modules: {outside}"
    for path in (PACKAGE / "stats").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]}
                if node.module and node.module.startswith("dialeval"):
                    assert node.module.startswith("dialeval.stats") or (node.module, [a.name for a in node.names]) == (
                        VERSION, ["__version__"]), path
            else:
                continue
            assert roots <= STATS_ALLOWED, f"{path.relative_to(ROOT)} imports {sorted(roots - STATS_ALLOWED)}"


# The layers of ARCHITECTURE.md's table, top to bottom: the top-level names of dialeval/ (packages,
# or modules without .py) each holds. Above them all the package facade, dialeval/__init__.py.
# A metric that reads other metrics (MetricSpec.reads: combined) scores them through the scoring
# layer, so it sits above it; the other metric packages sit below the registry.
READERS = tuple(s.name for s in registry.specs() if s.reads)
PLAIN_METRICS = tuple(m for m in registry.METRICS if m not in READERS)
FACADE = "dialeval"
LAYERS: list[tuple[str, ...]] = [
    ("cli",),
    ("metaeval",),
    ("compare",),
    ("publish",),
    ("modules",),
    ("integrations",),
    READERS,
    ("scoring",),
    ("registry",),
    PLAIN_METRICS,
    ("core",),
    ("models", "data"),
    ("stats",),
    ("version",),
]
# Layers whose members are kept apart: a metric package imports no other metric package.
APART = {PLAIN_METRICS, READERS}
# The registry imports each metric's spec module by name (importlib.import_module(f"dialeval.{name}.spec"));
# that edge is explicit here, and it is the only thing of a metric package the registry may import.
REGISTRY = "dialeval.registry"
SPEC_EDGES = {(REGISTRY, f"dialeval.{name}.spec") for name in registry.METRICS}
# Known imports against the order, each with why (ARCHITECTURE.md lists them): a metric's paper
# benchmark reproduces its paper's table, which reads another metric's human-judgment sets and
# scores its baselines with another metric.
EXCEPTIONS = {
    ("dialeval.full.benchmark", "dialeval.registry"): "FULL's paper table is on FED's sets, loaded by name",
    ("dialeval.usl.benchmark", "dialeval.registry"): "USL-H's published numbers (Yeh et al.) are on others' sets",
    ("dialeval.grade.benchmark", "dialeval.multiref.runner"): "GRADE's paper table has BLEU/ROUGE/embedding baselines",
    ("dialeval.ssrem.benchmark", "dialeval.multiref.runner"): "SSREM's paper table has BLEU/ROUGE/embedding baselines",
    ("dialeval.ssrem.benchmark", "dialeval.grade.data"): "SSREM's paper table is on GRADE's sets",
    ("dialeval.ssrem.benchmark", "dialeval.multiref.data"): "SSREM's paper table is on the multi-reference set",
    ("dialeval.holistic.augment", "dialeval.fed.runner"): "holistic's augmentation generates with FED's dialogue model",
}
TOP_LEVEL_MODULES = {"__init__.py", "integrations.py", "registry.py", "version.py"}


def top_name(module: str) -> str:
    """The top-level name under dialeval/ that ``module`` belongs to (``FACADE`` for the package itself)."""
    return module.split(".")[1] if module != FACADE else FACADE


def layer_violations(graph: dict[str, set[str]], layers: list[tuple[str, ...]], apart: set[tuple[str, ...]],
                     spec_edges: set[tuple[str, str]], registry_module: str,
                     exceptions: dict[tuple[str, str], str]) -> list[tuple[str, str]]:
    """The imports ``(module, imported)`` of ``graph`` that do not point down ``layers`` (top first,
    the facade above them all) nor stay within one package, or within a layer not kept ``apart``;
    the registry may import a metric package's spec (``spec_edges``) and nothing else of it; the
    ``exceptions`` are left out."""
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    rank[FACADE] = -1
    layer_of = {name: layer for layer in layers for name in layer}
    metrics = {name for layer in apart for name in layer}
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module] | {t for m, t in spec_edges if m == module}):
            a, b = top_name(module), top_name(target)
            if (module, target) in exceptions:
                continue
            if module == registry_module and b in metrics:
                if (module, target) not in spec_edges:
                    found.append((module, target))
                continue
            if a == b or rank[b] > rank[a] or (layer_of.get(a) == layer_of.get(b) and layer_of[a] not in apart):
                continue
            found.append((module, target))
    return found


def test_every_import_points_down_the_layers():
    graph = import_graph()
    assert {top_name(m) for m in graph} == {FACADE} | {name for layer in LAYERS for name in layer}
    found = layer_violations(graph, LAYERS, APART, SPEC_EDGES, REGISTRY, EXCEPTIONS)
    assert not found, f"imports against ARCHITECTURE.md's layers (module, imported): {found}"


def test_the_registry_imports_the_specs_by_name():
    """The explicit edge is the one the registry makes, and every known exception is still there."""
    assert 'importlib.import_module(f"dialeval.{name}.spec")' in (PACKAGE / "registry.py").read_text(encoding="utf-8")
    graph = import_graph()
    assert all(target in graph[module] for module, target in EXCEPTIONS), "an exception no longer happens: drop it"


def test_the_layer_check_finds_an_upward_import():
    layers = [("cli",), ("registry",), ("a", "b"), ("core",), ("models", "data"), ("stats",)]
    apart = {("a", "b")}
    specs = {("dialeval.registry", "dialeval.a.spec"), ("dialeval.registry", "dialeval.b.spec")}

    def check(graph, exceptions=None):
        graph = {**{m: set() for targets in graph.values() for m in targets}, **graph}
        return layer_violations(graph, layers, apart, specs, "dialeval.registry", exceptions or {})

    down = {"dialeval.cli.x": {"dialeval.registry", "dialeval.core.y", "dialeval.cli.z"},
            "dialeval.a.runner": {"dialeval.a.scorer", "dialeval.core.y", "dialeval.stats.s"},
            "dialeval.models.m": {"dialeval.data.d"}, "dialeval.data.d": {"dialeval.models.m"},
            "dialeval.registry": {"dialeval.core.y"}, "dialeval": {"dialeval.cli.x"}}
    assert check(down) == []  # the registry's spec edges are added, and allowed
    assert check({"dialeval.core.y": {"dialeval.registry"}}) == [("dialeval.core.y", "dialeval.registry")]
    assert check({"dialeval.stats.s": {"dialeval"}}) == [("dialeval.stats.s", "dialeval")]  # the facade
    assert check({"dialeval.a.runner": {"dialeval.b.data"}}) == [("dialeval.a.runner", "dialeval.b.data")]
    assert check({"dialeval.registry": {"dialeval.a.runner"}}) == [("dialeval.registry", "dialeval.a.runner")]
    assert check({"dialeval.core.y": {"dialeval.a.spec"}}) == [("dialeval.core.y", "dialeval.a.spec")]
    assert check({"dialeval.core.y": {"dialeval.registry"}}, {("dialeval.core.y", "dialeval.registry"): "why"}) == []


def test_the_top_level_shows_the_architecture():
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__" and not p.name.startswith(".")}
    names = {name for layer in LAYERS for name in layer}
    assert set(registry.METRICS) <= names
    assert entries == {f"{name}.py" if (PACKAGE / f"{name}.py").is_file() else name for name in names} | {"__init__.py"}
    assert {e for e in entries if e.endswith(".py")} == TOP_LEVEL_MODULES
    assert all((PACKAGE / name / "__init__.py").is_file() for name in names if not (PACKAGE / f"{name}.py").is_file())


MAX_LINES = 600


def test_no_module_is_over_600_lines():
    lengths = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    too_long = {path: n for path, n in lengths.items() if n > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES} lines (split them along their sections): {too_long}"


def imported_modules(source: str) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every absolute import of ``source``, the names of ``from X import
    a`` counted as ``X.a`` too (``a`` may be a module)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)] + [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_dialeval_code_imports_no_old_path():
    shipped_code = list(PACKAGE.rglob("*.py")) + list((ROOT / "metrics").rglob("*.py")) + list((ROOT / "spaces").rglob("*.py"))
    offenders = {
        str(path.relative_to(ROOT)): [(line, name, dialeval.new_path(name))
                                      for line, name in imported_modules(path.read_text(encoding="utf-8"))
                                      if dialeval.new_path(name)]
        for path in shipped_code
    }
    offenders = {path: found for path, found in offenders.items() if found}
    assert not offenders, f"imports of old module paths (import the new one): {offenders}"


def test_every_moved_module_has_its_new_path():
    for old, new in dialeval.MOVED.items():
        assert old.startswith("dialeval.") and new.startswith("dialeval."), old
        assert importlib.util.find_spec(new) is not None, new
        assert not (PACKAGE / (old[len("dialeval."):].replace(".", "/") + ".py")).exists(), f"{old} is still a file"


@pytest.mark.parametrize("old", ["dialeval.metric_base", "dialeval.benchmark.grid", "dialeval.score_cache"])
def test_an_old_path_is_the_new_module_with_a_warning(old, monkeypatch):
    new = dialeval.new_path(old)
    module = importlib.import_module(new)
    with warnings.catch_warnings():  # a moved parent package (dialeval.benchmark) warns on its own
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module(old.rsplit(".", 1)[0])
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=re.escape(f"{old} moved to {new}")):
        assert importlib.import_module(old) is module
    assert module.__spec__.name == new  # the module keeps its own spec
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert importlib.import_module(old) is module  # once imported, no second warning
