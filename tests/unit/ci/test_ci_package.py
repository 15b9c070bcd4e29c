"""ci/ is a package and one CLI: its commands run as `python -m ci COMMAND` (ci/cli.py's
table) and nothing in it edits sys.path (issue 21, item 4; issue 33, item 3). The commands
run in a child process are in tests/e2e/ci/test_ci_package_commands.py."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.support.ci_helpers import CI, REPO

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


def test_the_devtools_table_in_the_docs_is_current():
    from devtools.__main__ import END, START, markdown

    text = (REPO / "docs" / "devtools.md").read_text(encoding="utf-8")
    assert START in text and END in text
    shown = text[text.index(START) : text.index(END) + len(END)]
    assert shown == markdown(), "regenerate it: python -m devtools --markdown"


# -- the one CLI (ci/cli.py) ----------------------------------------------------------------


def _command_modules() -> list[Path]:
    """Every module of ci/ that defines add_arguments: a command's module."""
    return sorted(
        p
        for p in CI.rglob("*.py")
        if any(
            isinstance(n, ast.FunctionDef) and n.name == "add_arguments"
            for n in ast.parse(p.read_text(encoding="utf-8")).body
        )
    )


def test_the_command_table_and_the_command_modules_match():
    from ci.cli import COMMANDS

    in_table = {REPO / (c.module.replace(".", "/") + ".py") for c in COMMANDS.values()}
    assert sorted(in_table) == _command_modules()
    for name, command in COMMANDS.items():
        assert name == command.module.rsplit(".", 1)[1].replace("_", "-"), name


def test_no_module_of_ci_builds_its_own_parser_or_runs_as_a_script():
    """Only ci/cli.py makes parsers; a command module has add_arguments and run, and no
    main, build_parser or `if __name__ == "__main__"` block."""
    found = []
    for path in sorted(CI.rglob("*.py")):
        if path.name in ("cli.py", "__main__.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(REPO).as_posix()
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        found += [f"{where}: def {n}" for n in sorted(names & {"main", "build_parser"})]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("ArgumentParser"):
                found.append(f"{where}:{node.lineno}: ArgumentParser(...)")
            if isinstance(node, ast.Compare) and ast.unparse(node.left) == "__name__":
                found.append(f"{where}:{node.lineno}: a __main__ block")
        if "add_arguments" in names and "run" not in names:
            found.append(f"{where}: add_arguments without run")
    assert found == []


def test_every_command_answers_help():
    from ci.cli import COMMANDS, command_parser

    pytest.importorskip("yaml", reason="check-workflows needs pyyaml (the dev extra)")
    for name, command in COMMANDS.items():
        text = command_parser(name, importlib.import_module(command.module)).format_help()
        assert text.startswith(f"usage: python -m ci {name}"), name


def test_the_command_table_in_the_docs_is_current():
    from ci.cli import END, START, markdown

    text = (REPO / "docs" / "ci-commands.md").read_text(encoding="utf-8")
    assert START in text and END in text
    shown = text[text.index(START) : text.index(END) + len(END)]
    assert shown == markdown(), "regenerate it: python -m ci --markdown"
