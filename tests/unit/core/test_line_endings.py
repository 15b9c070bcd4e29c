"""Every text file the project writes has LF line ends on every OS.

Text mode without ``newline="\\n"`` writes CRLF on Windows, which corrupts
``$GITHUB_OUTPUT`` values, step summaries and files compared across OSes. That
translation is compiled into Windows' Python, so it cannot be triggered here; this test
instead checks the source: every text-mode ``open(..., "w"/"a")`` and every
``.write_text(...)`` passes ``newline=``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ("python", "cache_tools", "ci", "benchmarks", "conformance")


def _mode(call: ast.Call) -> str | None:
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
        return str(call.args[1].value)
    return None


def text_writes_without_newline(source: str, name: str = "<src>") -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if not isinstance(node, ast.Call) or any(kw.arg == "newline" for kw in node.keywords):
            continue
        func = node.func
        callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if callee == "write_text":
            found.append(f"{name}:{node.lineno}: write_text without newline=")
        elif callee in ("open", "fdopen"):
            mode = _mode(node)
            if mode and "b" not in mode and any(c in mode for c in "wax+"):
                found.append(f"{name}:{node.lineno}: open(..., {mode!r}) without newline=")
    return found


def test_the_check_finds_what_it_looks_for():
    bad = 'open(p, "a", encoding="utf-8")\nPath(p).write_text(s)\nos.fdopen(fd, mode="w")\n'
    good = 'open(p, "a", newline="\\n")\nopen(p, "rb")\nopen(p)\nPath(p).write_text(s, newline="\\n")\n'
    assert len(text_writes_without_newline(bad)) == 3
    assert text_writes_without_newline(good) == []


def test_project_text_writes_use_lf():
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += text_writes_without_newline(
                path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))
            )
    assert found == [], "\n".join(found)
