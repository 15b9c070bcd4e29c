"""Timing alone on the machine: one case is timed at a time, and no compile runs meanwhile.

Two xdist workers timing at once on a 2-core machine, or one timing while another
compiles, move each other's figures by 2x to 10x (a StableHLO ``while`` loop's median
went from 0.47 ms to 13 ms between a cold and a warm run of one commit: the other worker
was timing beside it). So every process of this user on the machine shares one lock file:
a timing holds it exclusively, an IREE compile in this project's workers holds it shared
(the imports and other programs on the machine do not take it). The OS drops a lock when its
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
WAIT_LIMIT_S = 30.0
POLL_S = 0.005
LOCK_ENV = "IREE_CONFORMANCE_QUIET_LOCK"  # the lock file's path (tests give their own)


def lock_path() -> Path:
    """The machine-wide lock file of this user (``$IREE_CONFORMANCE_QUIET_LOCK`` if set)."""
    if os.environ.get(LOCK_ENV):
        return Path(os.environ[LOCK_ENV])
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"iree-conformance-{user}-quiet.lock"


def _try_lock(fd: int, exclusive: bool) -> bool | None:
    """True: taken; False: held by another; None: this file system cannot lock (NFS
    without locks, say): go on without it."""
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
    except OSError:
        return None
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def _take(path: Path, exclusive: bool, deadline: float) -> tuple[int | None, bool]:
    """(the open file, whether its lock is held), waiting until ``deadline``."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None, False  # an unwritable temp dir: go on alone
    while (held := _try_lock(fd, exclusive)) is False:
        if time.perf_counter() > deadline:
            break
        time.sleep(POLL_S)
    return fd, bool(held)


def _release(fd: int | None, held: bool) -> None:
    if fd is None:
        return
    if held:
        _unlock(fd)
    os.close(fd)  # releases a POSIX lock


@contextlib.contextmanager
def holding(exclusive: bool, limit_s: float = WAIT_LIMIT_S) -> Iterator[dict[str, float | bool]]:
    """Holds the lock (exclusive for a timing, shared for a compile) while the block runs.
    Yields ``{"held": bool, "wait_s": float}``: ``held`` False when the lock could not be
    taken or the wait passed ``limit_s``.

    A gate file beside the lock queues compiles behind a timing that waits: flock gives
    an exclusive request no priority, so with several workers compiling their shared
    holds could overlap for as long as they run. A compile passes the gate (shared) on
    its way in; a timing holds the gate (exclusive) while it waits for the lock."""
    start = time.perf_counter()
    deadline = start + limit_s
    path = lock_path()
    gate_fd, gate_held = _take(path.with_name(path.name + ".gate"), exclusive, deadline)
    if not exclusive:
        _release(gate_fd, gate_held)
        gate_fd, gate_held = None, False
    fd, held = _take(path, exclusive, deadline)
    try:
        yield {"held": held, "wait_s": round(time.perf_counter() - start, 4)}
    finally:
        _release(fd, held)
        _release(gate_fd, gate_held)
