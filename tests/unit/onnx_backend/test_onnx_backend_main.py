"""``python -m iree_conformance.onnx_backend``'s target: a typo or a target this machine
cannot run is exit 2 before any test, never a green run of skipped tests (issue 47)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iree_conformance.onnx_backend", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unknown_target_is_exit_2() -> None:
    result = run("--target", "vulcan", "--cases", "test_abs")
    assert result.returncode == 2, result.stdout[-2000:]
    assert "no target 'vulcan'" in result.stderr and "known:" in result.stderr


@pytest.mark.parametrize("target", ["metal" if sys.platform != "darwin" else "cuda"])
def test_a_target_that_cannot_run_here_is_exit_2(target: str) -> None:
    result = run("--target", target, "--cases", "test_abs")
    assert result.returncode == 2, result.stdout[-2000:]
    assert f"--target {target}: cannot run here" in result.stderr
    assert "passed" not in result.stdout and "skipped" not in result.stdout
