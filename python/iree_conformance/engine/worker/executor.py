"""The work done inside a worker process: prepare, import, compile, load, run.

One Executor lives in each worker and answers its jobs. It puts together the pieces
that keep state for the worker's life: the compiler (a Session per flag set,
``worker_compiler``), the runtime (a Config per device, ``worker_runtime``), the
store's entries and keys (``worker_store``) and the batches (``worker_batches``). It
consults the store first: a warm case only computes its key and loads bytes, and a
case that an earlier batch compiled runs in that batch's module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from iree_conformance.common.machine_faults import MACHINE, message
from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.timing import compile_figures, reset_peak_rss
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine.worker.batches import Batches
from iree_conformance.engine.worker.compiler import (
    Compiler,
    compile_statistics,
    compiler_version,
)
from iree_conformance.engine.worker.errors import StageError
from iree_conformance.engine.worker.importer import prepare_and_import, read_source
from iree_conformance.engine.worker.runtime import Runtime, resolve_entry
from iree_conformance.engine.worker.store import (
    BATCH_VERSION,
    PIPELINE_VERSION,
    MemberEntry,
    ModuleCache,
    job_host,
)
from iree_conformance.engine.worker.timed import CheckedRun, time_case
from iree_conformance.model.jobs import BatchJob, BatchResult, CaseJob, CaseResult, Program

__all__ = ["BATCH_VERSION", "PIPELINE_VERSION", "Executor", "StageError", "compiler_version"]


class Executor:
    def __init__(
        self,
        store: ArtifactStore,
        read_diagnostics: Callable[[], str],
        announce: Callable[[str], None] | None = None,
        tell: Callable[[tuple[str, Any]], None] | None = None,
    ):
        self.store = store
        self.read_diagnostics = read_diagnostics
        # Tells the parent the compile key of the compile that starts now: if the compiler
        # kills the worker, the parent records the crash under it (WorkerClient._crashed).
        self.announce = announce
        self.cache = ModuleCache(store)
        self.compiler = Compiler(read_diagnostics, tell)
        self.runtime = Runtime(read_diagnostics)
        self.batches = Batches(
            self.cache, self.compiler, self.runtime, read_source, self._prepare_and_import
        )

    def _prepare_and_import(
        self, program: Program, source: bytes, stage: Callable[[str], None]
    ) -> tuple[bytes, dict[str, Any]]:
        return prepare_and_import(
            program,
            source,
            stage,
            self.compiler.mlir_context,
            self.read_diagnostics,
            self.cache.params.work_dir(),
        )

    # -- the runtime's call, which common/timing.time_iree_call times ----------
    def run(
        self, vm_module, context, entry: str | None, inputs: list[np.ndarray]
    ) -> list[np.ndarray]:
        return self.runtime.run(vm_module, context, entry, inputs)

    # -- one case's module ----------------------------------------------------
    def compile_job(
        self, job: CaseJob, stage: Callable[[str], None], times: dict[str, float]
    ) -> tuple[bytes, dict[str, Any], dict[str, bool]] | MemberEntry:
        """(vmfb, metadata, cache hits), or the batch that compiled this program (the
        member index; not for compile-only, alone or retried jobs). Raises StageError on
        a clean failure, cached or new."""
        t0 = time.perf_counter()
        source = read_source(job.program, stage)
        flags = tuple(job.compile_flags)
        import_key, compile_key = self.cache.keys(job.program, source, flags, job_host(job))
        hits = {"import": False, "compile": False}
        # A retry compiles afresh: a flaky compile must not be answered from the store.
        bypass = job.bypass_store
        cached = None if bypass else self.cache.get("vmfb", compile_key)
        if cached is not None and not self.cache.params.present(cached[0]):
            cached = None  # its parameter file is gone: imported and compiled again
        if cached is not None:
            hits["import"] = hits["compile"] = True
            times["store"] = time.perf_counter() - t0
            return cached[1], cached[0], hits
        failure = None if bypass else self.cache.get("failure", compile_key)
        if failure is not None:
            meta = failure[0]
            times["store"] = time.perf_counter() - t0
            stage(meta["stage"])
            raise StageError(
                meta["stage"],
                "\n".join(meta["lines"]),
                meta["lines"],
                cached=True,
                crashed=meta.get("status") == Status.CRASH,
            )
        if not (bypass or job.alone or job.compile_only):
            member = self.cache.member(compile_key)
            if member is not None:
                times["store"] = time.perf_counter() - t0
                return member
        try:
            t = time.perf_counter()
            mlir, meta = self.cache.imported(
                job.program,
                source,
                import_key,
                lambda: self._prepare_and_import(job.program, source, stage),
                hits,
                bypass,
            )
            if not hits["import"]:
                times["import"] = times.get("import", 0.0) + time.perf_counter() - t
            stage("compile")
            if self.announce is not None:
                self.announce(compile_key)
            t, cpu, reset = time.perf_counter(), time.process_time(), reset_peak_rss()
            vmfb = self.compiler.compile(mlir, flags)
            times["compile"] = time.perf_counter() - t - self.compiler.last_lock_wait_s
            meta = {
                **meta,
                "compile_figures": compile_figures(vmfb, cpu, reset),
                "compile_stats": compile_statistics(vmfb, self.compiler.last_statistics, "case"),
            }
        except StageError as e:
            self.cache.put_failure(compile_key, e)
            raise
        self.cache.put("vmfb", compile_key, vmfb, meta)
        return vmfb, meta, hits

    # -- jobs -----------------------------------------------------------------
    def execute(
        self, job: CaseJob | BatchJob, stage: Callable[[str], None]
    ) -> CaseResult | BatchResult:
        """Runs one job; the result is what the worker sends back."""
        if isinstance(job, BatchJob):
            return self.batches.compile(job, stage)
        if job.batch_key is not None:
            return self._execute_member(job, job.batch_key, job.batch_member or job.case_id, stage)
        result = CaseResult()
        times = result.stage_times
        try:
            compiled = self.compile_job(job, stage, times)
            if isinstance(compiled, MemberEntry):
                # Compiled in a batch before: run there. The parent runs the case alone
                # when that is not a pass (pipeline.run_case), as for a planned batch.
                found = self._execute_member(job, compiled.batch_key, compiled.member_id, stage)
                found.stage_times = {**times, **found.stage_times}
                found.info["cache_hits"] = {"import": True, "compile": True}
                found.info["batch"] = {"size": compiled.size}
                return found
            vmfb, meta, hits = compiled
            result.info = {k: v for k, v in meta.items() if k != "checks"}
            result.info["cache_hits"] = hits
            checks = meta.get("checks")
            if checks is not None:
                result.check_sites = checks["sites"]
            if job.compile_only:
                result.vmfb = vmfb
                result.stage = Stage.COMPILE
                return result
            stage("load")
            t = time.perf_counter()
            vm_module, context = self.runtime.load(
                vmfb,
                job.driver,
                job.device,
                checks["sites"] if checks else None,
                self.cache.params.runtime_parameters(meta),
            )
            times["load"] = time.perf_counter() - t
            self._run_sets(
                job,
                vm_module,
                context,
                job.entry_function,
                stage,
                result,
                (0, len(checks["sites"]) if checks else 0),
            )
        except StageError as e:
            result.status = Status.CRASH if e.crashed else Status.ERROR
            result.stage, result.diagnostics = e.stage, e.lines
            machine = e.machine_fault()
            if machine is not None:
                result.info["harness_error"] = MACHINE
                result.diagnostics = [message(machine, e.stage), *e.lines]
            # Whether this failure was compiled now or read from the store (a warm run).
            result.info.setdefault("cache_hits", {"import": e.cached, "compile": e.cached})
        return result

    def _execute_member(
        self, job: CaseJob, batch_key: str, member_id: str, stage: Callable[[str], None]
    ) -> CaseResult:
        """Runs one case's function in its compiled batch; the result reads as a solo run's."""
        result = CaseResult()
        try:
            stage("load")
            t = time.perf_counter()
            vm_module, context, meta = self.batches.module(batch_key, job.driver, job.device)
            result.stage_times["load"] = time.perf_counter() - t
            member = meta["members"][member_id]
            result.info = dict(member["info"])
            result.check_sites = member["sites"]
            entry = resolve_entry(job.entry_function, member["public_functions"])
            if entry not in member["public_functions"]:
                stage("run")
                raise StageError(
                    "run",
                    f"function '{entry}' not found in the module; it exports {member['public_functions']}",
                )
            sites = (member["site_offset"], member["site_offset"] + len(member["sites"] or []))
            self._run_sets(
                job,
                vm_module,
                context,
                member["prefix"] + entry,
                stage,
                result,
                sites,
                prefix=member["prefix"],
            )
        except StageError as e:
            result.status, result.stage, result.diagnostics = Status.ERROR, e.stage, e.lines
        return result

    def _run_sets(
        self,
        job: CaseJob,
        vm_module,
        context,
        entry: str | None,
        stage: Callable[[str], None],
        result: CaseResult,
        sites: tuple[int, int],
        prefix: str = "",
    ) -> None:
        """Runs the entry function on every input set; keeps the check records of the
        sites in [low, high), numbered from low. ``prefix``: the case's functions' prefix
        in a batch module."""
        stage("run")
        peak_reset = bool(job.timing_runs) and reset_peak_rss()
        t = time.perf_counter()
        low, high = sites
        result.outputs, records = [], []
        checked_s: float | None = None
        for inputs in job.input_sets or ([],):
            call_start = time.perf_counter()
            result.outputs.append(self.runtime.run(vm_module, context, entry, inputs))
            if checked_s is None:
                checked_s = time.perf_counter() - call_start
            if context.check_recorder is not None:
                records.append(
                    [
                        (site - low, values)
                        for site, values in context.check_recorder.take()
                        if low <= site < high
                    ]
                )
        if result.check_sites is not None:
            result.check_records = records
        result.stage_times["run"] = time.perf_counter() - t
        result.stage = Stage.RUN
        if job.timing_runs:
            checked = CheckedRun(checked_s or 0.0, peak_reset)
            result.timing = time_case(
                self, self.cache, job, (vm_module, context, entry, prefix), result, checked
            )
