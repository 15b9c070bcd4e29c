"""The worker's view of the artifact store: store keys, cached imports and failures,
and the member index that makes a case compiled inside a batch warm for any later
selection (a ``-k`` run, a sample, another shard, other batches)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from typing import Any

from iree_conformance.common import store_events
from iree_conformance.common.file_digest import file_digest
from iree_conformance.common.platform_info import cpu_fingerprint, host_arch
from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.engine.worker.build_identity import build_identity
from iree_conformance.engine.worker.compiler import compiler_version
from iree_conformance.engine.worker.errors import StageError
from iree_conformance.engine.worker.params import ParameterFiles
from iree_conformance.frontends.registry import importer_version, source_files
from iree_conformance.model.jobs import BatchJob, CaseJob, Program

# Part of every store key: bump it when prepare, import or the check rewrite change what
# they produce, so that no cached module or failure from before the change is reused.
PIPELINE_VERSION = "1"
# Part of every batch key: bump it when merging changes what it produces.
BATCH_VERSION = "1"


def job_host(job: CaseJob | BatchJob) -> str:
    """The host part of a store key: the CPU for host-specific targets, else the arch."""
    return cpu_fingerprint() if job.host_specific else host_arch()


def _read_files(program: Program, source: bytes) -> list[str]:
    """Each "<file> <sha256>" of the files beside the source that the import reads (an ONNX
    model's external data): a rewrite at the same size is another program. A file that
    cannot be read is keyed as such (the import says why)."""
    parts = []
    for path in source_files(program, source):
        try:
            parts.append(f"{path.name} {file_digest(path)}")
        except OSError as e:
            parts.append(f"{path.name} unreadable {e.errno}")
    return parts


@dataclasses.dataclass(frozen=True)
class MemberEntry:
    """Where a case's function was compiled: in batch ``batch_key`` under ``member_id``."""

    batch_key: str
    member_id: str
    size: int


class ModuleCache:
    """Store keys and the store's entries for imported MLIR, modules and failures."""

    def __init__(self, store: ArtifactStore):
        self.store = store
        self.params = ParameterFiles(store)
        self._whole: set[str] = set()  # batch modules read whole once by this worker

    @staticmethod
    def keys(program: Program, source: bytes, flags: tuple[str, ...], host: str) -> tuple[str, str]:
        """(import key, compile key) of one program under these flags on this host."""
        import_opts = json.dumps(dict(program.import_options), sort_keys=True)
        importer = importer_version(program)
        import_key = make_key(
            "import",
            PIPELINE_VERSION,
            hashlib.sha256(source).digest(),
            program.kind,
            import_opts,
            importer,
            build_identity(),  # the compiler's and runtime's revisions, the library's digest
            *_read_files(program, source),
        )
        # Keyed by flags and host, not by target name: targets that share flags (llvm-cpu,
        # llvm-cpu-sync) share modules; machine code never crosses architectures, and a
        # host-specific target's modules never cross CPUs.
        return import_key, make_key("compile", import_key, json.dumps(flags), host)

    @staticmethod
    def batch_key(flags: tuple[str, ...], host: str, members: list[tuple[str, str]]) -> str:
        """A batch module's key, from its members' (case id, import key) in order."""
        parts = [part for member in members for part in member]
        return make_key(
            "batch",
            PIPELINE_VERSION,
            BATCH_VERSION,
            compiler_version(),
            json.dumps(flags),
            host,
            *parts,
        )

    def get(self, kind: str, key: str) -> tuple[dict[str, Any], bytes] | None:
        return self.store.get(kind, key)

    def put(self, kind: str, key: str, payload: bytes, meta: dict[str, Any]) -> None:
        """The store is a cache: a full disk or a locked file costs speed, not the case."""
        try:
            self.store.put(kind, key, payload, meta)
        except OSError as e:  # told once at the run's end (store_events), not lost
            store_events.not_stored(self.store.root, kind, key, e)

    def put_failure(self, key: str, error: StageError, **extra: Any) -> None:
        """A failure of the program, kept; one of the machine's is not (the next run tries
        again)."""
        if error.machine_fault() is not None:
            return
        self.put("failure", key, b"", {"stage": error.stage, "lines": error.lines, **extra})

    def imported(
        self,
        program: Program,
        source: bytes,
        import_key: str,
        do_import: Callable[[], tuple[bytes, dict[str, Any]]],
        hits: dict[str, bool],
        bypass: bool,
    ) -> tuple[bytes, dict[str, Any]]:
        """The program's MLIR and import metadata, from the store or imported now."""
        imported = None if bypass else self.store.get("mlir", import_key)
        # An import whose parameter file is gone (pruned) is imported again.
        if imported is not None and self.params.present(imported[0]):
            hits["import"] = True
            meta, mlir = imported
            return mlir, meta
        mlir, meta = do_import()
        meta = self.params.keep(import_key, meta)
        self.put("mlir", import_key, mlir, meta)
        return mlir, meta

    # -- the member index ------------------------------------------------------
    def put_members(self, batch_key: str, members: dict[str, str]) -> None:
        """Records, under each member's own compile key, the batch it was compiled in
        (members: case id -> compile key)."""
        for case_id, compile_key in members.items():
            self.put(
                "member",
                compile_key,
                b"",
                {"batch_key": batch_key, "member_id": case_id, "size": len(members)},
            )

    def setup_s(self, what: str) -> float | None:
        """Seconds recorded on this machine for ``what``: "reference:<timed reference>"
        (its set-up: session or compile, and its first call) or "import:<module>" (a
        worker's first import of a reference's library). How a warm case, whose timing
        budget is small, knows before paying for it whether its reference fits
        (docs/speed.md, "Cost")."""
        hit = self.store.get("timing", make_key("setup", what, cpu_fingerprint()))
        try:
            return float(hit[0]["seconds"]) if hit is not None else None
        except (KeyError, TypeError, ValueError):
            return None

    def put_setup_s(self, what: str, seconds: float) -> None:
        """Kept once (the caller writes only what is not there): a warm run writes
        nothing to the store."""
        self.put("timing", make_key("setup", what, cpu_fingerprint()), b"", {"seconds": seconds})

    def member(self, compile_key: str) -> MemberEntry | None:
        """The batch a program under this compile key was compiled in, when its module
        is still in the store."""
        hit = self.store.get("member", compile_key)
        if hit is None:
            return None
        meta = hit[0]
        try:
            entry = MemberEntry(str(meta["batch_key"]), str(meta["member_id"]), int(meta["size"]))
        except (KeyError, TypeError, ValueError):
            return None
        return entry if self.batch_module_whole(entry.batch_key) else None

    def batch_module_whole(self, batch_key: str) -> bool:
        """Whether the batch module is in the store and passes its checks (read once per
        worker): a damaged one is dropped (``ArtifactStore.get``) and its members are
        compiled again, not run against a module that cannot load."""
        if batch_key in self._whole:
            return self.store.has("vmfb", batch_key)
        if self.store.get("vmfb", batch_key) is None:
            return False
        self._whole.add(batch_key)
        return True
