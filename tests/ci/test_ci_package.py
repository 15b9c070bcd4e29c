"""ci/ is a package: its scripts run as `python -m ci.<script>` and nothing in it edits
sys.path (issue 21, item 4)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from ci_helpers import CI, REPO, clean_env

DEVTOOLS = REPO / "devtools"

PATH_MUTATORS = {"insert", "append", "extend", "remove", "pop", "clear", "__setitem__"}


def sys_path_edits(root: Path) -> list[str]:
    """Every place under root that changes sys.path: a call of one of its mutating
    methods, an assignment to it (or to one of its items) or an augmented assignment."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(root.parent).as_posix()}:{getattr(node, 'lineno', 0)}"
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in PATH_MUTATORS
                and _is_sys_path(node.func.value)
            ):
                found.append(f"{where}: sys.path.{node.func.attr}(...)")
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                inner = target.value if isinstance(target, ast.Subscript) else target
                if _is_sys_path(inner):
                    found.append(f"{where}: assigns sys.path")
    return found


def _is_sys_path(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def ci_modules() -> list[str]:
    return sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts)
        for folder in (CI, DEVTOOLS)
        for p in folder.rglob("*.py")
        if p.name != "__init__.py"
    )


def test_nothing_in_ci_edits_sys_path():
    assert sys_path_edits(CI) + sys_path_edits(DEVTOOLS) == []


def test_ci_never_imports_the_developer_tools():
    """ci/ is what the workflows call; devtools/ (act, the proofs) may use it, not the
    other way round."""
    found = []
    for path in CI.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [
                f"{path.relative_to(REPO)}:{node.lineno}"
                for n in names
                if n.split(".")[0] == "devtools"
            ]
    assert found == []


def test_the_check_finds_each_kind_of_edit(tmp_path):
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "x.py").write_text(
        "import sys\nsys.path.insert(0, 'a')\nsys.path.append('b')\n"
        "sys.path += ['c']\nsys.path[:0] = ['d']\nsys.path = []\n",
        encoding="utf-8",
    )
    found = "\n".join(sys_path_edits(tmp_path / "ci"))
    for expected in ("x.py:2: sys.path.insert", "x.py:3: sys.path.append", "x.py:4: assigns"):
        assert expected in found, found
    assert found.count("assigns sys.path") == 3


def test_every_package_folder_has_an_init():
    folders = {p.parent for root in (CI, DEVTOOLS) for p in root.rglob("*.py")}
    assert sorted(f for f in folders if not (f / "__init__.py").is_file()) == []


@pytest.mark.parametrize("module", ci_modules())
def test_every_module_imports_as_part_of_the_package(module):
    """A leftover `from _common import ...` (a sibling as a top-level module) fails here."""
    if module == "ci.check_workflows":
        pytest.importorskip("yaml", reason="pyyaml is in the dev extra")
    importlib.import_module(module)


def test_a_script_runs_with_dash_m_from_the_root():
    result = subprocess.run(
        [sys.executable, "-m", "ci.source_build.pins", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=clean_env(),
        timeout=60,
    )
    assert result.returncode == 0 and "usage:" in result.stdout, result.stderr


def _bare(*args: str, **extra: str) -> subprocess.CompletedProcess:
    """A ci/ script under `python -S` (no site-packages: the project is not installed)."""
    env = clean_env(**extra)
    env.pop("PYTHONPATH", None) if "PYTHONPATH" not in extra else None
    return subprocess.run(
        [sys.executable, "-S", "-m", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
    )


def test_before_the_install_pythonpath_python_is_enough():
    """What the workflows' jobs do before `ci.install` (docs/ci.md): PYTHONPATH=python."""
    ok = _bare("ci.install", "--dry-run", "--extras", "dev", PYTHONPATH="python")
    assert ok.returncode == 0, ok.stderr
    assert "pip install" in ok.stdout and "-e" in ok.stdout
    missing = _bare("ci.install", "--dry-run", "--extras", "dev")
    assert missing.returncode == 8
    assert "PYTHONPATH=python" in missing.stderr and "Traceback" not in missing.stderr


def test_the_devtools_table_in_the_docs_is_current():
    from devtools.__main__ import END, START, markdown

    text = (REPO / "docs" / "devtools.md").read_text(encoding="utf-8")
    assert START in text and END in text
    shown = text[text.index(START) : text.index(END) + len(END)]
    assert shown == markdown(), "regenerate it: python -m devtools --markdown"
