"""Timing alone on the machine: one case is timed at a time, and no compile runs meanwhile.

Two xdist workers timing at once on a 2-core machine, or one timing while another
compiles, move each other's figures by 2x to 10x (a StableHLO ``while`` loop's median
went from 0.47 ms to 13 ms between a cold and a warm run of one commit: the other worker
was timing beside it). So every process of this user on the machine shares one lock file:
a timing holds it exclusively, a compile holds it shared. The OS drops a lock when its
holder dies, however it dies. A wait is bounded (``WAIT_LIMIT_S``): past it the work goes
on without the lock, and the timing's figures say so (``quiet: false``), since neither a
verdict nor a compile depends on it.

Windows has no shared file locks in its standard library: there timings exclude each other
and compiles do not wait.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: The longest a timing or a compile waits for the lock before it goes on without it.
WAIT_LIMIT_S = 120.0
POLL_S = 0.005
LOCK_ENV = "IREE_CONFORMANCE_QUIET_LOCK"  # the lock file's path (tests give their own)


def lock_path() -> Path:
    """The machine-wide lock file of this user (``$IREE_CONFORMANCE_QUIET_LOCK`` if set)."""
    if os.environ.get(LOCK_ENV):
        return Path(os.environ[LOCK_ENV])
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"iree-conformance-{user}-quiet.lock"


def _try_lock(fd: int, exclusive: bool) -> bool:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        if not exclusive:
            return True  # no shared locks: compiles do not wait there
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def holding(exclusive: bool, limit_s: float = WAIT_LIMIT_S) -> Iterator[dict[str, float | bool]]:
    """Holds the lock (exclusive for a timing, shared for a compile) while the block runs.
    Yields ``{"held": bool, "wait_s": float}``: ``held`` False when the lock could not be
    opened or the wait passed ``limit_s``."""
    state: dict[str, float | bool] = {"held": False, "wait_s": 0.0}
    try:
        path = lock_path()
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield state  # an unwritable temp dir: go on alone
        return
    start = time.perf_counter()
    try:
        while not (held := _try_lock(fd, exclusive)):
            if time.perf_counter() - start > limit_s:
                break
            time.sleep(POLL_S)
        state["held"], state["wait_s"] = held, round(time.perf_counter() - start, 4)
        yield state
    finally:
        os.close(fd)  # releases the lock
