"""A child and everything it starts, stopped as one: its own process group, killed whole
(``killpg``) on a timeout or an interrupt, and on Linux killed when this process dies.

``subprocess.run(timeout=...)`` kills only the child it started: a ``sh repro.sh`` past
its limit died, and the ``iree-compile`` it had started ran on, orphaned, in a scratch
folder already deleted. ``run_in_group`` is ``subprocess.run`` with that fixed (POSIX;
elsewhere the child alone, as before).

No ``preexec_fn``: Python code between fork and exec can deadlock a process with threads
(JAX warns "os.fork() was called ... will likely lead to a deadlock" for each such
child). The group comes from ``start_new_session``, and the death with the parent (Linux
``PR_SET_PDEATHSIG``) and an address-space limit from a short launcher (``launched``)
that sets them in the child, then executes the command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

__all__ = ["kill_group", "launched", "run_in_group"]


_LAUNCHER = """
import os, sys
if sys.argv[1] != "-":
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2)
if sys.platform.startswith("linux"):
    import ctypes
    try:
        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
os.execvp(sys.argv[2], sys.argv[2:])
"""


def launched(command: list[str], address_space: int | None = None) -> list[str]:
    """The command started through the launcher (POSIX): on Linux killed when this
    process dies, and limited to ``address_space`` bytes when given."""
    if os.name != "posix":  # pragma: no cover - Windows
        return command
    limit = "-" if address_space is None else str(address_space)
    return [sys.executable, "-c", _LAUNCHER, limit, *command]


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """Kills the child's process group (the child alone off POSIX) and waits for it."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except OSError:
        pass
    proc.wait()


def run_in_group(
    command: list[str], timeout: float | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(command, timeout=timeout, **kwargs)`` (``input`` and ``check``
    excepted), the child in its own group: past ``timeout`` (``TimeoutExpired``, as run
    raises it) or on an interrupt the whole group is killed."""
    with subprocess.Popen(launched(command), start_new_session=True, **kwargs) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except BaseException:  # TimeoutExpired, KeyboardInterrupt: nothing left running
            kill_group(proc)
            raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
