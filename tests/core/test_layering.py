"""The layering of the flat tree (ARCHITECTURE.md, "Layering"), checked on the imports.

An AST walk rather than import-linter: the rules need the standard library's module list
and one module with a documented third-party exception, and a walk stays a few lines.
Imports under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "iree_conformance"
# The CI scripts are one package, `ci` (run as `python -m ci.x`): its modules import only
# as `ci.<name>`, so the top-level name is the whole rule.
CI_PACKAGE = "ci"
# Third-party imports a standard-library-only module may still make, and why.
EXCEPTIONS = {
    "tomlio": {"tomli"},  # the tomllib backport, only on Python 3.10
    "manifest": {"tomlkit"},  # the writing half (update-expectations), imported there
}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted: iree_conformance.html.render
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


def imports_of(root: Path) -> list[Import]:
    """Every import in the package under root (a folder named iree_conformance)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        package = module if is_package else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
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
                names = [f"{prefix}.{a.name}" for a in node.names] if not node.module else []
                found += [
                    Import(module, t, node.lineno, node.lineno in lazy) for t in names or [prefix]
                ]
    return found


def stdlib_only_modules() -> set[str]:
    """The list in ARCHITECTURE.md's "Layering:" sentence (the doc is the source)."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    sentence = re.search(r"Layering:(.*?)are standard library only", text, re.S)
    assert sentence, "ARCHITECTURE.md lost its 'Layering: ... are standard library only' line"
    return set(re.findall(r"`(\w+)`", sentence.group(1)))


def violations(root: Path, stdlib_only: set[str]) -> list[str]:
    out = []
    for imp in imports_of(root):
        top = imp.target.split(".")[0]
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        short = imp.module.removeprefix(f"{PACKAGE}.")
        if short in stdlib_only and top not in sys.stdlib_module_names | {"__future__"}:
            inner = imp.target.removeprefix(f"{PACKAGE}.").split(".")[0]
            if top != PACKAGE and top not in EXCEPTIONS.get(short, set()):
                out.append(f"{where}: {short} is standard library only")
            elif top == PACKAGE and inner not in stdlib_only:
                out.append(f"{where}: {short} may import only the standard-library-only modules")
        if top == "cache_tools":
            out.append(f"{where}: the core never imports cache_tools")
        if top == CI_PACKAGE:
            out.append(f"{where}: {PACKAGE} never imports ci/")
        if top == "jinja2" and imp.module != f"{PACKAGE}.html.render":
            out.append(f"{where}: only html/render.py imports jinja2")
        if top in ("jax", "flax") and not (
            imp.module.startswith(f"{PACKAGE}.jax_export.") and imp.lazy
        ):
            out.append(
                f"{where}: only the jax_export package imports JAX, and only inside functions "
                "(the core runs without it)"
            )
    return out


def test_the_tree_keeps_its_layers():
    modules = stdlib_only_modules()
    assert {"errors", "results", "manifest"} <= modules
    missing = {m for m in modules if not (REPO / "python" / PACKAGE / f"{m}.py").exists()}
    assert missing == set(), "ARCHITECTURE.md lists modules that do not exist"
    assert violations(REPO / "python" / PACKAGE, modules) == []


def test_a_violation_fails(tmp_path):
    tree = tmp_path / PACKAGE
    shutil.copytree(REPO / "python" / PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    edits = {
        "errors.py": "import numpy\n",
        "results.py": "from .store import Store\n",
        "report.py": "import jinja2\n",
        "cli.py": "from cache_tools import units\nfrom ci._common import CIError\n",
        "html/charts.py": "from jax import numpy\n",
    }
    for name, line in edits.items():
        with (tree / name).open("a", encoding="utf-8") as fh:
            fh.write(line)
    found = "\n".join(violations(tree, stdlib_only_modules()))
    for expected in (
        "iree_conformance.errors:",
        "imports numpy: errors is standard library only",
        "imports iree_conformance.store: results may import only",
        "iree_conformance.report:",
        "only html/render.py imports jinja2",
        "the core never imports cache_tools",
        "imports ci._common: iree_conformance never imports ci/",
        "only the jax_export package imports JAX, and only inside functions",
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
