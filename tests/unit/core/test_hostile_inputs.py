"""Hostile and malformed inputs to the commands: one line, the documented exit status,
never a traceback (issue 34); those run as commands: tests/e2e/core/test_hostile_inputs_cli.py."""

from __future__ import annotations

import re

import pytest

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
    assert "Slowest" in markdown and "&#60;script&#62;" in markdown  # md_code's <code>


def test_the_ci_job_summary_escapes_case_ids_and_targets():
    from ci.merge_results import render_markdown as job_summary
    from iree_conformance.report.merging import merge_documents

    merged = merge_documents([("a.json", _hostile_document())])
    markdown = job_summary(merged)
    _check_inert(markdown)
    assert "&#60;script&#62;" in markdown


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
