"""Entry point of a worker process: ``python -m iree_conformance.engine.worker.main LOG STORE``.

The protocol runs over the process's original stdout and stdin as length-prefixed
pickle frames; file descriptors 1 and 2 are pointed at LOG, so whatever the compiler
or runtime prints (diagnostics, a crash's stack dump) lands there and the parent can
read it. Messages to the parent: ("ready",), ("stage", name), ("compile_key", key) as a
case's compile starts, ("result", CaseResult | BatchResult); from it: ("job", CaseJob | BatchJob), ("exit",) (jobs.py).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO


def _log_stream(fd: int) -> TextIO:
    """A line-buffered UTF-8 text stream on fd (the log file), which never fails on a
    character it cannot encode."""
    return open(
        fd,
        "w",
        closefd=False,
        buffering=1,
        encoding="utf-8",
        errors="backslashreplace",
        newline="\n",
    )


def _read_frame(stream) -> tuple[Any, ...] | None:
    header = stream.read(8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack("<Q", header)
    return pickle.loads(stream.read(size))


def _write_frame(stream, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _inject(kind: str) -> None:
    if kind == "crash":
        os.abort()
    if kind == "hang":
        import time

        time.sleep(3600)
    if kind == "spin":  # busy: spends CPU, as a runaway loop does
        while True:
            pass
    if kind == "kill":  # killed from outside, as by the kernel's OOM killer
        os.kill(os.getpid(), 9)
    if kind == "memory":
        raise MemoryError
    if kind == "enospc":
        import errno

        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def main(argv: list[str]) -> int:
    log_path, store_dir = argv[0], argv[1]
    channel_out = os.fdopen(os.dup(1), "wb")
    channel_in = os.fdopen(os.dup(0), "rb")
    log_fd = os.open(
        log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), 0o644
    )
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    sys.stdout, sys.stderr = _log_stream(1), _log_stream(2)

    from iree_conformance.common import machine_faults
    from iree_conformance.common.env_check import HARNESS_ENVIRONMENT, is_iree_import_failure
    from iree_conformance.common.store import ArtifactStore
    from iree_conformance.engine.worker.executor import Executor
    from iree_conformance.model.jobs import CaseResult, failed_result

    job_start = [0]
    current_fault: list = [None]  # the job's fault, for the "compiler" point below

    def announce(key: str) -> None:
        _write_frame(channel_out, ("compile_key", key))
        fault = current_fault[0]
        if fault and fault[0] == "compiler":  # inside the compile, as a compiler bug
            _inject(fault[1])

    def read_diagnostics() -> str:
        sys.stderr.flush()
        with open(log_path, "rb") as f:
            f.seek(job_start[0])
            return f.read().decode("utf-8", errors="replace")

    executor = Executor(
        ArtifactStore(Path(store_dir) if store_dir != "-" else None),
        read_diagnostics,
        announce=announce,
        tell=lambda message: _write_frame(channel_out, message),
    )
    _write_frame(channel_out, ("ready", os.getpid()))
    while True:
        message = _read_frame(channel_in)
        if message is None or message[0] == "exit":
            return 0
        _, job = message
        job_start[0] = os.path.getsize(log_path)
        fault = job.fault
        current_fault[0] = fault

        reached = ["prepare"]

        def stage(name: str, fault=fault, reached=reached) -> None:
            reached[0] = name
            _write_frame(channel_out, ("stage", name))
            if fault and fault[0] == name:
                _inject(fault[1])

        try:
            result = executor.execute(job, stage)
        except Exception as e:  # noqa: BLE001 - a Python error is the case's error, not a native crash
            lines = traceback.format_exc().strip().splitlines()
            result = failed_result(job, "error", reached[0], [lines[-1], *lines[-6:-1]])
            machine = machine_faults.of_exception(e)
            if machine is not None and isinstance(result, CaseResult):
                # the machine's fault (memory, space): the harness's error, not a verdict
                result.info["harness_error"] = machine_faults.MACHINE
                result.diagnostics.insert(0, machine_faults.message(machine, reached[0]))
            elif is_iree_import_failure(e) and isinstance(result, CaseResult):
                # this environment cannot load IREE: the harness's error, not a verdict
                result.info["harness_error"] = HARNESS_ENVIRONMENT
                result.diagnostics.insert(
                    1, f"the harness's environment ({sys.prefix}) cannot import IREE"
                )
        _write_frame(channel_out, ("result", result))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
