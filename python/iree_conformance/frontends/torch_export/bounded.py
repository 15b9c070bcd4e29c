"""A torch case file's import and a torch case's export, under the run's time limits.

Both run the case's own Python (its module's body, its ``forward``) in the process that
collects and judges, outside the worker's limits; here each runs in a child process (a
``forkserver`` child with torch imported once, else a spawned one) that is killed when it
runs past its limit: the import past the ``prepare`` limit, the export (torch's export
and eager run, then iree-turbine's import) past ``prepare`` plus ``import``, from
``--stage-timeout`` or the defaults (docs/torch.md).
"""

from __future__ import annotations

import functools
import multiprocessing
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
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["torch"])
        return context
    return multiprocessing.get_context("spawn")


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        result: tuple[bool, Any] = (True, fn(*args))
    except BaseException as e:  # noqa: BLE001 - told to the parent, which raises it
        result = (False, f"{type(e).__name__}: {e}")
    conn.send(result)
    conn.close()


def call(fn: Callable[..., Any], args: tuple[Any, ...], seconds: float) -> Any:
    """``fn(*args)`` in a child process (``fn`` importable, args and result picklable);
    ``TimedOut`` past ``seconds`` (the child killed), ``ChildFailed`` if it raised or died."""
    context = _context()
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, fn, args), name="torch-export")
    process.start()
    send.close()
    try:
        if not receive.poll(seconds):
            raise TimedOut(f"ran past its limit of {seconds:g} s and was stopped")
        ok, value = receive.recv()
    except EOFError:
        process.join(5)
        raise ChildFailed(f"its process died (exit status {process.exitcode})") from None
    finally:
        receive.close()
        if process.is_alive():
            process.kill()
        process.join(5)
    if not ok:
        raise ChildFailed(value)
    return value
