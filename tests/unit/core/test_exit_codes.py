"""One exit-status table for every CLI (iree-conformance, cache-tools, ci/): no two error
kinds share a number, and no module sets a number of its own outside the table."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from iree_conformance.common import errors

REPO = Path(__file__).resolve().parents[3]
SOURCES = ("python", "cache_tools", "ci", "devtools")
# The table, and cache-tools' copy of its three numbers (its own distribution runs without
# the library; test_cache_tools_numbers_are_the_tables checks the copy).
OWN_TABLES = {
    REPO / "python" / "iree_conformance" / "common" / "errors.py",
    REPO / "cache_tools" / "errors.py",
}


def duplicate_codes(table: dict[str, int]) -> dict[int, list[str]]:
    """Codes that two or more kinds claim, and 0/1, which are not error kinds."""
    by_code: dict[int, list[str]] = {}
    for kind, code in table.items():
        by_code.setdefault(code, []).append(kind)
    return {c: kinds for c, kinds in by_code.items() if len(kinds) > 1 or c in (0, 1)}


def literal_codes(root: Path) -> list[str]:
    """``return_code = <int>`` or ``EXIT_X = <int>`` outside errors.py: a number off the table."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path in OWN_TABLES or ".venv" in path.parts or "build" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    name = target.id if isinstance(target, ast.Name) else ""
                    if name == "return_code" or name.startswith("EXIT_"):
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno} {name}")
    return found


def test_no_two_kinds_share_a_code():
    assert duplicate_codes(errors.EXIT_CODES) == {}
    assert len(set(errors.EXIT_CODES.values())) == len(errors.EXIT_CODES)


def test_the_check_catches_a_shared_code():
    assert duplicate_codes({**errors.EXIT_CODES, "api-again": errors.EXIT_API}) == {
        errors.EXIT_API: ["api", "api-again"]
    }


@pytest.mark.parametrize("folder", SOURCES)
def test_no_module_sets_its_own_number(folder):
    assert literal_codes(REPO / folder) == []


def test_the_literal_scan_catches_one(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("class E:\n    return_code = 3\n", encoding="utf-8")
    assert literal_codes(tmp_path / "pkg") == ["pkg/m.py:2 return_code"]


def test_cache_tools_numbers_are_the_tables():
    from cache_tools import errors as ct_errors

    assert ct_errors.EXIT_INPUT == errors.EXIT_CODES["configuration"]
    assert ct_errors.EXIT_THRESHOLD == errors.EXIT_CODES["threshold"]
    assert ct_errors.EXIT_API == errors.EXIT_CODES["api"]


def test_every_error_class_uses_a_code_of_the_table():
    from cache_tools import errors as ct_errors

    importlib.import_module("ci._common")
    importlib.import_module("iree_conformance.cli.main")  # loads the library's error classes

    def subclasses(cls: type) -> list[type]:
        return [c for s in cls.__subclasses__() for c in (s, *subclasses(s))]

    classes = subclasses(errors.ConformanceError) + subclasses(ct_errors.CacheToolsError)
    assert ct_errors.ApiError in classes and any(c.__name__ == "CIError" for c in classes)
    table = set(errors.EXIT_CODES.values())
    assert {c.__name__: c.return_code for c in classes if c.return_code not in table} == {}
    assert ct_errors.CacheToolsError("x").return_code == errors.EXIT_CODES["configuration"]
    assert ct_errors.ApiError("x").return_code == errors.EXIT_CODES["api"]
    assert next(c for c in classes if c.__name__ == "CIError").return_code == errors.EXIT_CI
