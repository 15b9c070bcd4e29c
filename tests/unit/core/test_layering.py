"""The layers of python/iree_conformance (ARCHITECTURE.md, "Layers" and "Layering"),
checked on the imports.

An AST walk rather than import-linter: the rules need the standard library's module list
and modules with documented third-party exceptions, and a walk stays a few lines.
Imports under ``if TYPE_CHECKING:`` are left out: they never run. Imports inside functions
count: a lazy import upward is still a dependency upward.
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGE = "iree_conformance"
# The CI commands are one package, `ci` (`python -m ci COMMAND`): its modules import only
# as `ci.<name>`, so the top-level name is the whole rule.
CI_PACKAGE = "ci"
# Third-party imports a standard-library-only module may still make, and why.
EXCEPTIONS = {
    "common.tomlio": {"tomli"},  # the tomllib backport, only on Python 3.10
    "expectations.manifest": {"tomlkit"},  # the writing half (update-expectations), imported there
}
# The engine reaches a frontend only through the registry (frontends/registry.py), as
# cibuildwheel reaches its platforms; the StableHLO check ops' runtime half (the check
# module merged into batches, the recorder the runtime loads) is the one exception.
FRONTEND_DOORS = (
    "frontends.registry",
    "frontends.stablehlo.checks",
    "frontends.stablehlo.check_module",
)


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted: iree_conformance.report.html.render
    target: str  # the imported module, dotted and absolute
    line: int
    lazy: bool = False  # inside a function: runs when called, not when the module is imported


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(root: Path, type_checking: bool = False, each_name: bool = False) -> list[Import]:
    """Every import in the package under root (a folder named iree_conformance); with
    type_checking, those under ``if TYPE_CHECKING:`` too; with each_name, ``from m import
    a`` gives ``m.a`` (a submodule, or a name of m) rather than ``m``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        package = module if is_package else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set() if type_checking else _type_checking_lines(tree)
        lazy = {
            inner.lineno
            for fn in ast.walk(tree)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for inner in ast.walk(fn)
            if isinstance(inner, (ast.Import, ast.ImportFrom))
        }
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.Import):
                found += [
                    Import(module, a.name, node.lineno, node.lineno in lazy) for a in node.names
                ]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                named = each_name or not node.module
                names = [f"{prefix}.{a.name}" for a in node.names] if named else []
                found += [
                    Import(module, t, node.lineno, node.lineno in lazy) for t in names or [prefix]
                ]
    return found


