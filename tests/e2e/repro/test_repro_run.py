"""``pytest conformance --repro-dir DIR``: a folder per red case (and with
``--repro-expected`` per expected failure); nothing for a green one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(REPO / "conformance"),
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "0",
            "-m",
            "stablehlo",
            "-k",
            "sort_key_value_stable or add_f32",
            "--store-dir",
            str(tmp_path / "store"),
            "--report-json",
            str(report),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    return proc, json.loads(report.read_text()) if report.exists() else {}


@pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
def test_a_red_case_gets_a_verified_folder_and_a_green_one_none(tmp_path):
    empty = tmp_path / "no-expectations"
    empty.mkdir()  # no manifest: the known numerics failure is red
    proc, results = run(
        tmp_path, "--repro-dir", str(tmp_path / "rd"), "--expectations-dir", str(empty)
    )
    assert proc.returncode == 1, proc.stdout[-2000:]
    folder = tmp_path / "rd" / "llvm-cpu" / "stablehlo" / "sort_key_value_stable"
    assert json.loads((folder / "repro.json").read_text())["reproduced"] is True
    assert not (tmp_path / "rd" / "llvm-cpu" / "stablehlo" / "add_f32").exists()
    by_id = {o["case_id"]: o for o in results["outcomes"]}
    assert by_id["stablehlo/sort_key_value_stable"]["info"]["repro"]["folder"] == str(folder)


@pytest.mark.skipif(
    not (BIN / "iree-compile").exists(), reason="IREE's tools are not beside this Python"
)
def test_expected_failures_only_with_repro_expected(tmp_path):
    proc, _ = run(tmp_path, "--repro-dir", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert not (
        tmp_path / "a"
    ).exists()  # the listed failure is an xfail: no folder without --repro-expected
    proc, _ = run(tmp_path, "--repro-dir", str(tmp_path / "b"), "--repro-expected")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (
        tmp_path / "b" / "llvm-cpu" / "stablehlo" / "sort_key_value_stable" / "ISSUE.md"
    ).is_file()
