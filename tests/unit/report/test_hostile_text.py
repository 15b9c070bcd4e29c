"""Untrusted text in the `versions` Markdown and `compare`'s output (issue 47 items 6, 7):
nothing from a results file or an IREE build reaches Markdown raw (no tag, link, mention
or table break) or a terminal with its control characters."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from iree_conformance.cli.main import main
from iree_conformance.common.markdown_escape import md_text, plain_text
from iree_conformance.report import version_compare as vc

EVIL = "<img src=z onerror=alert(1)> @octocat [x](https://evil) | `c`"
TERMINAL = "pass\x1b[2J\x07\x00\u202e"


def outcome(case: str, status: str, message: str = "", target: str = "llvm-cpu") -> dict:
    return {
        "case_id": case,
        "suite": "onnx_ops",
        "target": target,
        "status": status,
        "stage": "compile",
        "verdict": "pass" if status == "pass" else "fail",
        "diagnostics": [message] if message else [],
        "duration": 1.0,
    }


def inert(text: str) -> None:
    assert "<img" not in text and not re.search(r"(?<!\\)\]\(https://evil", text), text
    assert "@octocat" not in text, text  # a zero-width space after @: no mention
    assert "\x1b" not in text and "\x07" not in text and "\x00" not in text, repr(text)


def test_versions_markdown_escapes_label_build_target_and_diagnostic() -> None:
    old = vc.Column(
        "3.12.0",
        {"iree_compiler": EVIL, "revision": "abc1234)[pwn](https://evil"},
        [outcome("a", "pass", target=EVIL)],
    )
    new = vc.Column(
        EVIL,
        {"iree_compiler": "3.13.0", "revision": "def5678"},
        [outcome("a", "error", "error: " + EVIL, target=EVIL)],
    )
    text = vc.markdown([old, new], vc.compare([old, new]))
    inert(text)
    assert "[IREE changes]" not in text  # a revision that is no commit hash gets no link
    good = vc.Column("3.13.0", {"iree_compiler": "3.13.0", "revision": "def5678"}, [])
    base = vc.Column("3.12.0", {"iree_compiler": "3.12.0", "revision": "abc1234"}, [])
    assert "compare/abc1234...def5678" in vc.markdown([base, good], [])


def write(path: Path, status: str, case: str = "onnx-ops/test_abs") -> Path:
    path.write_text(
        json.dumps({"schema": 1, "metadata": {}, "outcomes": [outcome(case, status)]}),
        encoding="utf-8",
    )
    return path


def test_compare_markdown_escapes_the_status(tmp_path: Path, capsys) -> None:
    a = write(tmp_path / "a.json", "pass")
    b = write(tmp_path / "b.json", EVIL)
    main(["compare", str(a), str(b), "--markdown"])
    out = capsys.readouterr().out
    assert "Verdict changes" in out
    inert(out)


def test_compare_plain_strips_control_characters(tmp_path: Path, capsys) -> None:
    a = write(tmp_path / "a.json", "pass", case="onnx-ops/\x1b]0;x\x07abs")
    b = write(tmp_path / "b.json", TERMINAL, case="onnx-ops/\x1b]0;x\x07abs")
    main(["compare", str(a), str(b)])
    out = capsys.readouterr().out
    assert "Verdict changes" in out
    inert(out)
    assert "\u202e" not in out


def test_the_helpers() -> None:
    assert plain_text("a\x1b[31mb\x9bc\u202ed") == "a [31mb c d"
    assert "@\u200boctocat" in md_text("@octocat")


def test_compare_into_a_closed_pipe_gives_no_traceback(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", "pass")
    b = write(tmp_path / "b.json", "fail")
    read, write_end = os.pipe()
    os.close(read)  # `| head` that has already gone
    proc = subprocess.run(
        [sys.executable, "-m", "iree_conformance.cli.main", "compare", str(a), str(b)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    os.close(write_end)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 141
