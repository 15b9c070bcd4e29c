"""merge_results.py, diff_results.py and durations.py on results JSON from real runs."""

from __future__ import annotations

import json

from ci import diff_results, merge_results
from tests.support.ci_helpers import LINUX, RESULTS, derive, load

LINUX_BEFORE = RESULTS / "linux-py3.11-before-manifest.json"  # same run without it: fail


def test_fixtures_are_schema_1_results():
    for path in (LINUX, LINUX_BEFORE):
        data = load(path)
        assert data["schema"] == 1 and data["metadata"]["os"] == "linux"
        verdicts = {o["verdict"] for o in data["outcomes"]}
        assert verdicts <= {"pass", "xfail", "fail", "xpass", "skip"}
    assert {o["verdict"] for o in load(LINUX)["outcomes"]} == {"pass", "xfail", "skip"}


def test_merge_counts_per_os_python_target_suite(tmp_path):
    mac = derive(
        tmp_path / "in" / "results-macos-latest-py3.12",
        "results.json",
        os_name="macos",
        arch="arm64",
        python="3.12.10",
    )
    win = derive(
        tmp_path / "in" / "results-windows-latest-py3.11",
        "results.json",
        os_name="windows",
        python="3.11.9",
        crlf=True,
    )
    merged = merge_results.merge([LINUX, mac, win])
    rows = dict(merge_results.count_rows(merged))
    linux_stablehlo = rows[("linux/x86_64", "3.11", "llvm-cpu", "stablehlo")]
    assert linux_stablehlo == {"pass": 82, "xfail": 1}
    assert rows[("linux/x86_64", "3.11", "llvm-cpu", "onnx_ops")] == {"pass": 11, "xfail": 20}
    assert rows[("linux/x86_64", "3.11", "vulkan", "stablehlo")] == {"skip": 83}
    assert ("macos/arm64", "3.12", "llvm-cpu", "onnx_ops") in rows
    assert ("windows/x86_64", "3.11", "vulkan", "onnx_ops") in rows
    assert len(merged["runs"]) == 3 and len(merged["outcomes"]) == 3 * 228


def test_merge_lists_unexpected_results():
    merged = merge_results.merge([LINUX_BEFORE])
    markdown = merge_results.render_markdown(merged, max_listed=5)
    assert "### Unexpected results (21)" in markdown
    assert "…and 16 more" in markdown
    assert "`stablehlo/sort_key_value_stable`" in markdown or "onnx-ops/test_cast" in markdown


def test_merged_file_can_be_merged_again(tmp_path):
    first = tmp_path / "first.json"
    first.write_text(json.dumps(merge_results.merge([LINUX])), encoding="utf-8")
    mac = derive(tmp_path, "mac.json", os_name="macos", arch="arm64")
    again = merge_results.merge([first, mac])
    assert [r["os"] for r in again["runs"]] == ["linux", "macos"]
    assert {o["run"] for o in again["outcomes"]} == {0, 1}


# -- diff -----------------------------------------------------------------------------


def test_diff_of_the_two_real_runs_has_no_status_changes():
    diff = diff_results.compare(merge_results.merge([LINUX]), merge_results.merge([LINUX_BEFORE]))
    assert diff["new_failures"] == [] and diff["new_passes"] == [] and diff["changed"] == []
    assert diff["compared_platforms"] == ["linux/x86_64"]


def test_diff_finds_new_failures_new_passes_and_changes(tmp_path):
    current = derive(
        tmp_path,
        "current.json",
        edits={
            "llvm-cpu:stablehlo/abs_negate_f16": {
                "status": "fail",
                "stage": "compare",
                "verdict": "fail",
                "reason": "output 0: 2 of 12 elements differ",
            },
            "llvm-cpu:onnx-ops/test_dft": {
                "status": "pass",
                "stage": "compare",
                "verdict": "xpass",
            },
            "llvm-cpu:onnx-ops/test_cast_FLOAT_to_INT4": {
                "status": "error",
                "stage": "run",
                "verdict": "fail",
            },
            "vulkan:stablehlo/abs_negate_f16": {
                "status": "crash",
                "stage": "run",
                "verdict": "fail",
            },
        },
    )
    result = diff_results.compare(merge_results.merge([current]), merge_results.merge([LINUX]))
    failures = {
        (e["target"], e["case_id"]): (e["now"], e["before"]) for e in result["new_failures"]
    }
    assert failures == {
        ("llvm-cpu", "stablehlo/abs_negate_f16"): ("fail@compare", "pass"),
        ("vulkan", "stablehlo/abs_negate_f16"): ("crash@run", "skip"),
    }
    assert [(e["case_id"], e["before"]) for e in result["new_passes"]] == [
        ("onnx-ops/test_dft", "error@compile")
    ]
    assert [(e["case_id"], e["now"], e["before"]) for e in result["changed"]] == [
        ("onnx-ops/test_cast_FLOAT_to_INT4", "error@run", "error@compile")
    ]
    # What the pull request comment shows: passes per suite and target on both sides.
    counts = {(r["suite"], r["target"]): (r["before"], r["now"]) for r in result["pass_counts"]}
    before, now = counts[("stablehlo", "llvm-cpu")]
    assert now == before - 1  # abs_negate_f16 now fails
    before, now = counts[("onnx_ops", "llvm-cpu")]
    assert now == before + 1  # test_dft now passes


