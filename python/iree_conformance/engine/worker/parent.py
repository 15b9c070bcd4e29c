"""Parent side of the persistent worker process that imports, compiles and runs cases.

A compiler crash kills only the worker: the case becomes a ``crash`` Outcome at the
stage it had reached, the worker is replaced, and the suite goes on. A stage that runs
past its limit becomes a ``timeout`` Outcome in the same way.

A limit counts the worker's CPU seconds in the stage where the OS tells them (Linux
``/proc``), so that a slow stage on a loaded machine, which gets a share of a core, is
not a timeout that an idle machine would pass: a verdict is never made by the load. A
stage that spends no CPU (a hang) times out after ``HANG_FACTOR`` times its limit in
wall seconds; elsewhere, and past that bound, the limit is wall seconds.

The worker's temporary files (IREE's statistics, a large import's folder) go to a
scratch folder of its client (``TMPDIR``), emptied when a worker is killed and removed
on ``close``: a worker killed by a timeout or Ctrl-C leaves nothing in the temp folder.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import overload

from iree_conformance.common import machine_faults, quiet_lock
from iree_conformance.common.diagnostics import first_meaningful_lines
from iree_conformance.common.platform_info import describe_exit, is_program_fault
from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine.worker.main import _read_frame, _write_frame
from iree_conformance.model.jobs import BatchJob, BatchResult, CaseJob, CaseResult, failed_result
from iree_conformance.model.targets import DEFAULT_STAGE_TIMEOUTS

START_TIMEOUT = 120.0
HANG_FACTOR = 4.0


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of a process and its threads, or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _close_pipes(proc: subprocess.Popen) -> None:
    """Closes a worker's stdin and stdout pipes; a pipe already broken is closed anyway."""
    for stream in (proc.stdin, proc.stdout):
        if stream is None:  # both are pipes: never None
            continue
        with contextlib.suppress(OSError):
            stream.close()


class WorkerError(RuntimeError):
    pass


