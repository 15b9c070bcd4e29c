"""Test-only: a full disk under one folder, at the write boundary (put on PYTHONPATH by
tests that need it, so the pytest process and IREE's worker both get it).

With FAULT_FULL_UNDER=DIR, a file opened for writing under DIR through ``os.fdopen`` (the
way common/fsutil writes every file atomically) takes half of its first write and then
raises ENOSPC, as a disk that fills mid-write does. This machine cannot mount a small
tmpfs for the tests, so the fault is simulated here; nothing else changes.
"""

import errno
import os

_UNDER = os.environ.get("FAULT_FULL_UNDER")
if _UNDER:
    _real_fdopen = os.fdopen
    _root = os.path.realpath(_UNDER)

    class _FullFile:
        def __init__(self, f):
            self._f = f

        def write(self, data):
            self._f.write(bytes(data)[: len(data) // 2])
            self._f.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()
            return False

        def __getattr__(self, name):
            return getattr(self._f, name)

    def _fdopen(fd, mode="r", *args, **kwargs):
        f = _real_fdopen(fd, mode, *args, **kwargs)
        if "w" in mode or "a" in mode:
            try:
                path = os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                return f
            if path.startswith(_root + os.sep):
                return _FullFile(f)
        return f

    os.fdopen = _fdopen

# With FAULT_HANG_UNDER=DIR, a write under DIR takes half of its data and then hangs, so a
# test can kill the writer in the middle of it (SIGKILL between the write and the rename).
_HANG = os.environ.get("FAULT_HANG_UNDER")
if _HANG:
    import time as _time

    _fdopen_before = os.fdopen
    _hang_root = os.path.realpath(_HANG)

    class _HangFile:
        def __init__(self, f):
            self._f = f

        def write(self, data):
            self._f.write(bytes(data)[: len(data) // 2])
            self._f.flush()
            _time.sleep(300)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()
            return False

        def __getattr__(self, name):
            return getattr(self._f, name)

    def _fdopen_hang(fd, mode="r", *args, **kwargs):
        f = _fdopen_before(fd, mode, *args, **kwargs)
        if "w" in mode:
            try:
                path = os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                return f
            if path.startswith(_hang_root + os.sep):
                return _HangFile(f)
        return f

    os.fdopen = _fdopen_hang