def _architecture() -> str:
    return (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")


def stdlib_only_modules() -> set[str]:
    """The list in ARCHITECTURE.md's "Layering:" sentence (the doc is the source), as
    dotted names inside the package: ``common.errors``."""
    sentence = re.search(r"Layering:(.*?)are standard library only", _architecture(), re.S)
    assert sentence, "ARCHITECTURE.md lost its 'Layering: ... are standard library only' line"
    return {m.replace("/", ".") for m in re.findall(r"`([\w/]+)`", sentence.group(1))}


def layer_order() -> list[str]:
    """ARCHITECTURE.md's "Layers, lowest first:" sentence: the subpackages in order."""
    sentence = re.search(r"Layers, lowest first:(.*?)\.\s", _architecture(), re.S)
    assert sentence, "ARCHITECTURE.md lost its 'Layers, lowest first: ...' sentence"
    return re.findall(r"`(\w+)/`", sentence.group(1))


def _within(name: str, modules: set[str]) -> bool:
    """Whether dotted name (a module, or a name imported from one) lies in one of modules."""
    return any(name == m or name.startswith(f"{m}.") for m in modules)


def layer_violations(root: Path, order: list[str]) -> list[str]:
    """A module imports only its own layer and the layers below it; every module lives in
    a layer (the package's __init__ aside)."""
    rank = {name: i for i, name in enumerate(order)}
    out = []
    for path in sorted(root.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if path.name == "__init__.py" or not (path.is_dir() or path.suffix == ".py"):
            continue
        if path.is_dir() and not (path / "__init__.py").exists():
            continue
        if name not in rank:
            out.append(f"{PACKAGE}/{path.name} is in no layer (ARCHITECTURE.md, 'Layers')")
    for imp in imports_of(root):
        source = imp.module.split(".")
        target = imp.target.split(".")
        if target[0] != PACKAGE or len(source) < 2 or len(target) < 2:
            continue
        low, high = source[1], target[1]
        if low in rank and high in rank and rank[high] > rank[low]:
            out.append(
                f"{imp.module}:{imp.line} imports {imp.target}: the {low}/ layer sits below {high}/"
            )
    return out


def _packages_of(modules: set[str]) -> set[str]:
    """The package __init__ modules on the way to each module: importing ``common.errors``
    runs ``common/__init__.py`` too."""
    return {".".join(m.split(".")[:i]) for m in modules for i in range(1, m.count(".") + 1)}


def violations(root: Path, stdlib_only: set[str]) -> list[str]:
    out = []
    for imp in imports_of(root):
        top = imp.target.split(".")[0]
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        short = imp.module.removeprefix(f"{PACKAGE}.")
        if short in stdlib_only and top not in sys.stdlib_module_names | {"__future__"}:
            inner = imp.target.removeprefix(f"{PACKAGE}.")
            if top != PACKAGE and top not in EXCEPTIONS.get(short, set()):
                out.append(f"{where}: {short} is standard library only")
            elif top == PACKAGE and not (
                _within(inner, stdlib_only) or inner in _packages_of(stdlib_only)
            ):
                out.append(f"{where}: {short} may import only the standard-library-only modules")
        if (
            short.startswith("engine.")
            and imp.target.startswith(f"{PACKAGE}.frontends.")
            and not _within(imp.target.removeprefix(f"{PACKAGE}."), set(FRONTEND_DOORS))
        ):
            out.append(f"{where}: the engine reaches a frontend through frontends/registry")
        if top == "cache_tools":
            out.append(f"{where}: the core never imports cache_tools")
        if top in (CI_PACKAGE, "devtools"):
            out.append(f"{where}: {PACKAGE} never imports {top}/")
        if top == "jinja2" and imp.module != f"{PACKAGE}.report.html.render":
            out.append(f"{where}: only report/html/render.py imports jinja2")
        if top in ("jax", "flax") and not (
            imp.module.startswith(f"{PACKAGE}.frontends.jax_export.") and imp.lazy
        ):
            out.append(
                f"{where}: only the jax_export package imports JAX, and only inside functions "
                "(the core runs without it)"
            )
        torch_packages = (f"{PACKAGE}.frontends.torch_export.", f"{PACKAGE}.frontends.generation.")
        if (top in ("torch", "transformers") or imp.target.startswith("iree.turbine")) and not (
            imp.module.startswith(torch_packages) and imp.lazy
        ):
            out.append(
                f"{where}: only the torch_export and generation packages import torch and "
                "iree-turbine, and only inside functions (the core runs without them)"
            )
    return out


def _requirement_modules(pyproject: Path) -> set[str]:
    """The import names of a pyproject.toml's dependencies (``tomli`` for ``tomli>=2.0; ...``)."""
    text = pyproject.read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block, f"{pyproject} has no dependencies list"
    names = re.findall(r'^\s*"([A-Za-z0-9_.-]+)', block.group(1), re.M)
    return {n.lower().replace("-", "_") for n in names}


def cache_tools_violations(root: Path, allowed: set[str]) -> list[str]:
    """cache_tools is its own distribution: it imports the standard library, itself and the
    dependencies its pyproject.toml declares, and never iree_conformance or ci/."""
    out = []
    for imp in imports_of(root):
        top = imp.target.split(".")[0]
        if top in sys.stdlib_module_names | {"__future__", root.name} or top in allowed:
            continue
        out.append(f"{imp.module}:{imp.line} imports {imp.target}: not a dependency of cache-tools")
    return out


def test_cache_tools_stands_alone():
    root = REPO / "cache_tools"
    allowed = _requirement_modules(root / "pyproject.toml")
    assert {"zstandard", "requests", "platformdirs", "tomli"} <= allowed
    assert cache_tools_violations(root, allowed) == []


def test_the_cache_tools_check_finds_a_core_import(tmp_path):
    pkg = tmp_path / "cache_tools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(
        "import json\nimport zstandard\nfrom . import x\n\n"
        "def f():\n    from iree_conformance.common import errors\n"
    )
    assert cache_tools_violations(pkg, {"zstandard"}) == [
        "cache_tools.m:6 imports iree_conformance.common: not a dependency of cache-tools"
    ]


def test_the_tree_keeps_its_layers():
    modules = stdlib_only_modules()
    assert {"common.errors", "model.results", "expectations.manifest"} <= modules
    root = REPO / "python" / PACKAGE
    missing = {m for m in modules if not (root / (m.replace(".", "/") + ".py")).exists()}
    assert missing == set(), "ARCHITECTURE.md lists modules that do not exist"
    assert violations(root, modules) == []
    order = layer_order()
    assert order[0] == "common" and order[-1] == "cli" and len(order) == len(set(order))
    assert layer_violations(root, order) == []


def test_the_stdlib_only_packages_stay_empty():
    """ci/ imports the standard-library-only modules before anything is installed: the
    package __init__ files on their way must import nothing."""
    root = REPO / "python" / PACKAGE
    for package in _packages_of(stdlib_only_modules()) | {""}:
        init = root / package.replace(".", "/") / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))], init


