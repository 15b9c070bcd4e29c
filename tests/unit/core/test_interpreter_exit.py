"""How the interpreter's child process ending is read, on each OS's terms.

Windows exit codes are given to ``describe_exit`` as ``platform_name="win32"``; these
tests run on every OS and do not claim a Windows run.
"""

from __future__ import annotations

import sys

import pytest

from iree_conformance.common.platform_info import describe_exit as _exit_description
from iree_conformance.frontends.stablehlo import interpreter
from iree_conformance.frontends.stablehlo.interpreter import InterpreterError, _describe_death


def test_windows_crash_codes_are_hex_and_named():
    assert _exit_description(0xC0000005, "win32") == "exception 0xC0000005 (access violation)"
    assert _exit_description(0xC0000374, "win32") == "exception 0xC0000374"
    # MSVC's abort() exits with 3, which is why the child no longer reports errors with 3.
    assert _exit_description(3, "win32") == "exit status 3 (abort())"
    assert interpreter._CHILD_REPORTED_ERROR != 3
    assert "0xC00000FD (stack overflow)" in str(_describe_death(0xC00000FD, "", "win32"))


def test_posix_signals_are_named():
    assert _exit_description(-6, "linux") == "SIGABRT"
    assert _exit_description(0xC0000005, "linux") == f"exit status {0xC0000005}"
    assert "SIGSEGV" in str(_describe_death(-11, "", "darwin"))


def test_child_output_is_read_as_utf8_with_replacement():
    proc = interpreter._run_child(
        [
            sys.executable,
            "-c",
            "import sys; sys.stderr.buffer.write(b'bad \\xff byte'); sys.exit(5)",
        ],
        30,
    )
    assert proc.returncode == 5
    assert proc.stderr == "bad \ufffd byte"


def test_reported_error_needs_the_error_file(tmp_path):
    code = interpreter._CHILD_REPORTED_ERROR
    # The code alone (a crash or a foreign exit) is not the child's reported error.
    assert interpreter._reported_error(str(tmp_path), code) is None
    (tmp_path / interpreter._ERROR_FILE).write_text(
        "the program has no func.func @main", encoding="utf-8"
    )
    assert interpreter._reported_error(str(tmp_path), code) == "the program has no func.func @main"
    assert interpreter._reported_error(str(tmp_path), 1) is None


def test_run_interpreter_reports_a_death_with_the_reserved_code_as_a_death(monkeypatch):
    import subprocess

    def child_dies(cmd, timeout):
        return subprocess.CompletedProcess(cmd, interpreter._CHILD_REPORTED_ERROR, "", "")

    monkeypatch.setattr(interpreter, "_run_child", child_dies)
    with pytest.raises(
        InterpreterError, match=rf"aborted \(exit status {interpreter._CHILD_REPORTED_ERROR}\)"
    ):
        interpreter.run_interpreter("module {}", [])
