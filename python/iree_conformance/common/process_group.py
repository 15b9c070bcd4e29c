"""A child and everything it starts, stopped as one: its own process group, killed whole
(``killpg``) on a timeout or an interrupt, and on Linux killed when this process dies.

``subprocess.run(timeout=...)`` kills only the child it started: a ``sh repro.sh`` past
its limit died, and the ``iree-compile`` it had started ran on, orphaned, in a scratch
folder already deleted. ``run_in_group`` is ``subprocess.run`` with that fixed (POSIX;
elsewhere the child alone, as before).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

__all__ = ["kill_group", "own_group", "run_in_group"]


def own_group() -> None:  # pragma: no cover - runs in the child
    """``preexec_fn``: the child's own process group, and on Linux its death with ours."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


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
    posix = os.name == "posix"
    with subprocess.Popen(
        command,
        preexec_fn=own_group if posix else None,  # noqa: PLW1509 - it only sets the group
        **kwargs,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except BaseException:  # TimeoutExpired, KeyboardInterrupt: nothing left running
            kill_group(proc)
            raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
