"""One timing at a time on the machine, and no compile beside it (common/quiet_lock.py)."""

from __future__ import annotations

import os
import stat
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


@pytest.fixture
def default_lock(tmp_path, monkeypatch):
    """The lock at its default place, in a temp folder of the test's own."""
    monkeypatch.delenv(quiet_lock.LOCK_ENV, raising=False)
    monkeypatch.setattr(quiet_lock.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "tmp" / f"iree-conformance-{os.getuid()}"


def test_the_default_lock_is_in_a_folder_of_this_users_own(default_lock):
    with quiet_lock.holding(exclusive=True) as state:
        assert state["held"]
    assert default_lock.is_dir() and stat.S_IMODE(default_lock.stat().st_mode) == 0o700
    assert (default_lock / "quiet.lock").is_file()


def test_a_planted_symlink_is_never_followed(default_lock, tmp_path, capsys):
    """Another user links the lock folder (or the lock file) to a place of their choosing:
    nothing is created there; the work goes on without the lock, and says so."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    default_lock.symlink_to(elsewhere)
    with quiet_lock.holding(exclusive=True) as state:
        assert state["held"] is False
    assert list(elsewhere.iterdir()) == []
    assert "not a folder of this user's own" in capsys.readouterr().err


def test_a_symlinked_lock_file_is_not_created(tmp_path, monkeypatch):
    target = tmp_path / "victim"
    link = tmp_path / "quiet.lock"
    link.symlink_to(target)
    monkeypatch.setenv(quiet_lock.LOCK_ENV, str(link))
    with quiet_lock.holding(exclusive=True) as state:
        assert state["held"] is False
    assert not target.exists()


def test_a_folder_others_can_write_is_not_used(default_lock):
    default_lock.mkdir(mode=0o700)
    default_lock.chmod(0o777)
    with quiet_lock.holding(exclusive=True) as state:
        assert state["held"] is False
    assert not (default_lock / "quiet.lock").exists()


def test_a_long_wait_is_told_once(lock_file):
    proc = _holder("x", 1.6)
    told: list[str] = []
    with quiet_lock.holding(exclusive=False, on_wait=told.append) as state:
        assert state["held"] and state["wait_s"] >= 1.0
    proc.wait(timeout=30)
    assert len(told) == 1 and "waiting up to 30 s for the quiet lock" in told[0]


def test_a_compiles_wait_for_the_lock_is_not_its_compile_time(lock_file):
    """The worker's compiler tells the parent of the wait, and the caller leaves it out."""
    pytest.importorskip("iree.compiler")
    from iree_conformance.engine.worker.compiler import Compiler

    told: list[tuple] = []
    compiler = Compiler(lambda: "", told.append)
    mlir = b"func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }"
    flags = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu")
    proc = _holder("x", 1.6)
    assert compiler.compile(mlir, flags)
    proc.wait(timeout=30)
    assert [m[0] for m in told] == ["waiting", "waited"]
    assert compiler.last_lock_wait_s >= 1.0 and told[1][1] == compiler.last_lock_wait_s
