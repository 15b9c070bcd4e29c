"""The work done inside a worker process: prepare, import, compile, load, run.

One Executor lives in each worker. It keeps one compiler Session per flag set and one
runtime Config per device, so that nothing is set up twice, and consults the artifact
store first: a warm case only computes its key and loads bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .diagnostics import first_meaningful_lines
from .jobs import BatchJob, BatchResult, CaseJob, CaseResult, Program
from .module_merge import MemberInfo, MergeMember, culprits_of, merge_modules
from .platform_info import cpu_fingerprint, host_arch
from .store import ArtifactStore, make_key


class StageError(Exception):
    """A clean failure of one stage; the message holds the diagnostics."""

    def __init__(self, stage: str, message: str, lines: list[str] | None = None):
        super().__init__(message)
        self.stage = stage
        self.lines = lines or first_meaningful_lines(message)


_VERSION_LINE = re.compile(r"""^VERSION\s*=\s*(['"])([^'"]*)\1\s*$""", re.MULTILINE)


@functools.lru_cache(maxsize=1)
def compiler_version() -> str:
    """``iree.compiler.version.VERSION``, read from its file without importing
    ``iree.compiler``: the package's ``__init__`` loads the MLIR libraries (about
    0.5 s and 60 MB per worker), which a warm case never needs."""
    try:
        spec = importlib.util.find_spec("iree")
        for base in (spec.submodule_search_locations or []) if spec else []:
            path = Path(base) / "compiler" / "version.py"
            if path.is_file():
                match = _VERSION_LINE.search(path.read_text(encoding="utf-8"))
                if match:
                    return match.group(2)
    except (ImportError, OSError, ValueError):
        pass
    import iree.compiler.version as v

    return v.VERSION


# Part of every store key: bump it when prepare, import or the check rewrite change what
# they produce, so that no cached module or failure from before the change is reused.
PIPELINE_VERSION = "1"


@functools.lru_cache(maxsize=1)
def _onnx_version() -> str:
    """The onnx package's version (its checker and version converter shape the import),
    read without importing onnx, which a warm case never needs."""
    import importlib.metadata

    try:
        return importlib.metadata.version("onnx")
    except importlib.metadata.PackageNotFoundError:
        return ""


# Part of every batch key: bump it when merging changes what it produces.
BATCH_VERSION = "1"
_BATCHES_KEPT = 2  # loaded batch modules a worker keeps (the current one and the last)


def _entry_functions(vm_module) -> list[str]:
    """Exported functions, without internal (``__``) ones and ``$async`` variants."""
    return [
        n for n in vm_module.function_names if not n.startswith("__") and not n.endswith("$async")
    ]


def _resolve_entry(entry: str | None, names: list[str]) -> str:
    """The function a case runs: its own, else ``main``, else the module's only one."""
    if entry is None:
        entry = "main" if "main" in names or len(names) != 1 else names[0]
    return entry


def _host(job: CaseJob | BatchJob) -> str:
    return cpu_fingerprint() if job.host_specific else host_arch()


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


def _shifted(member: dict[str, Any]) -> list[dict[str, Any]]:
    """A member's check sites under their batch-wide numbers."""
    return [
        {**site, "site": site["site"] + member["site_offset"]} for site in member["sites"] or []
    ]


class Executor:
    def __init__(self, store: ArtifactStore, read_diagnostics: Callable[[], str]):
        self.store = store
        self.read_diagnostics = read_diagnostics
        self._sessions: dict[tuple[str, ...], Any] = {}
        self._configs: dict[tuple[str, str], Any] = {}
        self._context = None
        self._merge_session = None
        self._batches: dict[str, tuple[bytes, dict[str, Any], Any]] = {}

    # -- compiler -------------------------------------------------------------
    def _session(self, flags: tuple[str, ...]):
        from iree.compiler.api import Session

        session = self._sessions.get(flags)
        if session is None:
            session = Session()
            try:
                session.set_flags(*flags)
            except ValueError as e:
                raise StageError("compile", f"bad compile flags: {e}") from None
            self._sessions[flags] = session
        return session

    def _mlir_context(self):
        if self._context is None:
            self._context = self._session(("--iree-input-type=auto",)).context
        return self._context

    def _compile(self, mlir: bytes, flags: tuple[str, ...]) -> bytes:
        from iree.compiler.api import Output, Source

        session = self._session(flags)
        inv = session.invocation()
        try:
            inv.enable_console_diagnostics()
            source = Source.wrap_buffer(session, mlir)
            if not inv.parse_source(source):
                raise StageError(
                    "import", self.read_diagnostics() or "the compiler could not parse the module"
                )
            if not inv.execute():
                raise StageError("compile", self.read_diagnostics() or "compilation failed")
            out = Output.open_membuffer()
            inv.output_vm_bytecode(out)
            return bytes(out.map_memory())
        finally:
            inv.close()

    # -- import ---------------------------------------------------------------
    def _prepare_and_import(
        self, program: Program, source: bytes, stage: Callable[[str], None]
    ) -> tuple[bytes, dict[str, Any]]:
        kind = program.kind
        meta: dict[str, Any] = {}
        if kind == "onnx":
            from .onnx import prepare
            from .onnx.static_shapes import STATIC_OPTION, fix_input_shapes

            stage("prepare")
            # External data files are named relative to the model's folder.
            base = Path(program.source_path).parent if program.source_path else None
            try:
                prepared = prepare.prepare_model(source, base_dir=base)
                static = program.import_options.get(STATIC_OPTION)
                if static:  # the program at the case's chosen shapes (onnx.static_shapes)
                    prepared.model = fix_input_shapes(prepared.model, static)
            except Exception as e:  # noqa: BLE001 - every prepare failure is reported
                raise StageError("prepare", f"{type(e).__name__}: {e}") from None
            meta["opset_from"], meta["opset_to"] = prepared.original_opset, prepared.opset
            stage("import")
            try:
                text = prepare.import_to_mlir(prepared.model)
            except Exception as e:  # noqa: BLE001
                raise StageError("import", f"{e}\n{self.read_diagnostics()}") from None
            return text.encode(), meta
        if kind == "mlir":
            stage("prepare")
            stage("import")
            if program.import_options.get("rewrite_checks"):
                from .stablehlo_checks import CheckRewriteError, instrument_checks

                try:
                    name = Path(program.source_path).name if program.source_path else "-"
                    text, checks = instrument_checks(
                        source.decode("utf-8", errors="replace"), self._mlir_context(), name
                    )
                except CheckRewriteError as e:
                    raise StageError("import", str(e)) from None
                meta["checks"] = checks
                return text.encode(), meta
            return source, meta
        raise StageError("prepare", f"unknown source kind {kind!r}")

    def _source(self, program: Program, stage: Callable[[str], None]) -> bytes:
        if program.source_bytes is not None:
            return program.source_bytes
        try:
            return Path(program.source_path or "").read_bytes()
        except OSError as e:
            stage("prepare")
            raise StageError(
                "prepare", f"cannot read {program.source_path}: {e.strerror or e}"
            ) from None

    def _keys(
        self, program: Program, source: bytes, flags: tuple[str, ...], host: str
    ) -> tuple[str, str]:
        """(import key, compile key) of one program under these flags on this host."""
        import_opts = json.dumps(dict(program.import_options), sort_keys=True)
        importer = _onnx_version() if program.kind == "onnx" else ""
        import_key = make_key(
            "import",
            PIPELINE_VERSION,
            hashlib.sha256(source).digest(),
            program.kind,
            import_opts,
            importer,
            compiler_version(),
        )
        # Keyed by flags and host, not by target name: targets that share flags (llvm-cpu,
        # llvm-cpu-sync) share modules; machine code never crosses architectures, and a
        # host-specific target's modules never cross CPUs.
        return import_key, make_key("compile", import_key, json.dumps(flags), host)

    def _imported(
        self,
        program: Program,
        source: bytes,
        import_key: str,
        stage: Callable[[str], None],
        times: dict[str, float],
        hits: dict[str, bool],
        bypass: bool,
    ) -> tuple[bytes, dict[str, Any]]:
        imported = None if bypass else self.store.get("mlir", import_key)
        if imported is not None:
            hits["import"] = True
            meta, mlir = imported
            return mlir, meta
        t = time.perf_counter()
        mlir, meta = self._prepare_and_import(program, source, stage)
        times["import"] = times.get("import", 0.0) + time.perf_counter() - t
        self._store_put("mlir", import_key, mlir, meta)
        return mlir, meta

    def compile_job(
        self, job: CaseJob, stage: Callable[[str], None], times: dict[str, float]
    ) -> tuple[bytes, dict[str, Any], dict[str, bool]]:
        """Returns (vmfb, metadata, cache hits); raises StageError on a clean failure."""
        t0 = time.perf_counter()
        source = self._source(job.program, stage)
        flags = tuple(job.compile_flags)
        import_key, compile_key = self._keys(job.program, source, flags, _host(job))
        hits = {"import": False, "compile": False}
        # A retry compiles afresh: a flaky compile must not be answered from the store.
        bypass = job.bypass_store
        cached = None if bypass else self.store.get("vmfb", compile_key)
        if cached is not None:
            hits["import"] = hits["compile"] = True
            times["store"] = time.perf_counter() - t0
            return cached[1], cached[0], hits
        failure = None if bypass else self.store.get("failure", compile_key)
        if failure is not None:
            meta = failure[0]
            times["store"] = time.perf_counter() - t0
            stage(meta["stage"])
            raise StageError(meta["stage"], "\n".join(meta["lines"]), meta["lines"])
        try:
            mlir, meta = self._imported(job.program, source, import_key, stage, times, hits, bypass)
            stage("compile")
            t = time.perf_counter()
            vmfb = self._compile(mlir, flags)
            times["compile"] = time.perf_counter() - t
        except StageError as e:
            self._store_put("failure", compile_key, b"", {"stage": e.stage, "lines": e.lines})
            raise
        self._store_put("vmfb", compile_key, vmfb, meta)
        return vmfb, meta, hits

    # -- batches (batching.py) ------------------------------------------------
    def compile_batch(self, job: BatchJob, stage: Callable[[str], None]) -> BatchResult:
        """Imports every member, merges the modules and compiles them once.

        A member whose own import fails is left out (its failure is stored under its own
        compile key, where its solo run finds it); a failure of the merged compile fails
        the batch, and the parent bisects it. The result names the batch's store key and
        the members placed in it. The key is computed from the members' sources before
        anything is imported, so a warm batch reads one file.
        """
        t0 = time.perf_counter()
        flags = tuple(job.compile_flags)
        host = _host(job)
        result = BatchResult(cache_hits={"import": True, "compile": False})
        times, left_out = result.stage_times, result.left_out
        entries: list[tuple[Program, bytes, str, str]] = []
        for program in job.members:
            try:
                source = self._source(program, stage)
                import_key, compile_key = self._keys(program, source, flags, host)
            except StageError as e:
                left_out[program.case_id] = "; ".join(e.lines[:1])
                continue
            if not job.bypass_store and self.store.get("failure", compile_key) is not None:
                left_out[program.case_id] = "its import or compile failed before"
                continue
            entries.append((program, source, import_key, compile_key))

        def key_of(kept: list[tuple[Program, bytes, str, str]]) -> str:
            parts = [
                part for program, _, import_key, _ in kept for part in (program.case_id, import_key)
            ]
            return make_key(
                "batch",
                PIPELINE_VERSION,
                BATCH_VERSION,
                compiler_version(),
                json.dumps(flags),
                host,
                *parts,
            )

        def cached(key: str) -> BatchResult | None:
            if job.bypass_store:
                return None
            hit = self.store.get("vmfb", key)
            if hit is not None:
                result.cache_hits["compile"] = True
                times["store"] = time.perf_counter() - t0
                self._remember_batch(key, hit[1], hit[0])
                return dataclasses.replace(result, batch_key=key, placed=list(hit[0]["members"]))
            failure = self.store.get("failure", key)
            if failure is not None:
                times["store"] = time.perf_counter() - t0
                meta = failure[0]
                return dataclasses.replace(
                    result,
                    status="error",
                    stage=meta["stage"],
                    diagnostics=meta["lines"],
                    culprits=meta.get("culprits", []),
                )
            return None

        if len(entries) >= 2:
            answer = cached(key_of(entries))
            if answer is not None:
                return answer
        members: list[MergeMember] = []
        kept = []
        for entry in entries:
            program, source, import_key, compile_key = entry
            member_hits = {"import": False}
            try:
                mlir, meta = self._imported(
                    program, source, import_key, stage, times, member_hits, job.bypass_store
                )
            except StageError as e:
                self._store_put("failure", compile_key, b"", {"stage": e.stage, "lines": e.lines})
                left_out[program.case_id] = "; ".join(e.lines[:1])
                continue
            result.cache_hits["import"] = result.cache_hits["import"] and member_hits["import"]
            members.append(MergeMember(program.case_id, mlir, meta))
            kept.append(entry)
        if len(members) < 2:
            left_out.update({m.case_id: "alone after the others were left out" for m in members})
            return result
        batch_key = key_of(kept)
        if len(kept) < len(entries):
            answer = cached(batch_key)
            if answer is not None:
                return answer
        try:
            stage("import")
            merged, placed, excluded = merge_modules(members, self._fresh_context())
            left_out.update(excluded)
            stage("compile")
            t = time.perf_counter()
            vmfb = self._compile(merged, flags)
            times["compile"] = time.perf_counter() - t
        except StageError as e:
            # The error lines name the members they are about: those run alone, and the
            # parent compiles the others again without bisecting.
            culprits = sorted(members[i].case_id for i in culprits_of(str(e)) if i < len(members))
            self._store_put(
                "failure",
                batch_key,
                b"",
                {"stage": e.stage, "lines": e.lines, "culprits": culprits},
            )
            return dataclasses.replace(
                result, status="error", stage=e.stage, diagnostics=e.lines, culprits=culprits
            )
        by_id = {m.case_id: m for m in members}
        meta = {
            "members": {
                case_id: _member_meta(info, by_id[case_id].meta) for case_id, info in placed.items()
            }
        }
        self._store_put("vmfb", batch_key, vmfb, meta)
        self._remember_batch(batch_key, vmfb, meta)
        return dataclasses.replace(result, batch_key=batch_key, placed=list(placed))

    def _fresh_context(self):
        """A new MLIR context for one merge, so that the members' constants do not pile
        up in a context that lives as long as the worker."""
        from iree.compiler.api import Session

        session = Session()
        self._merge_session = session  # the context lives as long as its session
        return session.context

    def _remember_batch(self, key: str, vmfb: bytes, meta: dict[str, Any]) -> None:
        self._batches[key] = (vmfb, meta, None)
        while len(self._batches) > _BATCHES_KEPT:
            self._batches.pop(next(iter(self._batches)))

    def _batch_module(self, key: str, driver: str, device: str | None):
        """(vm_module, context, meta) of a compiled batch, loaded once per worker."""
        entry = self._batches.get(key)
        if entry is None:
            cached = self.store.get("vmfb", key)
            if cached is None:
                raise StageError(
                    "load",
                    "the batch's module is no longer available (the worker was replaced and the store is off)",
                )
            self._remember_batch(key, cached[1], cached[0])
            entry = self._batches[key]
        vmfb, meta, loaded = entry
        if loaded is None or loaded[0] != (driver, device):
            sites = [site for member in meta["members"].values() for site in _shifted(member)]
            vm_module, context = self.load(vmfb, driver, device, sites or None)
            loaded = ((driver, device), vm_module, context)
            self._batches[key] = (vmfb, meta, loaded)
        return loaded[1], loaded[2], meta

    def _store_put(self, kind: str, key: str, payload: bytes, meta: dict[str, Any]) -> None:
        """The store is a cache: a full disk or a locked file costs speed, not the case."""
        try:
            self.store.put(kind, key, payload, meta)
        except OSError as e:
            print(f"iree-conformance: not cached ({kind} {key[:12]}): {e}", file=sys.stderr)

    # -- runtime --------------------------------------------------------------
    def _config(self, driver: str, device: str | None):
        import iree.runtime as rt

        key = (driver, device or "")
        config = self._configs.get(key)
        if config is None:
            try:
                config = rt.Config(device=rt.get_device(device)) if device else rt.Config(driver)
            except Exception as e:  # noqa: BLE001
                raise StageError(
                    "load", f"cannot open HAL driver/device {device or driver}: {e}"
                ) from None
            self._configs[key] = config
        return config

    def load(
        self,
        vmfb: bytes,
        driver: str,
        device: str | None,
        check_sites: list[dict[str, Any]] | None = None,
    ):
        """The module in a fresh context; with check_sites, beside a check recorder
        (``context.check_recorder``) that implements its check imports."""
        import iree.runtime as rt

        config = self._config(driver, device)
        try:
            vm_module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
            recorder = None
            modules = [vm_module]
            if check_sites is not None:
                from .check_module import CheckRecorder

                recorder = CheckRecorder(check_sites, config.device)
                modules.insert(0, recorder.module)
            context = rt.SystemContext(vm_modules=modules, config=config)
            context.check_recorder = recorder
        except Exception as e:  # noqa: BLE001
            raise StageError("load", f"{type(e).__name__}: {e}") from None
        return vm_module, context

    def run(
        self, vm_module, context, entry: str | None, inputs: list[np.ndarray]
    ) -> list[np.ndarray]:
        names = _entry_functions(vm_module)
        entry = _resolve_entry(entry, names)
        if entry not in names:
            raise StageError(
                "run", f"function '{entry}' not found in the module; it exports {names}"
            )
        function = context.modules[vm_module.name][entry]
        try:
            result = function(*inputs)
        except Exception as e:  # noqa: BLE001
            raise StageError("run", f"{type(e).__name__}: {e}\n{self.read_diagnostics()}") from None
        if result is None:
            return []
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        try:
            return [np.array(r.to_host() if hasattr(r, "to_host") else r) for r in results]
        except Exception as e:  # noqa: BLE001
            raise StageError(
                "run", f"cannot read results back to the host: {type(e).__name__}: {e}"
            ) from None

    def execute(
        self, job: CaseJob | BatchJob, stage: Callable[[str], None]
    ) -> CaseResult | BatchResult:
        """Runs one job; the result is what the worker sends back."""
        if isinstance(job, BatchJob):
            return self.compile_batch(job, stage)
        if job.batch_key is not None:
            return self._execute_member(job, stage)
        result = CaseResult()
        times = result.stage_times
        try:
            vmfb, meta, hits = self.compile_job(job, stage, times)
            result.info = {k: v for k, v in meta.items() if k != "checks"}
            result.info["cache_hits"] = hits
            checks = meta.get("checks")
            if checks is not None:
                result.check_sites = checks["sites"]
            if job.compile_only:
                result.vmfb = vmfb
                result.stage = "compile"
                return result
            stage("load")
            t = time.perf_counter()
            vm_module, context = self.load(
                vmfb, job.driver, job.device, checks["sites"] if checks else None
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
            result.status, result.stage, result.diagnostics = "error", e.stage, e.lines
        return result

    def _execute_member(self, job: CaseJob, stage: Callable[[str], None]) -> CaseResult:
        """Runs one case's function in its compiled batch; the result reads as a solo run's."""
        assert job.batch_key is not None
        result = CaseResult()
        try:
            stage("load")
            t = time.perf_counter()
            vm_module, context, meta = self._batch_module(job.batch_key, job.driver, job.device)
            result.stage_times["load"] = time.perf_counter() - t
            member = meta["members"][job.case_id]
            result.info = dict(member["info"])
            result.check_sites = member["sites"]
            entry = _resolve_entry(job.entry_function, member["public_functions"])
            if entry not in member["public_functions"]:
                stage("run")
                raise StageError(
                    "run",
                    f"function '{entry}' not found in the module; it exports {member['public_functions']}",
                )
            sites = (member["site_offset"], member["site_offset"] + len(member["sites"] or []))
            self._run_sets(job, vm_module, context, member["prefix"] + entry, stage, result, sites)
        except StageError as e:
            result.status, result.stage, result.diagnostics = "error", e.stage, e.lines
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
    ) -> None:
        """Runs the entry function on every input set; keeps the check records of the
        sites in [low, high), numbered from low."""
        stage("run")
        t = time.perf_counter()
        low, high = sites
        result.outputs, records = [], []
        for inputs in job.input_sets or ([],):
            result.outputs.append(self.run(vm_module, context, entry, inputs))
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
        result.stage = "run"
        if job.timing_runs:
            from .timing import time_iree_call

            inputs = (job.input_sets or ([],))[0]
            result.timing = time_iree_call(self, vm_module, context, entry, inputs, job.timing_runs)
