"""The results scripts as the workflows run them (python -m ci merge-results, diff-results,
durations) on the fixture results files."""

from __future__ import annotations

import json

import pytest

from ci import merge_results
from tests.support.ci_helpers import LINUX, derive, load, run_ci


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


def test_merge_rejects_a_broken_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 2, "outcomes": []}', encoding="utf-8")
    result = run_ci("merge-results", bad, check=False)
    assert result.returncode == 2 and "unsupported results schema 2" in result.stderr


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
