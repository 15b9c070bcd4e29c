"""A folder of JAX case files: their cases (an index per file) and their exports (per
case), both cached in the artifact store.

Each ``.py`` file under the folder (not ``_*.py`` helpers, nor hidden folders) is a case
file (``spec.py``). Both caches are keyed by the versions of JAX, jaxlib, flax, numpy and
ml_dtypes, this package's source, and the text of the file and of the ``_*.py`` helpers
beside it; an entry holds only while every other file of the folder that the case read or
imported is as it was (``common/read_files``). Listing the cases imports the file (cheap: flax parameters are made at export);
a case is exported (lowered, and run by XLA) only when it runs, so deselected cases cost
nothing and a warm run never imports JAX.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iree_conformance.common import read_files
from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.frontends.jax_export.spec import JaxCase, cases_of

INDEX_KIND, EXPORT_KIND = "jax-cases", "jax-export"
INSTALL_HINT = "python -m pip install 'iree-conformance[jax]' (in a checkout: -e '.[jax]')"
_OPTIONAL_MODULES = ("jax", "jaxlib", "flax")
LOCK_STALE_S = 900.0


@dataclasses.dataclass(frozen=True)
class Listed:
    """One case of a case file, or why the file has none."""

    case_id: str
    file: str  # where export-jax writes it, relative to its folder: <file stem>/<name>.mlir
    source: str  # the case file
    root: str  # the folder of case files it belongs to
    prefix: str  # the case ids' prefix for that folder
    name: str = ""  # the case's name in its file ("" for a file-level problem)
    error: str | None = None  # the file or case is broken: the message says why
    skip: str | None = None  # it cannot be listed here (a missing optional package)
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ExportFailed(Exception):
    """The case cannot be exported; the message names the file and case and says why."""


def missing_reason() -> str | None:
    """Why JAX cases cannot be exported here, or None when jax and jaxlib are installed."""
    missing = [m for m in ("jax", "jaxlib") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{' and '.join(missing)} not installed: {INSTALL_HINT}"
    return None


def case_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.py")
        if p.is_file()  # not a FIFO, which would block the export
        and not p.name.startswith("_")
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


@functools.lru_cache(maxsize=1)
def _package_digest() -> str:
    """This package's source: a change to how cases are exported invalidates the caches."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def file_key(path: Path, root: Path, id_prefix: str) -> str:
    from iree_conformance.frontends.jax_export.export import versions

    helpers = [p.read_bytes() for p in sorted(path.parent.glob("_*.py"))]
    return make_key(
        "jax-case-file",
        _package_digest(),
        json.dumps(versions(), sort_keys=True),
        os.environ.get("JAX_ENABLE_X64", ""),
        id_prefix,
        path.relative_to(root).as_posix(),
        path.read_bytes(),
        *helpers,
    )


def list_tree(root: Path, id_prefix: str, store: ArtifactStore) -> list[Listed]:
    """Every case of every case file under root; ids are ``<id_prefix><file stem>/<name>``."""
    listed: list[Listed] = []
    for path in case_files(root):
        listed += list_file(path, root, id_prefix, store)
    return listed


def list_file(path: Path, root: Path, id_prefix: str, store: ArtifactStore) -> list[Listed]:
    key = file_key(path, root, id_prefix)
    entry = store.get(INDEX_KIND, key)
    if entry is not None and read_files.unchanged(entry[0], path.parent):
        with contextlib.suppress(ValueError, TypeError):
            return [Listed(**r) for r in json.loads(entry[1])]
    listed, cacheable = _list_file(path, root, id_prefix)
    if cacheable:
        payload = json.dumps([r.to_json() for r in listed]).encode()
        reads = read_files.entry_meta(_module_reads.get(str(path), set()), path.parent)
        store.put(INDEX_KIND, key, payload, {"file": path.name, **reads})
    return listed


