"""Hostile inputs given to the commands as a user runs them: results files, an empty ONNX file,
an unwritable cache folder."""

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


def test_an_empty_onnx_file_is_bad_input_at_prepare(tmp_path):
    """protobuf parses 0 bytes as an empty model; the file is refused before a reference
    is asked for (check-model: exit 2, one line naming the file)."""
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    from iree_conformance.suites.onnx_dir import model_cases

    (case,) = model_cases(empty, tmp_path)
    assert "empty file (0 bytes)" in case.problem
    line = one_line_error(cli("check-model", str(empty)), 2)
    assert str(empty) in line and "empty file" in line


def test_an_unwritable_cache_folder_is_one_line_with_the_next_step(tmp_path):
    import os

    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "conformance/test_conformance.py",
            "-m",
            "onnx_ops",
            "--onnx-ops-sample",
            "2",
            "-p",
            "no:cacheprovider",
            "--store-dir",
            str(tmp_path / "store"),
        ],
        cwd=root,
        env={**os.environ, "IREE_CONFORMANCE_DATA": os.devnull + "/data"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "During handling" not in proc.stdout, proc.stdout
    assert "Not a directory; point the folder at a writable place" in proc.stdout, proc.stdout
