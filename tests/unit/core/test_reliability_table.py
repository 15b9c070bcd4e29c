"""docs/reliability*.md are sets of table rows, fault | what happens | test: every row names
at least one test, and every test it names exists (a file, ``file::name``, or a test
function some file under tests/ defines). A row whose test is renamed or deleted fails
here, not in a reader's hands."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.core_helpers import ROOT

PAGES = sorted((ROOT / "docs").glob("reliability*.md"))
_ROW = re.compile(r"^\|(?!\s*-)(?!\s*Fault\s*\|)(.*)\|\s*$")


def rows(text: str) -> list[list[str]]:
    """The body rows of the page's tables, as cells (an escaped ``\\|`` stays in its cell)."""
    out = []
    for line in text.splitlines():
        match = _ROW.match(line)
        if match:
            out.append([c.strip() for c in re.split(r"(?<!\\)\|", match.group(1))])
    return out


def defined_tests(root: Path) -> set[str]:
    names: set[str] = set()
    for path in (root / "tests").rglob("test_*.py"):
        names.update(re.findall(r"^\s*def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    return names


def missing(cell: str, root: Path, names: set[str]) -> list[str]:
    """The tests a Test cell names that do not exist; a cell naming none is itself missing."""
    named = re.findall(r"`([^`]+)`", cell)
    if not named:
        return [f"no test named in {cell!r}"]
    out = []
    for item in named:
        if item.startswith("["):
            continue  # a parametrization of the test named before it
        path, _, function = item.partition("::")
        if function:
            file = root / path
            ok = file.exists() and f"def {function}(" in file.read_text(encoding="utf-8")
        elif "/" in item or item.startswith("."):
            ok = (root / item).exists()
        else:
            ok = item in names
        if not ok:
            out.append(item)
    return out


def test_every_reliability_row_names_tests_that_exist():
    assert len(PAGES) == 4, PAGES
    table = [row for page in PAGES for row in rows(page.read_text(encoding="utf-8"))]
    assert len(table) >= 60, "docs/reliability*.md lost their tables"
    names = defined_tests(ROOT)
    problems = {
        row[0][:60]: missing(row[-1], ROOT, names) for row in table if missing(row[-1], ROOT, names)
    }
    assert all(len(row) == 3 for row in table), [row[0][:60] for row in table if len(row) != 3]
    assert problems == {}


def test_the_row_check_finds_a_renamed_test(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_kept():\n    pass\n")
    names = defined_tests(tmp_path)
    assert missing("`test_kept`, `tests/test_a.py::test_kept`", tmp_path, names) == []
    assert missing(
        "`test_gone`, `tests/test_a.py::test_gone`, `tests/nope.py`", tmp_path, names
    ) == [
        "test_gone",
        "tests/test_a.py::test_gone",
        "tests/nope.py",
    ]
    assert missing("`test_kept` (`[one]`, `[two]`)", tmp_path, names) == []
    assert missing("a test somewhere", tmp_path, names) == ["no test named in 'a test somewhere'"]
    assert rows("| Fault | What | Test |\n|---|---|---|\n| a \\| b | c | `t` |\n") == [
        ["a \\| b", "c", "`t`"]
    ]