def test_diff_lists_the_current_flaky_cases(tmp_path):
    current = derive(
        tmp_path,
        "current.json",
        edits={
            "llvm-cpu:stablehlo/abs_negate_f16": {"verdict": "flaky", "reason": "pass then fail"}
        },
    )
    result = diff_results.compare(merge_results.merge([current]), merge_results.merge([LINUX]))
    assert [(e["case_id"], e["reason"]) for e in result["flaky"]] == [
        ("stablehlo/abs_negate_f16", "pass then fail")
    ]


def test_diff_lists_not_judged_cases_apart_never_as_new_failures(tmp_path):
    unjudged = {
        "status": "error",
        "stage": "reference",
        "verdict": "skip",
        "diagnostics": ["no input shapes gave a usable onnxruntime reference"],
    }
    current = derive(
        tmp_path, "current.json", edits={"llvm-cpu:stablehlo/abs_negate_f16": unjudged}
    )
    result = diff_results.compare(merge_results.merge([current]), merge_results.merge([LINUX]))
    assert not result["new_failures"]
    assert [(e["case_id"], e["reason"]) for e in result["not_judged"]] == [
        ("stablehlo/abs_negate_f16", "no input shapes gave a usable onnxruntime reference")
    ]


def test_a_new_failure_carries_the_harness_steps_of_a_users_program(tmp_path):
    steps = ["exported by torch.export.export, non-strict (torch's default)", "float64 kept"]
    failed = {"status": "fail", "stage": "compare", "verdict": "fail", "reason": "differs"}
    current = derive(
        tmp_path,
        "current.json",
        edits={"llvm-cpu:stablehlo/abs_negate_f16": {**failed, "info": {"preparation": steps}}},
    )
    result = diff_results.compare(merge_results.merge([current]), merge_results.merge([LINUX]))
    (entry,) = [e for e in result["new_failures"] if e["target"] == "llvm-cpu"]
    assert entry["steps"] == "; ".join(steps)


def test_diff_with_two_pythons_on_one_os_takes_the_worst(tmp_path):
    py310 = derive(
        tmp_path,
        "py310.json",
        python="3.10.14",
        edits={
            "llvm-cpu:stablehlo/abs_negate_f16": {
                "status": "timeout",
                "stage": "compile",
                "verdict": "fail",
            }
        },
    )
    result = diff_results.compare(merge_results.merge([LINUX, py310]), merge_results.merge([LINUX]))
    assert [(e["case_id"], e["now"]) for e in result["new_failures"]] == [
        ("stablehlo/abs_negate_f16", "timeout@compile")
    ]


def test_diff_names_platforms_present_on_one_side(tmp_path):
    mac = derive(tmp_path, "mac.json", os_name="macos", arch="arm64")
    result = diff_results.compare(merge_results.merge([LINUX, mac]), merge_results.merge([LINUX]))
    assert result["only_current"] == ["macos/arm64"] and result["added"] == 0
    markdown = diff_results.render_markdown(result, "main")
    assert "Platforms only in the current results (not compared): macos/arm64." in markdown


# -- durations --------------------------------------------------------------------------


def test_device_matrix_has_one_column_per_target():
    from ci import merge_results

    merged = {
        "runs": [],
        "outcomes": [
            {"case_id": "a", "target": "llvm-cpu", "verdict": "pass", "os": "linux"},
            {"case_id": "a", "target": "cuda", "verdict": "xfail", "os": "linux"},
            {"case_id": "b", "target": "llvm-cpu", "verdict": "pass", "os": "linux"},
            {"case_id": "b", "target": "cuda", "verdict": "pass", "os": "linux"},
            {"case_id": "c", "target": "llvm-cpu", "verdict": "pass", "os": "linux"},
            {"case_id": "c", "target": "llvm-cpu", "verdict": "fail", "os": "windows"},
        ],
    }
    lines = merge_results.device_matrix(merged)
    assert "| Case | cuda | llvm-cpu |" in lines
    assert "| `a` | xfail | pass |" in lines
    assert "| `c` | - | fail |" in lines
    assert not any(line.startswith("| `b`") for line in lines)
    single = {"runs": [], "outcomes": [o for o in merged["outcomes"] if o["target"] == "llvm-cpu"]}
    assert merge_results.device_matrix(single) == []


def test_diff_lists_cases_significantly_slower_than_the_baseline(tmp_path):
    """The pull-request comment's speed list (report/speed.py; docs/speed.md)."""
    samples = [1e-3 * (1 + 0.01 * (i % 7)) for i in range(40)]

    def timed(factor):  # two timing runs a side (run-shard's timing confirm)
        again = {"iree": {"samples_s": [x * factor * 1.002 for x in samples]}}
        bench = {"iree": {"samples_s": [x * factor for x in samples]}, "confirm_runs": [again]}
        return {"metrics": {"benchmark": bench}}

    case = "llvm-cpu:stablehlo/abs_negate_f16"
    other = "llvm-cpu:onnx-ops/test_dft"
    base = derive(tmp_path, "base.json", edits={case: timed(1.0), other: timed(1.0)})
    now = derive(tmp_path, "now.json", edits={case: timed(1.25), other: timed(1.02)})
    result = diff_results.compare(merge_results.merge([now]), merge_results.merge([base]))
    (entry,) = result["speed"]
    assert (entry["target"], entry["case_id"]) == ("llvm-cpu", "stablehlo/abs_negate_f16")
    assert entry["change"].startswith("slower by 25.0 % (p < 0.01")
    markdown = diff_results.render_markdown(result, "main")
    assert "### Significantly slower or larger (1)" in markdown
