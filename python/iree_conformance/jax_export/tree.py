"""A folder of JAX case files, exported: one record per case, cached in the artifact store.

Each ``.py`` file under the folder (not ``_*.py`` helpers, nor hidden folders) is a case
file (``spec.py``). Its exports are cached as one store entry keyed by the versions of JAX,
jaxlib, flax, numpy and ml_dtypes, this package's source, and the text of the file and of
the ``_*.py`` helpers beside it: a warm collection reads the entry and never imports JAX.
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

from ..store import ArtifactStore, make_key
from .spec import JaxCase, cases_of

STORE_KIND = "jax-export"
INSTALL_HINT = "python -m pip install 'iree-conformance[jax]' (in a checkout: -e '.[jax]')"
_OPTIONAL_MODULES = ("jax", "jaxlib", "flax")
LOCK_STALE_S = 900.0


@dataclasses.dataclass(frozen=True)
class Exported:
    """One case of a case file: its self-checking text, or why there is none."""

    case_id: str
    file: str  # where export-jax writes it, relative to its folder: <file stem>/<name>.mlir
    text: str | None = None
    error: str | None = None  # the case or its file is broken: the message says why
    skip: str | None = None  # it cannot be exported here (a missing optional package)
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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
        if not p.name.startswith("_")
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


@functools.lru_cache(maxsize=1)
def _package_digest() -> str:
    """This package's source: a change to how cases are exported invalidates the cache."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def file_key(path: Path, root: Path, id_prefix: str) -> str:
    from .export import versions

    helpers = [p.read_bytes() for p in sorted(path.parent.glob("_*.py"))]
    return make_key(
        STORE_KIND,
        _package_digest(),
        json.dumps(versions(), sort_keys=True),
        os.environ.get("JAX_ENABLE_X64", ""),
        id_prefix,
        path.relative_to(root).as_posix(),
        path.read_bytes(),
        *helpers,
    )


def export_tree(root: Path, id_prefix: str, store: ArtifactStore) -> list[Exported]:
    """Every case of every case file under root; ids are ``<id_prefix><file stem>/<name>``."""
    records: list[Exported] = []
    for path in case_files(root):
        records += export_file(path, root, id_prefix, store)
    return records


def export_file(path: Path, root: Path, id_prefix: str, store: ArtifactStore) -> list[Exported]:
    stem = path.relative_to(root).with_suffix("").as_posix()
    key = file_key(path, root, id_prefix)
    cached = _cached(store, key)
    if cached is not None:
        return cached
    with _export_lock(store, key):
        # Another process (a pytest-xdist worker) may have exported it while we waited.
        cached = _cached(store, key)
        if cached is not None:
            return cached
        records, cacheable = _export_file(path, stem, id_prefix)
        if cacheable:
            payload = json.dumps([r.to_json() for r in records]).encode()
            store.put(STORE_KIND, key, payload, {"file": stem})
    return records


def _cached(store: ArtifactStore, key: str) -> list[Exported] | None:
    entry = store.get(STORE_KIND, key)
    if entry is None:
        return None
    try:
        return [Exported(**r) for r in json.loads(entry[1])]
    except (ValueError, TypeError):
        return None  # an entry of another layout: export again


@contextlib.contextmanager
def _export_lock(store: ArtifactStore, key: str) -> Iterator[None]:
    """One exporter per entry at a time, so pytest-xdist workers collecting the same cases
    do not each export them. A lock older than LOCK_STALE_S (a killed exporter) is broken."""
    if store.root is None:
        yield
        return
    lock = store.root / STORE_KIND / key[:2] / f"{key}.lock"
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
            if store.get(STORE_KIND, key) is not None:
                yield  # the other exporter finished: the caller reads its entry
                return
            time.sleep(0.2)
    try:
        os.close(fd)
        yield
    finally:
        lock.unlink(missing_ok=True)


def _export_file(path: Path, stem: str, id_prefix: str) -> tuple[list[Exported], bool]:
    """The file's records, and whether they may be cached (not when a package is missing)."""
    from .export import ExportError, export_case

    file_id = f"{id_prefix}{stem}"
    try:
        cases = load_cases(path)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in _OPTIONAL_MODULES:
            skip = f"{path}: needs {e.name}, which is not installed: {INSTALL_HINT}"
            return [Exported(file_id, f"{stem}.mlir", skip=skip)], False
        return [Exported(file_id, f"{stem}.mlir", error=_load_error(path, e))], True
    except Exception as e:  # noqa: BLE001 - a broken case file is an error case naming it
        return [Exported(file_id, f"{stem}.mlir", error=_load_error(path, e))], True
    if not cases:
        error = f"{path}: defines no case: decorate a function with @case(...) or list JaxCase values in CASES"
        return [Exported(file_id, f"{stem}.mlir", error=error)], True
    records: list[Exported] = []
    seen: set[str] = set()
    for case in cases:
        case_id, file = f"{file_id}/{case.name}", f"{stem}/{case.name}.mlir"
        if case.name in seen:
            error = f"{path}: two cases are named {case.name!r}: give each its own name"
            records.append(Exported(case_id + "#duplicate", file, error=error))
            continue
        seen.add(case.name)
        try:
            text = export_case(case, case_id)
        except ExportError as e:
            records.append(
                Exported(case_id, file, error=f"{path}: case {case.name}: export failed: {e}")
            )
            continue
        records.append(Exported(case_id, file, text=text, description=case.description))
    return records, True


def load_cases(path: Path) -> list[JaxCase]:
    """Imports the case file (its folder on sys.path, for helpers) and returns its cases."""
    name = "_iree_conformance_jax_cases_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not importable")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return cases_of(vars(module))


def _load_error(path: Path, e: BaseException) -> str:
    """The exception and the innermost line of the case file that raised it."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        if Path(frame.filename) == path:
            where = f":{frame.lineno}"
    message = "".join(traceback.format_exception_only(type(e), e)).strip()
    return f"{path}{where}: cannot load the case file: {message}"
