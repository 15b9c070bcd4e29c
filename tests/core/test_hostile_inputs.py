"""Hostile and malformed inputs to the commands: one line, the documented exit status,
never a traceback (issue 34)."""

from __future__ import annotations

import json
import re
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


HOSTILE_ID = "onnx-dir/<script>alert(1)</script>|a`b.onnx"
HOSTILE_TARGET = "<img src=x onerror=alert(1)>|t"


def _hostile_document() -> dict:
    outcome = {
        "case_id": HOSTILE_ID,
        "suite": "onnx_dir",
        "target": HOSTILE_TARGET,
        "status": "fail",
        "stage": "compare",
        "verdict": "fail",
        "duration": 3.0,
        "stage_times": {"compile": 1.0},
        "diagnostics": ["error: <b>|`bold`</b>"],
        "info": {},
        "metrics": {"timing": {"iree_median_s": 0.001}},
    }
    other = {**outcome, "target": "llvm-cpu", "status": "pass", "stage": "compare"}
    other["verdict"] = "pass"
    return {
        "schema": 1,
        "metadata": {"started": "2026-01-01T00:00:00+00:00", "os": "<i>linux</i>"},
        "outcomes": [outcome, other],
    }


def _check_inert(markdown: str) -> None:
    for raw in ("<script", "<img", "<b>", "<i>"):
        assert raw not in markdown, raw
    header_cells = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            header_cells = None
            continue
        # A cell separator is a | not escaped with a backslash.
        cells = len(re.findall(r"(?<!\\)\|", line))
        if header_cells is None:
            header_cells = cells
        assert cells == header_cells, line


def test_the_markdown_report_escapes_case_ids_and_targets():
    from iree_conformance.report.markdown import render_markdown

    markdown = render_markdown(_hostile_document())
    _check_inert(markdown)
    assert "Slowest" in markdown and "&lt;script&gt;" in markdown


def test_the_ci_job_summary_escapes_case_ids_and_targets():
    from ci.merge_results import render_markdown as job_summary
    from iree_conformance.report.merging import merge_documents

    merged = merge_documents([("a.json", _hostile_document())])
    markdown = job_summary(merged)
    _check_inert(markdown)
    assert "&lt;script&gt;" in markdown


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


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            '"a" = { expct = "fail-compile", reason = "r" }',
            "unknown key 'expct' for 'a' (did you mean 'expect'?)",
        ),
        ('"a" = { expect = "fail-compile", reason = "r", resaon = "x" }', "unknown key 'resaon'"),
    ],
)
def test_a_typo_in_a_manifest_key_is_named_with_its_line(tmp_path, entry, message):
    from iree_conformance.expectations.lookup import ExpectationsError, load_expectations

    (tmp_path / "llvm-cpu.toml").write_text(f"[xfail]\n{entry}\n")
    with pytest.raises(ExpectationsError) as raised:
        load_expectations(tmp_path, "llvm-cpu", "linux")
    assert f"llvm-cpu.toml:2: {message}" in str(raised.value)


def test_a_tolerance_key_typo_is_named(tmp_path):
    from iree_conformance.expectations.lookup import ExpectationsError, load_expectations

    (tmp_path / "llvm-cpu.toml").write_text('[tolerance]\n"a" = { atl = 1e-3, reason = "r" }\n')
    with pytest.raises(ExpectationsError, match=r"llvm-cpu.toml:2: unknown key 'atl'.*'atol'"):
        load_expectations(tmp_path, "llvm-cpu", "linux")


def test_an_unwritable_cache_folder_is_one_line_with_the_next_step(tmp_path):
    import os

    root = Path(__file__).resolve().parents[2]
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


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_mlir_is_not_collected(tmp_path):
    import os
    import threading

    from iree_conformance.suites.stablehlo_files import external_cases

    (tmp_path / "ok.mlir").write_text(
        "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
        "  return %0 : tensor<f32>\n}\n"
    )
    os.mkfifo(tmp_path / "pipe.mlir")
    found: list = []
    thread = threading.Thread(target=lambda: found.extend(external_cases(tmp_path)), daemon=True)
    thread.start()
    thread.join(60)
    if thread.is_alive():  # unblock the reader so the test process can end
        with open(tmp_path / "pipe.mlir", "w"):
            pass
        pytest.fail("collection blocked on a FIFO named .mlir")
    assert not [c for c in found if "pipe" in c.case_id]
