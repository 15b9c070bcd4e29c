"""A full disk during a conformance run (issue 47 item 11, issue 46): the results file and
the artifact store. The disk fills at the write boundary (tests/support/full_disk: half of
a write lands, then ENOSPC), in the pytest process and in IREE's worker alike; this
machine cannot mount a small tmpfs for tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from iree_conformance.common.store import ArtifactStore

ROOT = Path(__file__).resolve().parents[3]
FULL_DISK = ROOT / "tests" / "support" / "full_disk"


def run(full_under: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FULL_DISK), str(ROOT / "python"), str(ROOT), env.get("PYTHONPATH", "")]
    )
    env.pop("FAULT_FULL_UNDER", None)
    if full_under is not None:
        env["FAULT_FULL_UNDER"] = str(full_under)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "conformance/test_conformance.py",
            "-m",
            "stablehlo",
            "-p",
            "no:cacheprovider",
            "-k",
            "softmax",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def stray(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_report_json_onto_a_full_disk_is_an_error_after_the_summary(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    proc = run(full, "--store-dir", str(tmp_path / "store"), "--report-json", str(full / "r.json"))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
    assert f"cannot write --report-json {full / 'r.json'} (No space left on device)" in out
    assert " passed" in proc.stdout.splitlines()[-1], proc.stdout[-500:]  # the summary
    assert not (full / "r.json").exists() and not stray(full)


def test_a_full_store_is_said_at_the_end_and_the_next_run_fills_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = run(store, "--store-dir", str(store))
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    (line,) = [x for x in first.stdout.splitlines() if "the artifact store" in x]
    assert "is full" in line, line
    assert not stray(store)
    assert not list(store.glob("vmfb/*/*.bin")), "nothing half-written is kept"
    second = run(None, "--store-dir", str(store))
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    assert "the artifact store" not in second.stdout
    modules = list(store.glob("vmfb/*/*.bin"))
    assert modules and all(ArtifactStore(store).get("vmfb", p.stem) for p in modules)
    assert not stray(store)
