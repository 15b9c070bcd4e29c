"""The report model's definitions (one each), on small hand-made documents."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from iree_conformance.report import markdown as report
from iree_conformance.report import model as report_model

ROOT = Path(__file__).resolve().parents[3]


def outcome(case_id: str, target: str, status: str, verdict: str, stage: str = "compile", **kw):
    return {
        "case_id": case_id,
        "suite": "s",
        "target": target,
        "status": status,
        "stage": stage,
        "verdict": verdict,
        **kw,
    }


def test_standard_library_only():
    """ci/merge_results.py imports the model before anything is installed."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import iree_conformance.report.model; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] not in {*sys.stdlib_module_names, '__main__'}))"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(ROOT / "python")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert all(name.startswith("iree_conformance") for name in eval(out)), out


def test_a_failure_is_a_status_and_unexpected_is_a_red_verdict():
    outcomes = [
        outcome("a", "t", "error", "fail", diagnostics=["x.mlir:1:2: error: boom 1"]),
        outcome("b", "t", "error", "xfail", expected="fail-compile", diagnostics=["error: boom 2"]),
        outcome("c", "t", "pass", "xpass", stage="compare", expected="fail-run"),
        outcome("d", "t", "skip", "skip", stage="prepare"),
    ]
    model = report_model.from_document({"metadata": {}, "outcomes": outcomes})
    (group,) = model.failure_groups  # the xpass passed: not a failure, but unexpected
    assert group.stage == "compile" and group.line == "error: boom N"
    assert len(group.members) == 2 and group.unexpected == 1
    assert [o["case_id"] for o in model.unexpected] == ["a", "c"]
    assert model.expected_failures == [("fail-compile", 1)]
    text = report.markdown_of(model)
    assert "### Failure groups (2 failing outcomes in 1 groups, 1 unexpected)" in text
    assert "### Unexpected results (2)" in text


def test_repeats_count_once_and_unknown_verdicts_get_a_column_everywhere():
    runs = [
        {
            "os": "linux",
            "arch": "x86_64",
            "python": "3.11",
            "targets": ["t"],
            "outcome_count": 2,
            "metadata": {"started": "2026-12-01T01:00:00+00:00"},
        },
        {
            "os": "linux",
            "arch": "x86_64",
            "python": "3.11",
            "targets": ["t"],
            "outcome_count": 1,
            "metadata": {"started": "2026-12-01T02:00:00+00:00"},
        },
        {
            "os": "macos",
            "arch": "arm64",
            "python": "3.12",
            "targets": ["u"],
            "outcome_count": 0,
            "metadata": {},
        },
    ]
    tags = {"os": "linux", "arch": "x86_64", "python": "3.11"}
    merged = {
        "schema": 1,
        "kind": "merged",
        "runs": runs,
        "outcomes": [
            {**outcome("a", "t", "error", "fail"), **tags, "run": 0},
            {**outcome("b", "t", "pass", "wobbly"), **tags, "run": 0},
            {**outcome("a", "t", "pass", "pass", stage="compare"), **tags, "run": 1},
        ],
    }
    model = report_model.build(merged)
    assert model.repeats_dropped == 1 and not model.unexpected  # the later run's pass kept
    assert model.columns[-1] == "wobbly"
    rows = {(r.suite, r.target, r.platform): dict(r.counts) for r in model.counts}
    assert rows == {
        ("s", "t", "linux/x86_64 py3.11"): {"pass": 1, "wobbly": 1},
        ("(none)", "u", "macos/arm64 py3.12"): {},
    }
    assert "| s | t | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 2 |" in report.markdown_of(model)
    from ci.merge_results import render_markdown

    ci = render_markdown(merged)
    assert "| linux/x86_64 | 3.11 | t | s | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 2 |" in ci
    assert "| macos/arm64 | 3.12 | u | (none) | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |" in ci


def test_not_judged_has_its_own_column_and_section_and_no_place_in_failures_or_funnel():
    no_ref = ["no input shapes gave a usable onnxruntime reference"]
    outcomes = [
        outcome("a", "t", "pass", "pass", stage="compare"),
        outcome("b", "t", "error", "skip", stage="reference", diagnostics=no_ref),
        outcome("c", "t", "error", "skip", stage="reference", diagnostics=no_ref),
        outcome("d", "t", "skip", "skip", stage="prepare"),
    ]
    model = report_model.from_document({"metadata": {}, "outcomes": outcomes})
    assert [o["case_id"] for o in model.not_judged] == ["b", "c"]
    assert not model.failure_groups and not model.unexpected
    (row,) = model.by_suite_target()
    assert row[2]["not judged"] == 2 and row[2]["skip"] == 1 and "not judged" in model.columns
    (funnel,) = model.funnels  # only the case IREE ran and was judged on
    assert funnel.runnable == 1 and funnel.passed["import"] == 1
    text = report.markdown_of(model)
    assert "### Not judged (2): neither IREE's failure nor a pass" in text
    assert "**Most cases were not judged (2 of 3)" in text
    # One not judged of three run: no warning.
    outcomes[2] = outcome("c", "t", "pass", "pass", stage="compare")
    text = report.markdown_of(report_model.from_document({"metadata": {}, "outcomes": outcomes}))
    assert "### Not judged (1)" in text and "Most cases were not judged" not in text
