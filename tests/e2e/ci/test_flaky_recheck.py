"""ci/flaky_recheck.py: which cases it re-checks, and its errors."""

import json
import subprocess
import sys
from pathlib import Path

from ci import flaky_recheck

ROOT = Path(__file__).resolve().parents[3]

DIFF = {
    "new_failures": [
        {"platform": "linux/x86_64", "target": "llvm-cpu", "case_id": "b"},
        {"platform": "windows/x86_64", "target": "llvm-cpu", "case_id": "w"},
    ],
    "new_passes": [{"platform": "linux/x86_64", "target": "vmvx", "case_id": "c"}],
    "changed": [{"platform": "linux/x86_64", "target": "llvm-cpu", "case_id": "a"}],
}


def test_changed_cases_of_one_platform_per_target():
    assert flaky_recheck.changed_cases(DIFF, "linux/x86_64") == {
        "llvm-cpu": ["a", "b"],
        "vmvx": ["c"],
    }
    assert flaky_recheck.changed_cases(DIFF, "macos/arm64") == {}


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "ci", "flaky-recheck", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_dry_run_prints_one_flake_finder_per_target(tmp_path):
    diff = tmp_path / "diff.json"
    diff.write_text(json.dumps(DIFF))
    proc = run(diff, "--platform", "linux/x86_64", "--dry-run", "--", "-m", "onnx_ops")
    assert proc.returncode == 0, proc.stderr
    assert "llvm-cpu: 2 changed case(s); iree-conformance flakes --repeat 3" in proc.stdout
    assert "--target vmvx --cases-file" in proc.stdout and proc.stdout.count("-m onnx_ops") == 2
    proc = run(diff, "--platform", "macos/arm64")
    assert proc.returncode == 0 and "nothing to recheck" in proc.stdout


def test_missing_diff_is_a_clear_error(tmp_path):
    proc = run(tmp_path / "nope.json")
    assert proc.returncode == 2 and "cannot read the diff" in proc.stderr