def _list_file(path: Path, root: Path, id_prefix: str) -> tuple[list[Listed], bool]:
    """The file's cases, and whether they may be cached (not when a package is missing)."""
    stem = path.relative_to(root).with_suffix("").as_posix()
    file_id = f"{id_prefix}{stem}"
    where = {"file": f"{stem}.mlir", "source": str(path), "root": str(root), "prefix": id_prefix}
    try:
        cases = load_cases(path)
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        if top in _OPTIONAL_MODULES and importlib.util.find_spec(top) is None:
            skip = f"{path}: needs {top}, which is not installed: {INSTALL_HINT}"
            return [Listed(file_id, **where, skip=skip)], False
        return [Listed(file_id, **where, error=_load_error(path, e))], True
    except Exception as e:  # noqa: BLE001 - a broken case file is an error case naming it
        return [Listed(file_id, **where, error=_load_error(path, e))], True
    if not cases:
        error = f"{path}: defines no case: decorate a function with @case(...) or list JaxCase values in CASES"
        return [Listed(file_id, **where, error=error)], True
    listed: list[Listed] = []
    seen: set[str] = set()
    for case in cases:
        place = {**where, "file": f"{stem}/{case.name}.mlir"}
        if case.name in seen:
            error = f"{path}: two cases are named {case.name!r}: give each its own name"
            listed.append(Listed(f"{file_id}/{case.name}#duplicate", **place, error=error))
            continue
        seen.add(case.name)
        listed.append(
            Listed(f"{file_id}/{case.name}", **place, name=case.name, description=case.description)
        )
    return listed, True


def export_listed(case: Listed, store: ArtifactStore) -> str:
    """The case's self-checking text: from the store, else exported (once: pytest-xdist
    workers wait for each other) and stored. ExportFailed says why there is none."""
    path, root = Path(case.source), Path(case.root)
    key = make_key(file_key(path, root, case.prefix), case.name)
    found = _cached(store, key, path.parent)
    if found is None:
        with _export_lock(store, key):
            found = _cached(store, key, path.parent)  # another process may have exported it
            if found is None:
                with read_files.recording(path.parent) as reads:
                    found = _export(path, case)
                reads |= _module_reads.get(str(path), set())  # its import, maybe earlier
                meta = {"case": case.case_id, **read_files.entry_meta(reads, path.parent)}
                store.put(EXPORT_KIND, key, json.dumps(found).encode(), meta)
    if "error" in found:
        raise ExportFailed(found["error"])
    return found["text"]


def _cached(store: ArtifactStore, key: str, folder: Path) -> dict[str, str] | None:
    entry = store.get(EXPORT_KIND, key)
    if entry is None or not read_files.unchanged(entry[0], folder):
        return None
    try:
        found = json.loads(entry[1])
    except ValueError:
        return None
    return found if isinstance(found, dict) and ("text" in found or "error" in found) else None


def _export(path: Path, listed: Listed) -> dict[str, str]:
    from iree_conformance.frontends.jax_export.export import ExportError, export_case

    try:
        cases = {c.name: c for c in load_cases(path)}
    except Exception as e:  # noqa: BLE001 - it listed before: a file that changed since
        return {"error": _load_error(path, e)}
    if listed.name not in cases:
        return {"error": f"{path}: no case named {listed.name!r} any more"}
    try:
        return {"text": export_case(cases[listed.name], listed.case_id)}
    except ExportError as e:
        return {"error": f"{path}: case {listed.name}: export failed: {e}"}


@contextlib.contextmanager
def _export_lock(store: ArtifactStore, key: str) -> Iterator[None]:
    """One exporter per entry at a time. A lock older than LOCK_STALE_S (a killed
    exporter) is broken."""
    if store.root is None:
        yield
        return
    lock = store.root / EXPORT_KIND / key[:2] / f"{key}.lock"
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
            if store.get(EXPORT_KIND, key) is not None:
                yield  # the other exporter finished: the caller reads its entry
                return
            time.sleep(0.2)
    try:
        os.close(fd)
        yield
    finally:
        lock.unlink(missing_ok=True)


#: The files of its folder each case file's import read (``common/read_files``).
_module_reads: dict[str, set[Path]] = {}


@functools.lru_cache(maxsize=64)
def _loaded(path: str, mtime_ns: int) -> tuple[JaxCase, ...]:
    """A case file imported once per process (and again when it changes); what its
    import read of its folder is kept in ``_module_reads``."""
    name = "_iree_conformance_jax_cases_" + hashlib.sha256(path.encode()).hexdigest()[:16]
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
    return tuple(cases_of(vars(module)))


def load_cases(path: Path) -> list[JaxCase]:
    """Imports the case file (its folder on sys.path, for helpers) and returns its cases."""
    return list(_loaded(str(path), path.stat().st_mtime_ns))


def _load_error(path: Path, e: BaseException) -> str:
    """The exception and the innermost line of the case file that raised it."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        if Path(frame.filename) == path:
            where = f":{frame.lineno}"
    message = "".join(traceback.format_exception_only(type(e), e)).strip()
    return f"{path}{where}: cannot load the case file: {message}"
