"""Batches inside a worker: import the members, merge them, compile once, and keep the
loaded batch modules that the members' runs use (batching.py plans; module_merge.py
merges)."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any

from iree_conformance.common.vocabulary import Status
from iree_conformance.engine.module_merge import MemberInfo, MergeMember, culprits_of, merge_modules
from iree_conformance.engine.worker.compiler import Compiler, compile_statistics
from iree_conformance.engine.worker.errors import StageError
from iree_conformance.engine.worker.runtime import Runtime
from iree_conformance.engine.worker.store import ModuleCache, job_host
from iree_conformance.model.jobs import LARGE_MODEL_OPTION, BatchJob, BatchResult, Program

# Loaded batch modules a worker keeps. More than two: a re-selection's batch takes its
# members from the modules of earlier batches (the member index), in turns.
_BATCHES_KEPT = 8

ImportFn = Callable[[Program, bytes, Callable[[str], None]], tuple[bytes, dict[str, Any]]]
SourceFn = Callable[[Program, Callable[[str], None]], bytes]


def _member_meta(info: MemberInfo, import_meta: dict[str, Any]) -> dict[str, Any]:
    """What a member's run needs from the batch: its names, its check sites, its import info."""
    checks = import_meta.get("checks")
    return {
        "prefix": info.prefix,
        "public_functions": info.public_functions,
        "site_offset": info.site_offset,
        "sites": checks["sites"] if checks else None,
        "info": {k: v for k, v in import_meta.items() if k != "checks"},
    }


def shifted(member: dict[str, Any]) -> list[dict[str, Any]]:
    """A member's check sites under their batch-wide numbers."""
    return [
        {**site, "site": site["site"] + member["site_offset"]} for site in member["sites"] or []
    ]


@dataclasses.dataclass
class _Entry:
    program: Program
    source: bytes
    import_key: str
    compile_key: str


