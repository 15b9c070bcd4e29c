"""The onnx backend scoreboard's files: written as its pytest hooks write them, read as
its website generator reads them; and the committed results of the documented run."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

from iree_conformance.onnx_backend import scoreboard

REPO = Path(__file__).resolve().parents[3]
RESULTS = REPO / "benchmarks" / "onnx-backend" / "results-llvm-cpu"
DOC = REPO / "benchmarks" / "onnx-backend.md"


def _stats(**groups):
    return {k: [SimpleNamespace(nodeid=n) for n in v] for k, v in groups.items()}


def test_the_report_keeps_three_lists_of_names_without_the_file():
    stats = _stats(
        passed=["t/test_backend.py::OnnxBackendNodeModelTest::test_b_cpu", "x.py::C::test_a_cpu"],
        failed=["t/test_backend.py::C::test_c_cpu"],
        xfailed=["t/test_backend.py::C::test_d_cpu"],
    )
    report = scoreboard.make_report(stats, datetime(2026, 12, 2, 17, 0, 1))
    assert report == {
        "date": "12/02/2026 17:00:01",
        "passed": ["C::test_a_cpu", "OnnxBackendNodeModelTest::test_b_cpu"],
        "failed": ["C::test_c_cpu"],
        "skipped": [],
    }


def test_the_trend_appends_until_two_then_replaces_an_equal_last_summary():
    report = {"date": "d1", "passed": ["a"], "failed": [], "skipped": []}
    trend = scoreboard.updated_trend([], report, [])
    trend = scoreboard.updated_trend(trend, {**report, "date": "d2"}, [])
    assert [t["date"] for t in trend] == ["d1", "d2"]
    trend = scoreboard.updated_trend(trend, {**report, "date": "d3"}, [])
    assert [t["date"] for t in trend] == ["d1", "d3"]  # same counts: replaced
    trend = scoreboard.updated_trend(trend, {**report, "date": "d4", "failed": ["b"]}, [])
    assert [t["date"] for t in trend] == ["d1", "d3", "d4"] and trend[-1]["failed"] == 1


def test_marks_follow_the_generators_table():
    assert [scoreboard.mark(p) for p in (100, 90, 89.9, 70, 60, 59.5, 58, 0)] == [
        "A", "A", "B", "C", "D", None, "F", "F",
    ]  # fmt: skip


def test_written_files_read_back_as_the_generator_reads_them(tmp_path):
    (tmp_path / "pip-list.json").write_text(
        json.dumps([{"name": "onnx", "version": "1"}, {"name": "numpy", "version": "2"}]),
        encoding="utf-8",
    )
    report = {"date": "d", "passed": ["C::a", "C::b"], "failed": ["C::c"], "skipped": []}
    scoreboard.write_results(tmp_path, report)
    trend = scoreboard.read_trend(tmp_path)
    assert trend[-1]["versions"] == [{"name": "onnx", "version": "1"}]
    assert scoreboard.score(trend) == scoreboard.Score(2, 1, 0, 2 / 3 * 100, "D")
    assert scoreboard.read_report(tmp_path) == {
        "C::a": "passed",
        "C::b": "passed",
        "C::c": "failed",
    }
    assert scoreboard.score(scoreboard.read_trend(tmp_path / "absent")).total == 0


def test_the_plugin_writes_the_files_after_a_pytest_run(pytester, tmp_path):
    pytester.makepyfile(
        test_x="""
        import pytest
        def test_ok(): pass
        def test_bad(): assert False
        @pytest.mark.skip(reason="no")
        def test_skip(): pass
        @pytest.mark.xfail
        def test_xfail(): assert False
        """
    )
    pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", plugins=[scoreboard.ScoreboardPlugin(tmp_path)]
    )
    assert scoreboard.read_report(tmp_path) == {
        "test_bad": "failed",
        "test_ok": "passed",
        "test_skip": "skipped",
    }


def test_the_committed_results_parse_and_match_the_docs():
    """benchmarks/onnx-backend/results-llvm-cpu: `python -m iree_conformance.onnx_backend
    --compare-with onnx_ops_320.json --scoreboard DIR` here; benchmarks/onnx-backend.md quotes it."""
    statuses = scoreboard.read_report(RESULTS)
    assert len(statuses) >= 300
    assert set(statuses.values()) <= {"passed", "failed", "skipped"}
    assert all(re.fullmatch(r"OnnxBackend\w+Test::test_\w+_cpu", name) for name in statuses)
    found = scoreboard.score(scoreboard.read_trend(RESULTS))
    counts = {s: list(statuses.values()).count(s) for s in ("passed", "failed", "skipped")}
    assert (found.passed, found.failed, found.skipped) == tuple(counts.values())
    versions = {v["name"]: v["version"] for v in scoreboard.read_trend(RESULTS)[-1]["versions"]}
    assert versions["iree-base-compiler"].startswith("3.13")
    doc = DOC.read_text(encoding="utf-8")
    quoted = (
        f"{found.passed} passed, {found.failed} failed, {found.skipped} skipped "
        f"({found.percent_passed:.1f}%, mark {found.mark})"
    )
    assert quoted in doc, quoted