class WorkerClient:
    """One worker process, started on first use and restarted after a crash or timeout."""

    def __init__(
        self,
        store_dir: Path | None,
        stage_timeouts: dict[str, float] | None = None,
        max_jobs: int = 400,
    ):
        self.store_dir = store_dir
        # Precedence per stage: --stage-timeout (explicit), then the job's target
        # (targets.toml stage_timeouts), then these defaults.
        self.explicit_timeouts = dict(stage_timeouts or {})
        self.stage_timeouts = {**DEFAULT_STAGE_TIMEOUTS, **self.explicit_timeouts}
        self.max_jobs = max_jobs
        self._proc: subprocess.Popen | None = None
        self._messages: queue.Queue = queue.Queue()
        self._jobs = 0
        fd, self.log_path = tempfile.mkstemp(prefix="iree-conformance-worker-", suffix=".log")
        self._log_file = os.fdopen(fd, "ab")
        self._scratch = tempfile.mkdtemp(prefix="iree-conformance-worker-")

    # -- process management ---------------------------------------------------
    def _start(self) -> None:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
        env["TMPDIR"] = self._scratch  # the worker's temporary files, swept here
        lock = quiet_lock.lock_path()  # the machine's quiet lock, not one in the scratch
        if lock is not None:
            env[quiet_lock.LOCK_ENV] = str(lock)
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "iree_conformance.engine.worker.main",
                self.log_path,
                str(self.store_dir or "-"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,  # start-up errors too land in the log
            env=env,
        )
        self._messages = queue.Queue()
        threading.Thread(target=self._pump, args=(self._proc, self._messages), daemon=True).start()
        self._jobs = 0
        try:
            kind, *_ = self._messages.get(timeout=START_TIMEOUT) or ("eof",)
        except queue.Empty:
            kind = "timeout"
        if kind != "ready":
            self.stop()
            raise WorkerError(
                f"the worker process did not start ({kind}); its log: {self._log_tail()}"
            )

    @staticmethod
    def _pump(proc: subprocess.Popen, messages: queue.Queue) -> None:
        try:
            while True:
                message = _read_frame(proc.stdout)
                messages.put(message)
                if message is None:
                    return
        except Exception:  # noqa: BLE001 - a torn frame from a dying worker
            messages.put(None)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                try:
                    _write_frame(proc.stdin, ("exit",))
                    proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()
                    proc.wait()
                    self._sweep()
        finally:
            _close_pipes(proc)

    def _sweep(self) -> None:
        """Empties the scratch folder of a worker that is gone (its own never ran)."""
        with os.scandir(self._scratch) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            self._sweep()
            _close_pipes(proc)

    def close(self, wait: bool = True) -> None:
        """Stops the worker (``wait`` False: kills it at once, as after Ctrl-C) and
        removes its log and scratch folder."""
        if wait:
            self.stop()
        else:
            self._kill()
        shutil.rmtree(self._scratch, ignore_errors=True)
        self._log_file.close()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass

    def _log_tail(self, offset: int = 0) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    # -- jobs -----------------------------------------------------------------
    @overload
    def execute(self, job: CaseJob) -> CaseResult: ...
    @overload
    def execute(self, job: BatchJob) -> BatchResult: ...

    def execute(self, job: CaseJob | BatchJob) -> CaseResult | BatchResult:
        """Runs a job; always returns its result (status pass/error/crash/timeout):
        a CaseResult for a CaseJob, a BatchResult for a BatchJob."""
        if self._proc is None or self._proc.poll() is not None or self._jobs >= self.max_jobs:
            self.stop()
            self._start()
        assert self._proc is not None
        self._jobs += 1
        log_offset = os.path.getsize(self.log_path)
        stage, stage_start, stage_cpu = Stage.PREPARE, time.monotonic(), self._cpu()
        extra = 0.0  # seconds granted past the limit to a stage starved of CPU
        times: dict[str, float] = {}
        compile_key: str | None = None  # announced as a case's compile starts
        try:
            _write_frame(self._proc.stdin, ("job", job))
        except OSError:
            return self._crashed(job, stage, times, log_offset)
        while True:
            limit = self.limit(job, stage)
            remaining = limit + extra - (time.monotonic() - stage_start)
            try:
                message = self._messages.get(timeout=max(remaining, 0.0))
            except queue.Empty:
                more = self._starved_for(limit, stage_start, stage_cpu)
                if more > 0:
                    extra += more
                    continue
                self._kill()
                times[stage] = time.monotonic() - stage_start
                return failed_result(
                    job,
                    "timeout",
                    stage,
                    [f"{stage} ran past its {limit:g} s limit; the worker was replaced"],
                    times,
                )
            if message is None:
                return self._crashed(job, stage, times, log_offset, compile_key)
            if message[0] == "compile_key":
                compile_key = message[1]
            elif message[0] == "waiting":  # for the quiet lock: told, never silent
                print(f"iree-conformance: {message[1]}", file=sys.stderr, flush=True)
            elif message[0] == "waited":  # not counted against the stage's limit
                extra += float(message[1])
            elif message[0] == "stage":
                now = time.monotonic()
                times.setdefault(stage, now - stage_start)
                stage, stage_start, stage_cpu, extra = message[1], now, self._cpu(), 0.0
            elif message[0] == "result":
                return message[1]

    def _cpu(self) -> float | None:
        return process_cpu(self._proc.pid) if self._proc is not None else None

    def _starved_for(self, limit: float, stage_start: float, stage_cpu: float | None) -> float:
        """Seconds more to wait for a stage past its wall limit: while the worker has
        spent less than the limit in CPU seconds (the machine is busy, the stage is not
        stuck) and the hang bound is not reached; 0 to time it out now."""
        now_cpu = self._cpu()
        if stage_cpu is None or now_cpu is None:
            return 0.0
        used, elapsed = now_cpu - stage_cpu, time.monotonic() - stage_start
        hang_bound = limit * HANG_FACTOR
        if used >= limit or elapsed >= hang_bound:
            return 0.0
        return max(min(limit - used, hang_bound - elapsed), 0.05)

    def limit(self, job: CaseJob | BatchJob, stage: str) -> float:
        """A stage's time limit for this job: explicit, else its target's, else the default."""
        if stage in job.stage_timeouts and stage not in self.explicit_timeouts:
            return job.stage_timeouts[stage]
        return self.stage_timeouts.get(stage, 300.0)

    def _crashed(
        self,
        job: CaseJob | BatchJob,
        stage: str,
        times: dict[str, float],
        log_offset: int,
        compile_key: str | None = None,
    ) -> CaseResult | BatchResult:
        code = None
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # a torn frame from a live worker
                pass
            self._kill()
        tail = self._log_tail(log_offset)
        lines = first_meaningful_lines(tail)
        diagnostics = [
            f"the worker process died during {stage} ({describe_exit(code) if code is not None else 'no exit status'})",
            *lines,
        ]
        machine = machine_faults.of_exit(code) or machine_faults.reason(tail)
        if machine is not None:  # not the program's: nothing recorded, the next run tries again
            result = failed_result(
                job, "error", stage, [machine_faults.message(machine, stage), *diagnostics], times
            )
            if isinstance(result, CaseResult):
                result.info["harness_error"] = machine_faults.MACHINE
            return result
        if compile_key and stage == Stage.COMPILE and code is not None and is_program_fault(code):
            self._record_crash(compile_key, diagnostics)
        return failed_result(job, "crash", stage, diagnostics, times)

    def _record_crash(self, compile_key: str, diagnostics: list[str]) -> None:
        """A compiler crash, recorded in the store as a failure of that compile key: the
        same program, flags, compiler and host crash again, so a warm run reads it instead
        of killing a worker (a retry, which bypasses the store, compiles afresh)."""
        if self.store_dir is None:
            return
        try:
            ArtifactStore(self.store_dir).put(
                "failure",
                compile_key,
                b"",
                {"stage": Stage.COMPILE, "lines": diagnostics, "status": Status.CRASH},
            )
        except OSError as e:
            print(f"iree-conformance: crash not cached ({compile_key[:12]}): {e}", file=sys.stderr)