class Batches:
    """Compiles batch jobs and serves the loaded batch modules."""

    def __init__(
        self,
        cache: ModuleCache,
        compiler: Compiler,
        runtime: Runtime,
        read_source: SourceFn,
        do_import: ImportFn,
    ):
        self.cache = cache
        self.compiler = compiler
        self.runtime = runtime
        self.read_source = read_source
        self.do_import = do_import
        self._loaded: dict[str, tuple[bytes, dict[str, Any], Any]] = {}

    def compile(self, job: BatchJob, stage: Callable[[str], None]) -> BatchResult:
        """Imports every member, merges the modules and compiles them once.

        A member whose own import fails is left out (its failure is stored under its own
        compile key, where its solo run finds it); a failure of the merged compile fails
        the batch, and the parent bisects it. A member that an earlier batch compiled
        (the member index) is not compiled again: the result points it to that batch
        (``elsewhere``). The result names the batch's store key and the members placed
        in it. The key is computed from the members' sources before anything is imported,
        so a warm batch reads one file.
        """
        t0 = time.perf_counter()
        flags = tuple(job.compile_flags)
        host = job_host(job)
        result = BatchResult(cache_hits={"import": True, "compile": False})
        times, left_out = result.stage_times, result.left_out
        entries: list[_Entry] = []
        for program in job.members:
            if program.import_options.get(LARGE_MODEL_OPTION):
                # Its weights are a parameter file the batch module would not load.
                left_out[program.case_id] = "a model over 2 GiB runs alone, with its parameters"
                continue
            try:
                source = self.read_source(program, stage)
                import_key, compile_key = self.cache.keys(program, source, flags, host)
            except StageError as e:
                left_out[program.case_id] = "; ".join(e.lines[:1])
                continue
            if not job.bypass_store and self.cache.get("failure", compile_key) is not None:
                left_out[program.case_id] = "its import or compile failed before"
                continue
            entries.append(_Entry(program, source, import_key, compile_key))

        def key_of(kept: list[_Entry]) -> str:
            return self.cache.batch_key(
                flags, host, [(e.program.case_id, e.import_key) for e in kept]
            )

        def cached(key: str) -> BatchResult | None:
            if job.bypass_store:
                return None
            hit = self.cache.get("vmfb", key)
            if hit is not None:
                result.cache_hits["compile"] = True
                times["store"] = time.perf_counter() - t0
                self.remember(key, hit[1], hit[0])
                return dataclasses.replace(result, batch_key=key, placed=list(hit[0]["members"]))
            failure = self.cache.get("failure", key)
            if failure is not None:
                times["store"] = time.perf_counter() - t0
                meta = failure[0]
                return dataclasses.replace(
                    result,
                    status=Status.ERROR,
                    stage=meta["stage"],
                    diagnostics=meta["lines"],
                    culprits=meta.get("culprits", []),
                )
            return None

        if len(entries) >= 2:
            answer = cached(key_of(entries))
            if answer is not None:
                return answer
        if not job.bypass_store:
            # Members an earlier batch of another composition compiled stay where they are.
            fresh = []
            for entry in entries:
                found = self.cache.member(entry.compile_key)
                if found is None:
                    fresh.append(entry)
                else:
                    result.elsewhere[entry.program.case_id] = (
                        found.batch_key,
                        found.member_id,
                        found.size,
                    )
            if result.elsewhere:
                times["store"] = time.perf_counter() - t0
            entries = fresh
        members: list[MergeMember] = []
        kept: list[_Entry] = []
        for entry in entries:
            member_hits = {"import": False}
            t = time.perf_counter()
            try:
                mlir, meta = self.cache.imported(
                    entry.program,
                    entry.source,
                    entry.import_key,
                    functools.partial(self.do_import, entry.program, entry.source, stage),
                    member_hits,
                    job.bypass_store,
                )
            except StageError as e:
                self.cache.put_failure(entry.compile_key, e)
                left_out[entry.program.case_id] = "; ".join(e.lines[:1])
                continue
            finally:
                if not member_hits["import"]:
                    times["import"] = times.get("import", 0.0) + time.perf_counter() - t
            result.cache_hits["import"] = result.cache_hits["import"] and member_hits["import"]
            members.append(MergeMember(entry.program.case_id, mlir, meta))
            kept.append(entry)
        if len(members) < 2:
            left_out.update({m.case_id: "alone after the others were left out" for m in members})
            return result
        batch_key = key_of(kept)
        if len(kept) < len(entries) or result.elsewhere:
            answer = cached(batch_key)
            if answer is not None:
                return answer
        try:
            stage("import")
            merged, placed, excluded = merge_modules(members, self.compiler.fresh_context())
            left_out.update(excluded)
            stage("compile")
            t = time.perf_counter()
            vmfb = self.compiler.compile(merged, flags)
            times["compile"] = time.perf_counter() - t - self.compiler.last_lock_wait_s
        except StageError as e:
            # The error lines name the members they are about: those run alone, and the
            # parent compiles the others again without bisecting.
            culprits = sorted(members[i].case_id for i in culprits_of(str(e)) if i < len(members))
            self.cache.put_failure(batch_key, e, culprits=culprits)
            return dataclasses.replace(
                result, status=Status.ERROR, stage=e.stage, diagnostics=e.lines, culprits=culprits
            )
        by_id = {m.case_id: m for m in members}
        # IREE's statistics are the module's: a member's are its batch's (scope "batch").
        stats = compile_statistics(vmfb, self.compiler.last_statistics, "batch", len(placed))
        meta = {
            "members": {
                case_id: _member_meta(info, {**by_id[case_id].meta, "compile_stats": stats})
                for case_id, info in placed.items()
            }
        }
        self.cache.put("vmfb", batch_key, vmfb, meta)
        compile_keys = {e.program.case_id: e.compile_key for e in kept}
        self.cache.put_members(batch_key, {case_id: compile_keys[case_id] for case_id in placed})
        self.remember(batch_key, vmfb, meta)
        return dataclasses.replace(result, batch_key=batch_key, placed=list(placed))

    def remember(self, key: str, vmfb: bytes, meta: dict[str, Any]) -> None:
        if key in self._loaded:
            self._loaded[key] = self._loaded.pop(key)  # most recently used last
            return
        self._loaded[key] = (vmfb, meta, None)
        while len(self._loaded) > _BATCHES_KEPT:
            self._loaded.pop(next(iter(self._loaded)))

    def module(self, key: str, driver: str, device: str | None):
        """(vm_module, context, meta) of a compiled batch, loaded once per worker."""
        entry = self._loaded.get(key)
        if entry is None:
            cached = self.cache.get("vmfb", key)
            if cached is None:
                raise StageError(
                    "load",
                    "the batch's module is no longer available (the worker was replaced and the store is off)",
                )
            self.remember(key, cached[1], cached[0])
        else:
            self.remember(key, *entry[:2])
        vmfb, meta, loaded = self._loaded[key]
        if loaded is None or loaded[0] != (driver, device):
            sites = [site for member in meta["members"].values() for site in shifted(member)]
            vm_module, context = self.runtime.load(vmfb, driver, device, sites or None)
            loaded = ((driver, device), vm_module, context)
            self._loaded[key] = (vmfb, meta, loaded)
        return loaded[1], loaded[2], meta
