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


def test_a_scoreboard_folder_that_cannot_be_written_is_exit_2_before_the_tests(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run("--scoreboard", str(blocker / "board"), "--cases", "test_abs")
    assert result.returncode == 2, (result.stdout[-2000:], result.stderr[-2000:])
    assert f"--scoreboard {blocker / 'board'}: cannot write there" in result.stderr
    assert "Traceback" not in result.stderr and "passed" not in result.stdout


def test_scoreboard_files_that_cannot_be_written_at_the_end_are_an_error(
    tmp_path: Path, monkeypatch
) -> None:
    from iree_conformance.onnx_backend import scoreboard

    lines: list[str] = []

    class Reporter:
        stats: dict = {}

        def write_line(self, line: str, **_: object) -> None:
            lines.append(line)

    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(scoreboard, "write_results", full)
    plugin = scoreboard.ScoreboardPlugin(tmp_path)
    plugin.pytest_terminal_summary(Reporter())
    assert plugin.failed and "No space left on device" in plugin.failed
    assert lines == [f"error: {plugin.failed}"]
