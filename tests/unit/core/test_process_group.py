"""A child past its time limit is stopped with everything it started (issue 58 item 9:
a timed-out reproducer check left iree-compile running, orphaned)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iree_conformance.common.process_group import launched, run_in_group
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


def test_a_process_that_loaded_jax_starts_children_without_a_fork_warning(tmp_path):
    """A preexec_fn made JAX warn "os.fork() was called ... deadlock" once per child
    (27 times in the tests): the children start without one (issue 58 item 16)."""
    pytest.importorskip("jax")
    code = (
        "import warnings, subprocess, sys\n"
        "warnings.simplefilter('error')\n"
        "import jax.numpy as jnp\n"
        "jnp.ones(2).block_until_ready()\n"
        "from iree_conformance.common import version_envs\n"
        "from iree_conformance.common.process_group import launched, run_in_group\n"
        "run_in_group(['true'], timeout=60)\n"
        "version_envs._run(['true'], 'true', print)\n"
        "subprocess.run(launched([sys.executable, '-c', 'pass'], address_space=2**32), check=True)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "os.fork()" not in proc.stderr, proc.stderr[-2000:]


def test_the_launcher_sets_the_address_space_limit():
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0])"
    out = subprocess.run(
        launched([sys.executable, "-c", code], address_space=3 * 2**30),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert int(out) == 3 * 2**30
