"""A case file's import and a case's export (``case_folder`` kinds that ask for it: torch's),
under the run's time limits.

Both run the case's own Python (its module's body, its ``forward``) in the process that
collects and judges, outside the worker's limits; here each runs in a child process
(started by ``forkserver``, else spawned: never a fork of this process, which may hold
JAX) that is killed when it runs past its limit: the import past the ``prepare`` limit, the export (torch's export
and eager run, then iree-turbine's import) past ``prepare`` plus ``import``, from
``--stage-timeout`` or the defaults (docs/torch.md). The child is kept for the next call
until one runs past its limit.
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from iree_conformance.model.targets import DEFAULT_STAGE_TIMEOUTS

_limits: dict[str, float] = {}


class TimedOut(Exception):
    """The child ran past its limit and was killed; the message says how long."""


class ChildFailed(Exception):
    """The child raised (the message is its exception's) or died."""


def set_limits(stage_timeouts: Mapping[str, float]) -> None:
    """The run's ``--stage-timeout`` values (the defaults fill the rest)."""
    _limits.clear()
    _limits.update(stage_timeouts)


def limit(*stages: str) -> float:
    """The sum of the stages' limits."""
    return sum(_limits.get(s, DEFAULT_STAGE_TIMEOUTS[s]) for s in stages)


@functools.lru_cache(maxsize=1)
def _context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def _serve(conn: Connection) -> None:
    """The child's loop: one call at a time, until the parent closes the pipe. Ctrl-C is
    the parent's to handle (it ends the child)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result: tuple[bool, Any] = (True, fn(*args))
        except BaseException as e:  # noqa: BLE001 - told to the parent, which raises it
            result = (False, f"{type(e).__name__}: {e}")
        conn.send(result)


_live: list[tuple[Any, Connection]] = []  # the child and its pipe, while it serves


def _server() -> tuple[Any, Connection]:
    """The child that runs the calls, started on first use and kept (torch's first
    export in a process costs seconds): one past its limit is killed, the next call
    starts another."""
    if _live and _live[0][0].is_alive():
        return _live[0]
    _stop()
    context = _context()
    mine, theirs = context.Pipe()
    process = context.Process(target=_serve, args=(theirs,), name="case-export", daemon=True)
    process.start()
    theirs.close()
    _live.append((process, mine))
    return _live[0]


def stop() -> None:
    """Ends the child (the next call starts another, which imports everything afresh)."""
    _stop()


def _stop() -> None:
    while _live:
        process, conn = _live.pop()
        conn.close()
        if process.is_alive():
            process.kill()
        process.join(5)


def call(fn: Callable[..., Any], args: tuple[Any, ...], seconds: float) -> Any:
    """``fn(*args)`` in the child process (``fn`` importable, args and result picklable);
    ``TimedOut`` past ``seconds`` (the child killed), ``ChildFailed`` if it raised or died."""
    process, conn = _server()
    try:
        conn.send((fn, args))
        if not conn.poll(seconds):
            _stop()
            raise TimedOut(f"ran past its limit of {seconds:g} s and was stopped")
        ok, value = conn.recv()
    except (EOFError, OSError):
        process.join(5)
        code = process.exitcode
        _stop()
        raise ChildFailed(f"its process died (exit status {code})") from None
    if not ok:
        raise ChildFailed(value)
    return value
