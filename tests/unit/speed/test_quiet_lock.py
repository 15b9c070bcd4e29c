"""One timing at a time on the machine, and no compile beside it (common/quiet_lock.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from iree_conformance.common import quiet_lock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shared flock is POSIX-only")

HOLDER = textwrap.dedent(
    """
    import sys, time
    from iree_conformance.common import quiet_lock
    with quiet_lock.holding(exclusive=sys.argv[1] == "x") as state:
        assert state["held"]
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "quiet.lock"
    monkeypatch.setenv(quiet_lock.LOCK_ENV, str(path))
    return path


def _holder(kind: str, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, kind, str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_compile_waits_while_another_process_times(lock_file):
    proc = _holder("x", 0.6)
    start = time.perf_counter()
    with quiet_lock.holding(exclusive=False) as state:
        waited = time.perf_counter() - start
    proc.wait(timeout=30)
    assert state["held"] and waited >= 0.3 and state["wait_s"] >= 0.3


def test_compiles_share_the_lock_and_a_timing_waits_for_them(lock_file):
    proc = _holder("s", 0.6)
    with quiet_lock.holding(exclusive=False) as shared:
        assert shared["held"] and shared["wait_s"] < 0.3  # compiles do not wait for each other
    with quiet_lock.holding(exclusive=True) as timing:
        assert timing["held"] and timing["wait_s"] >= 0.2  # the compile finished first
    proc.wait(timeout=30)


def test_a_wait_is_bounded_and_says_it_was_not_alone(lock_file):
    proc = _holder("x", 2.0)
    with quiet_lock.holding(exclusive=True, limit_s=0.1) as state:
        assert state["held"] is False and 0.1 <= state["wait_s"] < 1.5
    proc.wait(timeout=30)


def test_the_lock_dies_with_its_holder(lock_file):
    proc = _holder("x", 60)
    proc.kill()
    proc.wait(timeout=30)
    with quiet_lock.holding(exclusive=True, limit_s=5) as state:
        assert state["held"] and state["wait_s"] < 2


def test_a_waiting_timing_is_not_starved_by_new_compiles(lock_file):
    """flock gives a waiting exclusive request no priority: the gate queues a compile that
    comes after a waiting timing behind it."""
    compile_1 = _holder("s", 1.0)  # a compile holds the lock shared for 1 s
    timing = _holder_waiting("x", 0.5)  # a timing asks, and waits for that compile
    time.sleep(0.3)
    start = time.perf_counter()
    with quiet_lock.holding(exclusive=False) as later_compile:
        waited = time.perf_counter() - start
    compile_1.wait(timeout=30)
    timing.wait(timeout=30)
    assert later_compile["held"] and waited >= 0.6  # after the timing, not beside compile_1


def _holder_waiting(kind: str, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, kind, str(seconds)], text=True)
    time.sleep(0.2)  # it is waiting for the lock by now
    return proc
