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

The lock lives in a folder of this user's own (``iree-conformance-<uid>`` in the temp
folder, made 0700): a folder or file there that another user owns, a symlink, or a folder
others can write is not used (the work goes on without the lock, said once), and the file
is opened with ``O_NOFOLLOW``, so a link planted in the shared temp folder never makes a
run (root's included) create or lock a file elsewhere. A wait past ``SAY_AFTER_S`` is
told through ``on_wait`` (the worker passes it to the parent, which prints it), and the
seconds waited are not counted in the compile's time nor against its stage limit.

Windows has no shared file locks in its standard library: there timings exclude each other
and compiles do not wait.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

#: The longest a timing or a compile waits for the lock before it goes on without it.
WAIT_LIMIT_S = 30.0
POLL_S = 0.005
#: A wait longer than this is told (``on_wait``).
SAY_AFTER_S = 1.0
LOCK_ENV = "IREE_CONFORMANCE_QUIET_LOCK"  # the lock file's path (tests give their own)


_said: set[str] = set()


def _say_once(text: str) -> None:
    if text not in _said:
        _said.add(text)
        print(f"iree-conformance: {text}", file=sys.stderr)


def _own(st: os.stat_result, kind: Callable[[int], bool]) -> bool:
    """Of the right kind, owned by this user, writable by no one else."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    return (
        kind(st.st_mode)
        and (uid is None or st.st_uid == uid)
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def lock_path() -> Path | None:
    """The machine-wide lock file of this user (``$IREE_CONFORMANCE_QUIET_LOCK`` if set),
    in a folder of this user's own; None when that folder is not (told once)."""
    if os.environ.get(LOCK_ENV):
        return Path(os.environ[LOCK_ENV])
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    folder = Path(tempfile.gettempdir()) / f"iree-conformance-{user}"
    with contextlib.suppress(FileExistsError, OSError):
        folder.mkdir(mode=0o700)
    try:
        st = os.lstat(folder)
    except OSError:
        return None  # an unwritable temp dir: go on alone
    if not _own(st, stat.S_ISDIR):
        _say_once(
            f"{folder} is not a folder of this user's own (a symlink, another owner, or "
            "writable by others): timings and compiles go on without the quiet lock; remove it"
        )
        return None
    return folder / "quiet.lock"


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


def _open(path: Path) -> int | None:
    """The lock file, opened without following a symlink; None (go on alone) when it
    cannot be, or is not a regular file of this user's own (told once)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError:
        if os.path.islink(path):
            _say_once(f"{path} is a symlink: going on without the quiet lock; remove it")
        return None  # an unwritable temp dir: go on alone
    if not _own(os.fstat(fd), stat.S_ISREG):
        os.close(fd)
        _say_once(
            f"{path} is not a file of this user's own: going on without the quiet lock; remove it"
        )
        return None
    return fd


def _take(
    path: Path,
    exclusive: bool,
    deadline: float,
    on_wait: Callable[[str], None] | None = None,
) -> tuple[int | None, bool]:
    """(the open file, whether its lock is held), waiting until ``deadline``; a wait
    past ``SAY_AFTER_S`` is told once through ``on_wait``."""
    fd = _open(path)
    if fd is None:
        return None, False
    start = time.perf_counter()
    while (held := _try_lock(fd, exclusive)) is False:
        now = time.perf_counter()
        if now > deadline:
            break
        if on_wait is not None and now - start > SAY_AFTER_S:
            on_wait(
                f"waiting up to {deadline - start:.0f} s for the quiet lock "
                f"{path.with_name(path.name.removesuffix('.gate'))}: another "
                "process of this user is timing a case (not counted in this stage's time)"
            )
            on_wait = None
        time.sleep(POLL_S)
    return fd, bool(held)


def _release(fd: int | None, held: bool) -> None:
    if fd is None:
        return
    if held:
        _unlock(fd)
    os.close(fd)  # releases a POSIX lock


@contextlib.contextmanager
def holding(
    exclusive: bool,
    limit_s: float = WAIT_LIMIT_S,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[dict[str, float | bool]]:
    """Holds the lock (exclusive for a timing, shared for a compile) while the block runs.
    Yields ``{"held": bool, "wait_s": float}``: ``held`` False when the lock could not be
    taken or the wait passed ``limit_s``; ``on_wait`` is told once of a long wait.

    A gate file beside the lock queues compiles behind a timing that waits: flock gives
    an exclusive request no priority, so with several workers compiling their shared
    holds could overlap for as long as they run. A compile passes the gate (shared) on
    its way in; a timing holds the gate (exclusive) while it waits for the lock."""
    start = time.perf_counter()
    deadline = start + limit_s
    path = lock_path()
    if path is None:
        yield {"held": False, "wait_s": 0.0}
        return
    told: list[str] = []

    def tell(text: str) -> None:  # once, whichever of the two waits is long
        if on_wait is not None and not told:
            told.append(text)
            on_wait(text)

    gate_fd, gate_held = _take(path.with_name(path.name + ".gate"), exclusive, deadline, tell)
    if not exclusive:
        _release(gate_fd, gate_held)
        gate_fd, gate_held = None, False
    fd, held = _take(path, exclusive, deadline, tell)
    try:
        yield {"held": held, "wait_s": round(time.perf_counter() - start, 4)}
    finally:
        _release(fd, held)
        _release(gate_fd, gate_held)
