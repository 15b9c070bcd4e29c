"""`update-expectations` killed in the middle of writing a manifest (issue 46, issue 47):
the manifest stays whole (the old text), the temporary file the kill left is swept by the
next write, which then succeeds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from iree_conformance.common.tomlio import tomllib

ROOT = Path(__file__).resolve().parents[3]
FULL_DISK = ROOT / "tests" / "support" / "full_disk"
OLD = '# llvm-cpu known failures\n[xfail]\n"onnx-ops/test_old" = { expect = "fail-compile", reason = "old" }\n'


def results(path: Path) -> Path:
    outcome = {
        "case_id": "onnx-ops/test_abs",
        "suite": "onnx_ops",
        "target": "llvm-cpu",
        "status": "error",
        "stage": "compile",
        "verdict": "fail",
        "diagnostics": ["error: failed to legalize operation 'torch.operator'"],
        "duration": 1.0,
    }
    path.write_text(
        json.dumps({"schema": 1, "metadata": {"os": "linux"}, "outcomes": [outcome]}),
        encoding="utf-8",
    )
    return path


def command(tmp_path: Path, manifests: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "iree_conformance.cli.main",
        "update-expectations",
        str(results(tmp_path / "r.json")),
        "--expectations-dir",
        str(manifests),
        "--os",
        "linux",
    ]


def env(hang_under: Path | None) -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(FULL_DISK), str(ROOT / "python"), str(ROOT)])
    e.pop("FAULT_HANG_UNDER", None)
    if hang_under is not None:
        e["FAULT_HANG_UNDER"] = str(hang_under)
    return e


def test_a_manifest_write_killed_midway_leaves_it_whole_and_the_next_write_sweeps(tmp_path):
    manifests = tmp_path / "expectations"
    manifests.mkdir()
    manifest = manifests / "llvm-cpu.toml"
    manifest.write_text(OLD, encoding="utf-8")
    proc = subprocess.Popen(
        command(tmp_path, manifests), cwd=ROOT, env=env(manifests), start_new_session=True
    )
    deadline = time.monotonic() + 120
    stray: list[Path] = []
    while time.monotonic() < deadline and not stray:
        stray = [p for p in manifests.glob(".llvm-cpu.toml.*.tmp") if p.stat().st_size]
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert stray, "the writer never reached the middle of its write"
    assert manifest.read_text(encoding="utf-8") == OLD  # whole: the old text
    tomllib.loads(manifest.read_text(encoding="utf-8"))
    old = time.time() - 3600
    os.utime(stray[0], (old, old))  # a killed writer's file, from an hour ago

    done = subprocess.run(
        command(tmp_path, manifests), cwd=ROOT, env=env(None), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    table = tomllib.loads(manifest.read_text(encoding="utf-8"))["xfail"]
    assert "onnx-ops/test_abs" in table, table
    assert not list(manifests.glob("*.tmp")) and not list(manifests.glob(".*.tmp"))


def test_the_sweep_keeps_a_live_writers_file_and_other_files(tmp_path):
    from iree_conformance.common.fsutil import sweep_stray_temps

    target = tmp_path / "llvm-cpu.toml"
    old_tmp = tmp_path / ".llvm-cpu.toml.abc123.tmp"
    live_tmp = tmp_path / ".llvm-cpu.toml.def456.tmp"
    other = tmp_path / ".vmvx.toml.abc123.tmp"
    for p in (old_tmp, live_tmp, other):
        p.write_text("half")
    hour_ago = time.time() - 3600
    for p in (old_tmp, other):
        os.utime(p, (hour_ago, hour_ago))
    assert sweep_stray_temps(target) == [old_tmp]
    assert live_tmp.exists() and other.exists()
