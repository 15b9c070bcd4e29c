"""A folder of Python case files exported through the artifact store, for every kind of
case written in Python (``FolderKind``: JAX's in ``jax_export/folder.py``, torch's in
``torch_export/folder.py``): its cases (an index per file) and their exports (per case),
both cached in the store.

Each ``.py`` file under the folder (not ``_*.py`` helpers, nor hidden folders) is a case
file. Both caches are keyed by the kind's versions (``FolderKind.versions``), the source of
the kind's package and of this module (``source_digest``), and the text of the file and of
the ``_*.py`` helpers beside it; an entry holds only while every other file of the folder
that the case read or imported is as it was (``common/read_files``). Listing the cases imports the file; a case is exported
only when it runs, so deselected cases cost nothing and a warm run never imports the
kind's framework. One process exports an entry at a time (pytest-xdist workers wait for
each other); a lock left by a killed exporter is broken after ``LOCK_STALE_S``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from iree_conformance.common import read_files
from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.frontends import bounded
from iree_conformance.frontends.folder_digests import SAME_AS

LOCK_STALE_S = 900.0
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")


def _always_valid(payload: bytes) -> bool:
    return True


@dataclasses.dataclass(frozen=True)
class FolderKind:
    """One kind of case file. Its store kinds are ``<name>-cases`` (the index) and
    ``<name>-export``; its cases are the module-level ``case_type`` values of a file and
    those of its list ``CASES``."""

    name: str  # "jax", "torch"
    package: Path  # the kind's package: its source keys the caches
    case_type: type
    versions: Callable[[], dict[str, str | None]]  # what an export depends on
    required: tuple[str, ...]  # the modules an export needs (their pip names in install_names)
    optional: tuple[str, ...]  # a case file that imports one of these, absent, is a skip
    install_hint: str
    no_case_hint: str  # how to define a case, for a file that defines none
    # (the file, its case, its listing) -> the export's payload; never raises
    export: Callable[[Path, Any, Listed], bytes]
    failure: Callable[[str, str], bytes]  # (stage, message) -> a failed export's payload
    valid: Callable[[bytes], bool] = _always_valid  # a stored payload still readable
    key_extra: Callable[[], tuple[str, ...]] = tuple  # more of the environment in the key
    install_names: tuple[tuple[str, str], ...] = ()  # (module, pip name)
    mlir_file: bool = False  # each case is written to <file stem>/<name>.mlir (export-jax)
    # The case file's import and each export run in a child under the stage limits
    # (``bounded``: prepare; prepare + import), the kind pickled to it by value.
    in_child: bool = False

    @property
    def index_kind(self) -> str:
        return f"{self.name}-cases"

    @property
    def export_kind(self) -> str:
        return f"{self.name}-export"


@dataclasses.dataclass(frozen=True)
class Listed:
    """One case of a case file, or why the file has none."""

    case_id: str
    source: str  # the case file
    root: str  # the folder of case files it belongs to
    prefix: str  # the case ids' prefix for that folder
    name: str = ""  # the case's name in its file ("" for a file-level problem)
    error: str | None = None  # the file or case is broken: the message says why
    skip: str | None = None  # it cannot be listed here (a missing optional package)
    description: str = ""
    line: int = 1
    rtol: float | None = None
    atol: float | None = None
    file: str = ""  # where export-jax writes it, relative to its folder: <file stem>/<name>.mlir
    defined_in: str = ""  # the file of ``line`` when not the case file (a helper module)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ExportFailed(Exception):
    """The case cannot be exported; the message names the file and case and says why,
    ``stage`` is where (a kind's ``export.ExportError``)."""

    def __init__(self, stage: str, message: str, core_mlir: str | None = None):
        super().__init__(message)
        self.stage = stage
        self.core_mlir = core_mlir  # torch: its core decompositions' import, when it passed


class ExportTimedOut(ExportFailed):
    """The export ran past its limit (``bounded``): a ``timeout``, never stored."""

    def __init__(self, message: str):
        super().__init__("prepare", message)


def check_case(name: str, rtol: float, atol: float) -> None:
    """A case's name names a file; its tolerances are 0 or more. ValueError says which not."""
    if not _NAME.match(name):
        raise ValueError(
            f"case name {name!r}: use letters, digits, '_', '.' and '-' (it names a file)"
        )
    for label, value in (("rtol", rtol), ("atol", atol)):
        if not value >= 0:
            raise ValueError(f"case {name}: {label} must be 0 or more, got {value!r}")


def described(fn: Callable[..., Any], description: str | None) -> str:
    """A decorated case's description: the one given, else its function's first docstring line."""
    if description is not None:
        return description
    doc = (fn.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def find_module(module: str) -> Any:
    """The module's spec, or None; a namespace package (a folder named ``torch`` or ``jax``
    on the path, as ``conformance/torch`` is in a pytest run) is no installed package."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec if spec is not None and spec.origin not in (None, "namespace") else None


def missing_reason(kind: FolderKind) -> str | None:
    """Why the kind's cases cannot be exported here, or None when they can."""
    missing = [m for m in kind.required if find_module(m) is None]
    if missing:
        pip = dict(kind.install_names)
        names = " and ".join(pip.get(m, m) for m in missing)
        return f"{names} not installed: {kind.install_hint}"
    return None


def case_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.py")
        if p.is_file()  # not a FIFO, which would block the export
        and not p.name.startswith("_")
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def source_digest(kind: FolderKind) -> str:
    """The kind's package and this module: a change to how cases are listed or exported
    invalidates the caches (unless ``folder_digests.SAME_AS`` says it exports alike)."""
    return SAME_AS.get(kind.name, {}).get(_digest(kind.package), _digest(kind.package))


@functools.lru_cache(maxsize=8)
def _digest(package: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(package.resolve().glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def file_key(kind: FolderKind, path: Path, root: Path, id_prefix: str) -> str:
    helpers = [p.read_bytes() for p in sorted(path.parent.glob("_*.py"))]
    return make_key(
        f"{kind.name}-case-file",
        source_digest(kind),
        json.dumps(kind.versions(), sort_keys=True),
        *kind.key_extra(),
        id_prefix,
        path.relative_to(root).as_posix(),
        path.read_bytes(),
        *helpers,
    )


def list_tree(kind: FolderKind, root: Path, id_prefix: str, store: ArtifactStore) -> list[Listed]:
    """Every case of every case file under root; ids are ``<id_prefix><file stem>/<name>``."""
    listed: list[Listed] = []
    for path in case_files(root):
        listed += list_file(kind, path, root, id_prefix, store)
    return listed


def list_file(
    kind: FolderKind, path: Path, root: Path, id_prefix: str, store: ArtifactStore
) -> list[Listed]:
    key = file_key(kind, path, root, id_prefix)
    entry = store.get(kind.index_kind, key)
    if entry is not None and read_files.unchanged(entry[0], path.parent):
        with contextlib.suppress(ValueError, TypeError):
            return [Listed(**r) for r in json.loads(entry[1])]
    if kind.in_child:
        try:
            listed, cacheable, read = bounded.call(
                _list_file_read, (kind, path, root, id_prefix), bounded.limit("prepare")
            )
        except (bounded.TimedOut, bounded.ChildFailed) as e:  # not stored: it may pass later
            error = f"{path}: cannot load the case file: its import {e} (--stage-timeout prepare=SECONDS)"
            stem = path.relative_to(root).with_suffix("").as_posix()
            where: dict[str, Any] = {"source": str(path), "root": str(root), "prefix": id_prefix}
            return [Listed(f"{id_prefix}{stem}", **where, error=error)]
    else:
        listed, cacheable, read = _list_file_read(kind, path, root, id_prefix)
    if cacheable:
        payload = json.dumps([r.to_json() for r in listed]).encode()
        reads = read_files.entry_meta(read, path.parent)
        store.put(kind.index_kind, key, payload, {"file": path.name, **reads})
    return listed


def _list_file_read(
    kind: FolderKind, path: Path, root: Path, id_prefix: str
) -> tuple[list[Listed], bool, set[Path]]:
    """``_list_file``, and the files of its folder the case file's import read (in the
    process that imported it: a child for ``in_child`` kinds)."""
    listed, cacheable = _list_file(kind, path, root, id_prefix)
    return listed, cacheable, set(_module_reads.get(str(path), set()))


def _list_file(
    kind: FolderKind, path: Path, root: Path, id_prefix: str
) -> tuple[list[Listed], bool]:
    """The file's cases, and whether they may be cached (not when a package is missing)."""
    stem = path.relative_to(root).with_suffix("").as_posix()
    file_id = f"{id_prefix}{stem}"
    where: dict[str, Any] = {"source": str(path), "root": str(root), "prefix": id_prefix}
    if kind.mlir_file:
        where["file"] = f"{stem}.mlir"
    try:
        cases = load_cases(kind, path)
    except ModuleNotFoundError as e:
        top = e.name or ""
        optional = next((m for m in kind.optional if top == m or top.startswith(m + ".")), None)
        if optional and find_module(optional) is None:
            skip = f"{path}: needs {optional}, which is not installed: {kind.install_hint}"
            return [Listed(file_id, **where, skip=skip)], False
        return [Listed(file_id, **where, error=load_error(path, e))], True
    except BaseException as e:  # noqa: BLE001 - a broken case file is an error case naming it
        if isinstance(e, KeyboardInterrupt):
            raise
        return [Listed(file_id, **where, error=load_error(path, e))], True
    if not cases:
        return [
            Listed(file_id, **where, error=f"{path}: defines no case: {kind.no_case_hint}")
        ], True
    listed: list[Listed] = []
    seen: set[str] = set()
    for case in cases:
        line = getattr(case, "line", None)
        written = getattr(case, "path", "")
        defined_in = written if written and Path(written) != path else ""
        if kind.mlir_file:
            where["file"] = f"{stem}/{case.name}.mlir"
        if case.name in seen:
            at = f"{defined_in or path}:{line}" if line is not None else str(path)
            error = f"{at}: two cases are named {case.name!r}: give each its own name"
            listed.append(Listed(f"{file_id}/{case.name}#duplicate", **where, error=error))
            continue
        seen.add(case.name)
        listed.append(
            Listed(
                f"{file_id}/{case.name}",
                **where,
                name=case.name,
                description=case.description,
                line=line or 1,
                rtol=case.rtol,
                atol=case.atol,
                defined_in=defined_in,
            )
        )
    return listed, True


def stored(
    kind: FolderKind,
    case: Listed,
    store: ArtifactStore,
    store_kind: str,
    make: Callable[[Path, Listed], bytes],
    *key_extra: str,
) -> bytes:
    """The case's ``store_kind`` payload from the store, else made (once: other processes
    wait for it) and stored, a failure too: it is as deterministic as a success."""
    path, root = Path(case.source), Path(case.root)
    key = make_key(file_key(kind, path, root, case.prefix), case.name, *key_extra)
    found = _cached(kind, store, store_kind, key, path.parent)
    if found is None:
        with _lock(store, store_kind, key):
            # another process may have made it meanwhile
            found = _cached(kind, store, store_kind, key, path.parent)
            if found is None:
                if kind.in_child:
                    found, reads = bounded_call(_made_and_read, (make, path, case), case.case_id)
                else:
                    found, reads = _made_and_read(make, path, case)
                meta = {"case": case.case_id, **read_files.entry_meta(reads, path.parent)}
                store.put(store_kind, key, found, meta)
    return found


def _made_and_read(
    make: Callable[[Path, Listed], bytes], path: Path, case: Listed
) -> tuple[bytes, set[Path]]:
    """``make``'s payload and the files of the case's folder it and the case file's
    import read (``common/read_files``)."""
    with read_files.recording(path.parent) as reads:
        payload = make(path, case)
    return payload, reads | _module_reads.get(str(path), set())  # its import, maybe earlier


def bounded_call(make: Callable[..., Any], args: tuple[Any, ...], what: str) -> Any:
    """``make(*args)`` in a child under the export's limit (``bounded``: prepare plus
    import); a timeout or a dead child raises (nothing is stored)."""
    try:
        return bounded.call(make, args, bounded.limit("prepare", "import"))
    except bounded.TimedOut as e:
        raise ExportTimedOut(
            f"{what}: the export (torch.export, torch eager, iree-turbine's import) {e} "
            "(--stage-timeout prepare=SECONDS import=SECONDS)"
        ) from None
    except bounded.ChildFailed as e:
        raise ExportFailed("prepare", f"{what}: the export failed: {e}") from None


def export_listed(kind: FolderKind, case: Listed, store: ArtifactStore) -> bytes:
    """The case's export payload (``kind.export``'s), from the store or made."""
    return stored(kind, case, store, kind.export_kind, functools.partial(_export, kind))


def _cached(
    kind: FolderKind, store: ArtifactStore, store_kind: str, key: str, folder: Path
) -> bytes | None:
    entry = store.get(store_kind, key)
    if entry is None or entry[1] is None or not kind.valid(entry[1]):
        return None
    if not read_files.unchanged(entry[0], folder):
        return None
    return entry[1]


def _export(kind: FolderKind, path: Path, listed: Listed) -> bytes:
    try:
        cases = load_cases(kind, path)
    except Exception as e:  # noqa: BLE001 - it listed before: a file that changed since
        return kind.failure("prepare", load_error(path, e))
    found = next((c for c in cases if c.name == listed.name), None)
    if found is None:
        return kind.failure("prepare", f"{path}: no case named {listed.name!r} any more")
    return kind.export(path, found, listed)


@contextlib.contextmanager
def _lock(store: ArtifactStore, store_kind: str, key: str) -> Iterator[None]:
    """One maker per entry at a time. A lock older than LOCK_STALE_S (a killed maker) is
    broken."""
    if store.root is None:
        yield
        return
    lock = store.root / store_kind / key[:2] / f"{key}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime > LOCK_STALE_S:
                    lock.unlink(missing_ok=True)
                    continue
            except FileNotFoundError:
                continue
            if store.get(store_kind, key) is not None:
                yield  # the other maker finished: the caller reads its entry
                return
            time.sleep(0.2)
    try:
        os.close(fd)
        yield
    finally:
        lock.unlink(missing_ok=True)


def load_cases(kind: FolderKind, path: Path) -> list[Any]:
    """Imports the case file (its folder on sys.path, for helpers) and returns its cases."""
    return list(_loaded(kind, str(path), path.stat().st_mtime_ns))


#: The files of its folder each case file's import read (``common/read_files``).
_module_reads: dict[str, set[Path]] = {}


@functools.lru_cache(maxsize=64)
def _loaded(kind: FolderKind, path: str, mtime_ns: int) -> tuple[Any, ...]:
    """A case file imported once per process (and again when it changes); what its
    import read of its folder is kept in ``_module_reads``."""
    name = f"_iree_conformance_{kind.name}_cases_" + hashlib.sha256(path.encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not importable")
    module = importlib.util.module_from_spec(spec)
    folder = str(Path(path).parent)
    sys.path.insert(0, folder)
    reads: set[Path] = set()
    try:
        with read_files.recording(Path(folder)) as reads:
            spec.loader.exec_module(module)
    finally:
        _module_reads[path] = reads
        if folder in sys.path:
            sys.path.remove(folder)
    return tuple(cases_of(kind.case_type, vars(module)))


def cases_of(case_type: type, namespace: dict[str, Any]) -> list[Any]:
    """The cases a module defines: its module-level ``case_type`` values and the list
    ``CASES``."""
    found = [v for v in namespace.values() if isinstance(v, case_type)]
    listed: Sequence[Any] = namespace.get("CASES", ())
    if not isinstance(listed, (list, tuple)) or not all(isinstance(c, case_type) for c in listed):
        raise ValueError(f"CASES must be a list of {case_type.__name__} values")
    for c in listed:
        if not any(c is f for f in found):
            found.append(c)
    return found


def find_case(kind: FolderKind, path: Path, name: str) -> Any:
    for c in load_cases(kind, path):
        if c.name == name:
            return c
    raise KeyError(f"{path}: no case named {name!r}")


def load_error(path: Path, e: BaseException) -> str:
    """The exception and the innermost line of the case file that raised it."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        if Path(frame.filename) == path:
            where = f":{frame.lineno}"
    message = "".join(traceback.format_exception_only(type(e), e)).strip()
    return f"{path}{where}: cannot load the case file: {message}"
