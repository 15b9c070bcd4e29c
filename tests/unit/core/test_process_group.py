"""A child past its time limit is stopped with everything it started (issue 58 item 9:
a timed-out reproducer check left iree-compile running, orphaned)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iree_conformance.common.process_group import run_in_group
from iree_conformance.repro import verify

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead (reaped by init soon)
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_timeout_kills_what_the_child_started(tmp_path):
    pid_file = tmp_path / "pid"
    script = f"sleep 60 & echo $! > {pid_file}; wait"
    with pytest.raises(subprocess.TimeoutExpired):
        run_in_group(["/bin/sh", "-c", script], timeout=1.0, stdout=subprocess.PIPE)
    assert _gone(int(pid_file.read_text()))


def test_a_reproducer_past_its_limit_leaves_nothing_running(tmp_path):
    folder = tmp_path / "repro"
    folder.mkdir()
    pid_file = tmp_path / "pid"
    # repro.sh starts its compile (a sleep here) and waits for it, as the real one does
    (folder / "repro.sh").write_text(f"/bin/sleep 60 &\necho $! > {pid_file}\nwait\n")
    result = verify.run_reproducer(folder, Path(sys.executable).parent, 1.0)
    assert result["timed_out"]
    assert _gone(int(pid_file.read_text()))