def test_a_violation_fails(tmp_path):
    tree = tmp_path / PACKAGE
    shutil.copytree(REPO / "python" / PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    edits = {
        "common/errors.py": "import numpy\n",
        "model/results.py": "from ..common.store import Store\n",
        "report/markdown.py": "import jinja2\n",
        "cli/main.py": "from cache_tools import units\nfrom ci._common import CIError\n",
        "report/html/charts.py": "from jax import numpy\n",
        "report/html/render.py": "import torch\n",
        "frontends/torch_export/spec.py": "from iree.turbine import aot\n",
        "model/cases.py": "from iree_conformance.engine import pipeline\n",
        "common/timing.py": "def later():\n    from ..report import model\n",
        "engine/worker/importer.py": "def later():\n    from iree_conformance.frontends.onnx import prepare\n",
    }
    for name, line in edits.items():
        with (tree / name).open("a", encoding="utf-8") as fh:
            fh.write(line)
    (tree / "stray.py").write_text("", encoding="utf-8")
    found = "\n".join(
        violations(tree, stdlib_only_modules()) + layer_violations(tree, layer_order())
    )
    for expected in (
        "iree_conformance.common.errors:",
        "imports numpy: common.errors is standard library only",
        "imports iree_conformance.common.store: model.results may import only",
        "iree_conformance.report.markdown:",
        "only report/html/render.py imports jinja2",
        "the core never imports cache_tools",
        "imports ci._common: iree_conformance never imports ci/",
        "only the jax_export package imports JAX, and only inside functions",
        "imports torch: only the torch_export and generation packages import torch and iree-turbine",
        "imports iree.turbine",
        "iree_conformance.model.cases:",
        "imports iree_conformance.report: the common/ layer sits below report/",
        "imports iree_conformance.engine: the model/ layer sits below engine/",
        "iree_conformance/stray.py is in no layer",
        "the engine reaches a frontend through frontends/registry",
    ):
        assert expected in found, (expected, found)


def test_relative_imports_resolve(tmp_path):
    pkg = tmp_path / PACKAGE / "html"
    pkg.mkdir(parents=True)
    (tmp_path / PACKAGE / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "site.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import charts\nfrom ..errors import E\n"
        "if TYPE_CHECKING:\n    import jinja2\n",
        encoding="utf-8",
    )
    targets = {i.target for i in imports_of(tmp_path / PACKAGE) if i.module.endswith("site")}
    assert targets == {"typing", "iree_conformance.html.charts", "iree_conformance.errors"}


def _modules_of(root: Path) -> set[str]:
    found = set()
    for path in root.rglob("*.py"):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def import_circles(*roots: Path) -> list[list[str]]:
    """The module cycles of the packages under roots, within and across them (strongly
    connected components of more than one module), counting every import: lazy ones and
    those under ``if TYPE_CHECKING:`` too, since a circle of either still means two modules
    that cannot be read apart."""
    modules = set().union(*(_modules_of(root) for root in roots))

    def module_of(name: str) -> str:  # "pkg.mod.Name" -> "pkg.mod"
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {m: set() for m in modules}
    found = [i for root in roots for i in imports_of(root, type_checking=True, each_name=True)]
    for imp in found:
        target = module_of(imp.target)
        if target and target != imp.module and imp.module in graph:
            graph[imp.module].add(target)
    # Tarjan's algorithm, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    return sorted(circles)


# Every package of the tree: the library, its tools, its tests.
TREE_PACKAGES = ("python/iree_conformance", "benchmarks", "devtools", "ci", "cache_tools", "tests")


def test_no_import_circle_anywhere():
    roots = [REPO / name for name in TREE_PACKAGES]
    top = {p.parent for p in REPO.glob("*/__init__.py")} | {REPO / "python" / PACKAGE}
    assert top == set(roots), "a new top-level package: add it to TREE_PACKAGES"
    assert import_circles(*roots) == []


def test_a_circle_across_packages_fails(tmp_path):
    for name, line in (("ci", "from devtools.b import f\n"), ("devtools", "import ci.a\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("", encoding="utf-8")
        (tmp_path / name / ("a.py" if name == "ci" else "b.py")).write_text(line, encoding="utf-8")
    assert import_circles(tmp_path / "ci", tmp_path / "devtools") == [["ci.a", "devtools.b"]]


def test_an_import_circle_fails(tmp_path):
    tree = tmp_path / PACKAGE
    shutil.copytree(REPO / "python" / PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    with (tree / "suites" / "option.py").open("a", encoding="utf-8") as fh:
        fh.write("\nif TYPE_CHECKING:\n    from iree_conformance.suites.base import Suite\n")
    with (tree / "model" / "targets.py").open("a", encoding="utf-8") as fh:
        fh.write("\ndef later():\n    from iree_conformance.model import devices\n")
    with (tree / "model" / "devices.py").open("a", encoding="utf-8") as fh:
        fh.write("\nfrom iree_conformance.model.targets import Target\n")
    assert import_circles(tree) == [
        ["iree_conformance.model.devices", "iree_conformance.model.targets"],
        [  # base -> run_options (type only) -> option -> base
            "iree_conformance.suites.base",
            "iree_conformance.suites.option",
            "iree_conformance.suites.run_options",
        ],
    ]
