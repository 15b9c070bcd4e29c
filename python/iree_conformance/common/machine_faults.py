"""Faults of the machine, not of the program: never stored, never IREE's verdict.

A full disk, a temporary folder that is missing or cannot be written, memory exhausted
or a process killed from outside (the kernel's OOM killer sends SIGKILL) make a stage
fail or a worker die, and the same program passes once the machine is fixed. Such a
failure is the harness's error with the machine's reason (``Outcome.info["harness_error"]
== MACHINE``): the store keeps nothing of it, so the next run tries again, and the
verdict is never a listed (or unlisted) failure of IREE's.

``reason`` finds one in a failure's text (IREE's and Python's words for these faults)
and in the temporary folder the compiler would use; ``of_exception`` in a Python
exception; ``of_exit`` in a worker's exit status.
"""

from __future__ import annotations

import errno
import os
import re
import signal

__all__ = ["MACHINE", "message", "of_exception", "of_exit", "reason", "temp_folder_problem"]

#: ``Outcome.info["harness_error"]`` of a stage failed by the machine.
MACHINE = "machine"

_WORDS = (
    (
        re.compile(r"No space left on device|Disk quota exceeded|\[Errno (28|122)\]"),
        "no space left on device",
    ),
    (re.compile(r"Read-only file system|\[Errno 30\]"), "a read-only file system"),
    (re.compile(r"failed to generate temporary file"), "no usable temporary folder"),
    (
        re.compile(
            r"\bMemoryError\b|std::bad_alloc|LLVM ERROR: out of memory|Cannot allocate memory"
        ),
        "memory exhausted",
    ),
)
_ERRNOS = {
    errno.ENOSPC: "no space left on device",
    getattr(errno, "EDQUOT", errno.ENOSPC): "no space left on device",
    errno.EROFS: "a read-only file system",
    errno.ENOMEM: "memory exhausted",
}
# Where LLVM (the compiler's temporary files) looks, in its order, before /tmp.
_TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP", "TEMPDIR")


def temp_folder_problem() -> str | None:
    """What is wrong with the temporary folder the compiler would write to, or None."""
    for name in _TEMP_VARIABLES:
        folder = os.environ.get(name)
        if not folder:
            continue
        if not os.path.exists(folder):
            return f"the temporary folder ${name}={folder} does not exist"
        if not os.path.isdir(folder):
            return f"the temporary folder ${name}={folder} is not a folder"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"the temporary folder ${name}={folder} cannot be written"
        return None
    return None


def reason(text: str) -> str | None:
    """The machine's fault behind a failure whose words are ``text``, or None."""
    for pattern, what in _WORDS:
        if pattern.search(text):
            problem = temp_folder_problem()
            return f"{what} ({problem})" if problem else what
    return temp_folder_problem()


def of_exception(error: BaseException) -> str | None:
    """The machine's fault a Python exception reports, or None."""
    if isinstance(error, MemoryError):
        return "memory exhausted (MemoryError)"
    if isinstance(error, OSError) and error.errno in _ERRNOS:
        return f"{_ERRNOS[error.errno]} ({error.strerror or error})"
    return None


def of_exit(returncode: int | None) -> str | None:
    """The machine's fault a dead worker's exit status says (killed from outside)."""
    if returncode is not None and returncode == -getattr(signal, "SIGKILL", 9):
        return "the process was killed (SIGKILL: the kernel's OOM killer, or another process)"
    return None


def message(what: str, stage: str) -> str:
    """The first line of a failure of the machine's."""
    return (
        f"the harness's error, not IREE's verdict: the machine failed {stage}: {what}; "
        "nothing was stored: fix the machine and run again"
    )
