"""Hostile and malformed inputs to the commands: one line, the documented exit status,
never a traceback (issue 34)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "iree_conformance.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line_error(proc: subprocess.CompletedProcess, code: int) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(lines) == 1 and "During handling" not in proc.stderr, proc.stderr
    return lines[0]


def _outcome_without_target() -> dict:
    return {
        "schema": 1,
        "metadata": {"started": "2026-01-01T00:00:00+00:00"},
        "outcomes": [{"case_id": "a", "suite": "s", "status": "pass", "verdict": "pass"}],
    }


@pytest.mark.parametrize("command", ["report", "history"])
def test_a_results_file_with_an_outcome_lacking_target_is_refused(tmp_path, command):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_outcome_without_target()))
    args = [command, str(bad)]
    if command == "history":
        args += ["--state", str(tmp_path / "state.json"), "--site", str(tmp_path / "site")]
    line = one_line_error(cli(*args), 2)
    assert "bad.json: outcomes[0] lacks target" in line
    assert not (tmp_path / "state.json").exists()


def test_a_results_file_with_a_wrong_typed_key_is_refused(tmp_path):
    data = _outcome_without_target()
    data["outcomes"][0]["target"] = ["llvm-cpu"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert "target must be text" in one_line_error(cli("report", str(bad)), 2)
