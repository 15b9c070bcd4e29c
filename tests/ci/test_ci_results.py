"""merge_results.py, diff_results.py and durations.py on results JSON from real runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from ci_helpers import RESULTS, run_ci

from ci import diff_results, merge_results

LINUX = RESULTS / "linux-py3.11.json"  # verdicts with the manifest: pass / xfail / skip
LINUX_BEFORE = RESULTS / "linux-py3.11-before-manifest.json"  # same run without it: fail


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def derive(
    tmp: Path,
    name: str,
    source: Path = LINUX,
    *,
    os_name: str | None = None,
    arch: str | None = None,
    python: str | None = None,
    edits: dict[str, dict] | None = None,
    crlf: bool = False,
) -> Path:
    """A copy of a real results file on another platform and/or with some outcomes edited."""
    data = copy.deepcopy(load(source))
    meta = data["metadata"]
    meta.update({k: v for k, v in (("os", os_name), ("arch", arch), ("python", python)) if v})
    for outcome in data["outcomes"]:
        key = f"{outcome['target']}:{outcome['case_id']}"
        if edits and key in edits:
            outcome.update(edits[key])
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1)
    path.write_bytes(text.replace("\n", "\r\n").encode() if crlf else text.encode())
    return path


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


def test_merge_script_writes_json_markdown_and_summary(tmp_path, gh):
    folder = tmp_path / "downloaded artifacts"
    derive(
        folder / "results-macos-latest-py3.12",
        "results-macos-latest-py3.12.json",
        os_name="macos",
        arch="arm64",
        python="3.12.10",
    )
    derive(folder / "results-ubuntu-latest-py3.11", "results-ubuntu-latest-py3.11.json")
    (folder / "durations.json").write_text(
        '{"llvm-cpu:stablehlo/x": 1.0}', encoding="utf-8"
    )  # not results
    out = tmp_path / "merged out"
    run_ci(
        "merge-results",
        folder,
        "--output",
        out / "merged.json",
        "--markdown",
        out / "merged.md",
        "--summary",
        env=gh.env(),
    )
    merged = load(out / "merged.json")
    assert merged["kind"] == "merged" and len(merged["runs"]) == 2
    markdown = (out / "merged.md").read_text(encoding="utf-8")
    assert (
        "| OS | Python | Target | Suite | pass | xfail | flaky | fail | xpass | skip | total |"
        in markdown
    )
    assert "| macos/arm64 | 3.12 | llvm-cpu | stablehlo | 82 | 1 | 0 | 0 | 0 | 0 | 83 |" in markdown
    assert "No unexpected results." in markdown
    assert gh.summary_text().strip() == markdown.strip()


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


def test_merge_rejects_a_broken_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 2, "outcomes": []}', encoding="utf-8")
    result = run_ci("merge-results", bad, check=False)
    assert result.returncode == 2 and "unsupported results schema 2" in result.stderr


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


def test_diff_script(tmp_path, gh):
    current = derive(
        tmp_path,
        "current.json",
        edits={
            "llvm-cpu:stablehlo/abs_negate_f16": {
                "status": "fail",
                "stage": "compare",
                "verdict": "fail",
                "reason": "a|b",
            }
        },
    )
    baseline_dir = tmp_path / "baseline dir"
    baseline_dir.mkdir()
    (baseline_dir / "merged.json").write_text(
        json.dumps(merge_results.merge([LINUX])), encoding="utf-8"
    )
    args = [
        "--current",
        current,
        "--baseline",
        baseline_dir,
        "--output",
        tmp_path / "diff.json",
        "--markdown",
        tmp_path / "diff.md",
        "--summary",
    ]
    run_ci("diff-results", *args, env=gh.env())
    markdown = (tmp_path / "diff.md").read_text(encoding="utf-8")
    assert "**1 new failure(s)**, **0 new pass(es)**" in markdown
    assert (
        "| linux/x86_64 | llvm-cpu | `stablehlo/abs_negate_f16` | fail@compare | pass | a\\|b |"
        in markdown
    )
    assert "### New failures (1)" in gh.summary_text()
    assert load(tmp_path / "diff.json")["new_failures"][0]["case_id"] == "stablehlo/abs_negate_f16"
    failing = run_ci("diff-results", *args, "--fail-on-new-failures", env=gh.env(), check=False)
    assert failing.returncode == 1


def test_diff_without_a_baseline(tmp_path):
    missing = tmp_path / "no baseline"
    result = run_ci(
        "diff-results", "--current", LINUX, "--baseline", missing, "--missing-baseline-ok"
    )
    assert "No baseline results were found" in result.stdout
    strict = run_ci("diff-results", "--current", LINUX, "--baseline", missing, check=False)
    assert strict.returncode == 8


# -- durations --------------------------------------------------------------------------


def test_durations_file_is_what_the_shard_plugin_reads(tmp_path):
    out = tmp_path / "durations"
    run_ci("durations", LINUX, "--per-os", out)
    linux = load(out / "durations-linux.json")
    assert load(out / "durations-windows.json") == {}
    case = next(o for o in load(LINUX)["outcomes"] if o["target"] == "llvm-cpu")
    assert linux[f"llvm-cpu:{case['case_id']}"] == pytest.approx(case["duration"], abs=1e-4)
    assert len(linux) == 228
    sharding = pytest.importorskip(
        "iree_conformance.engine.sharding", reason="the conformance package is not importable"
    )
    assert sharding.load_durations(out / "durations-linux.json") == pytest.approx(linux)


def test_durations_average_runs_and_keep_previous(tmp_path):
    key = "llvm-cpu:stablehlo/abs_negate_f16"
    slow = derive(tmp_path, "slow.json", python="3.10.14", edits={key: {"duration": 3.0}})
    fast = derive(tmp_path, "fast.json", edits={key: {"duration": 1.0}})
    previous = tmp_path / "previous.json"
    previous.write_text(json.dumps({"llvm-cpu:gone/case": 7.5, key: 100.0}), encoding="utf-8")
    out = tmp_path / "d.json"
    run_ci("durations", slow, fast, "--os", "Linux", "--output", out, "--previous", previous)
    data = load(out)
    assert data[key] == 2.0 and data["llvm-cpu:gone/case"] == 7.5


def test_durations_without_any_results_writes_empty_files(tmp_path):
    run_ci(
        "durations",
        tmp_path / "no baseline",
        "--per-os",
        tmp_path / "d",
        "--previous",
        tmp_path / "no baseline" / "durations",
    )
    assert all(
        load(tmp_path / "d" / f"durations-{o}.json") == {} for o in ("linux", "macos", "windows")
    )


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

    def timed(factor):
        bench = {"iree": {"samples_s": [x * factor for x in samples]}}
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
