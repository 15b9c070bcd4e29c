"""A folder of torch case files: their cases (an index per file) and their exports (per
case), both cached in the artifact store.

Each ``.py`` file under the folder (not ``_*.py`` helpers, nor hidden folders) is a case
file (``spec.py``). Both caches are keyed by the versions of torch, iree-turbine,
IREE's compiler, numpy and transformers, this package's source, and the text of the file
and of the ``_*.py`` helpers beside it. Listing the cases imports the file; a case is
exported (torch.export, the preparation, the import, and torch eager) only when it
runs, so deselected cases cost nothing and a warm run never imports torch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.frontends.torch_export import bounded
from iree_conformance.frontends.torch_export.artifact import Exported
from iree_conformance.frontends.torch_export.spec import TorchCase, cases_of

INDEX_KIND, EXPORT_KIND = "torch-cases", "torch-export"
CORE_KIND = "torch-core-export"  # the program under torch's core decompositions
INSTALL_HINT = (
    "pip install torch==2.13.0 iree-turbine (or the extra: pip install 'iree-conformance[torch]'; "
    "GitHub runners: --index-url https://download.pytorch.org/whl/cpu for torch's CPU build)"
)
_OPTIONAL_MODULES = ("torch", "iree.turbine", "transformers")


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

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ExportFailed(Exception):
    """The case cannot be exported; ``stage`` is where (``export.ExportError``)."""

    def __init__(self, stage: str, message: str, core_mlir: str | None = None):
        super().__init__(message)
        self.stage = stage
        self.core_mlir = core_mlir  # torch's core decompositions' import, when it passed


class ExportTimedOut(ExportFailed):
    """The export ran past its limit (``bounded``): a ``timeout``, never stored."""

    def __init__(self, message: str):
        super().__init__("prepare", message)


def missing_reason() -> str | None:
    """Why torch cases cannot be exported here, or None when torch and iree-turbine are."""
    missing = [m for m in ("torch", "iree.turbine") if _find(m) is None]
    if missing:
        names = " and ".join("iree-turbine" if m == "iree.turbine" else m for m in missing)
        return f"{names} not installed: {INSTALL_HINT}"
    return None


def _find(module: str) -> Any:
    """The module's spec, or None; a namespace package (a folder named ``torch`` on the
    path, as ``conformance/torch`` is in a pytest run) is no installed package."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec if spec is not None and spec.origin not in (None, "namespace") else None


def case_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.py")
        if p.is_file()
        and not p.name.startswith("_")
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


@functools.lru_cache(maxsize=1)
def package_digest() -> str:
    """This package's source: a change to how cases are exported invalidates the caches."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def file_key(path: Path, root: Path, id_prefix: str) -> str:
    from iree_conformance.frontends.torch_export.export import versions

    helpers = [p.read_bytes() for p in sorted(path.parent.glob("_*.py"))]
    return make_key(
        "torch-case-file",
        package_digest(),
        json.dumps(versions(), sort_keys=True),
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
    if entry is not None:
        with contextlib.suppress(ValueError, TypeError):
            return [Listed(**r) for r in json.loads(entry[1])]
    try:
        listed, cacheable = bounded.call(
            _list_file, (path, root, id_prefix), bounded.limit("prepare")
        )
    except (bounded.TimedOut, bounded.ChildFailed) as e:  # not stored: it may pass next time
        error = (
            f"{path}: cannot load the case file: its import {e} (--stage-timeout prepare=SECONDS)"
        )
        stem = path.relative_to(root).with_suffix("").as_posix()
        where: dict[str, Any] = {"source": str(path), "root": str(root), "prefix": id_prefix}
        return [Listed(f"{id_prefix}{stem}", **where, error=error)]
    if cacheable:
        payload = json.dumps([r.to_json() for r in listed]).encode()
        store.put(INDEX_KIND, key, payload, {"file": path.name})
    return listed


def _list_file(path: Path, root: Path, id_prefix: str) -> tuple[list[Listed], bool]:
    """The file's cases, and whether they may be cached (not when a package is missing)."""
    stem = path.relative_to(root).with_suffix("").as_posix()
    file_id = f"{id_prefix}{stem}"
    where: dict[str, Any] = {"source": str(path), "root": str(root), "prefix": id_prefix}
    try:
        cases = load_cases(path)
    except ModuleNotFoundError as e:
        top = e.name or ""
        optional = next((m for m in _OPTIONAL_MODULES if top == m or top.startswith(m + ".")), None)
        if optional and _find(optional) is None:
            skip = f"{path}: needs {optional}, which is not installed: {INSTALL_HINT}"
            return [Listed(file_id, **where, skip=skip)], False
        return [Listed(file_id, **where, error=load_error(path, e))], True
    except BaseException as e:  # noqa: BLE001 - a broken case file is an error case naming it
        if isinstance(e, KeyboardInterrupt):
            raise
        return [Listed(file_id, **where, error=load_error(path, e))], True
    if not cases:
        error = (
            f"{path}: defines no case: decorate a function with @case(...), call "
            "module_case(...) at module level, or list TorchCase values in CASES"
        )
        return [Listed(file_id, **where, error=error)], True
    listed: list[Listed] = []
    seen: set[str] = set()
    for case in cases:
        if case.name in seen:
            error = f"{path}:{case.line}: two cases are named {case.name!r}: give each its own name"
            listed.append(Listed(f"{file_id}/{case.name}#duplicate", **where, error=error))
            continue
        seen.add(case.name)
        listed.append(
            Listed(
                f"{file_id}/{case.name}",
                **where,
                name=case.name,
                description=case.description,
                line=case.line,
                rtol=case.rtol,
                atol=case.atol,
            )
        )
    return listed, True


def export_listed(case: Listed, store: ArtifactStore) -> Exported:
    """The case's export: from the store, else exported and stored. ExportFailed says
    why there is none (a failure is stored too: it is as deterministic as a success)."""
    return decode(_stored(case, store, EXPORT_KIND, _export))


def decode(payload: bytes) -> Exported:
    if payload.startswith(b"{"):
        failure = json.loads(payload)
        raise ExportFailed(failure["stage"], failure["error"], failure.get("core_mlir"))
    return Exported.from_bytes(payload)


def failure_payload(stage: str, message: str, core_mlir: str | None = None) -> bytes:
    failure = {"stage": stage, "error": message}
    if core_mlir is not None:
        failure["core_mlir"] = core_mlir
    return json.dumps(failure).encode()


def core_export_listed(case: Listed, store: ArtifactStore) -> str:
    """The case's program prepared with torch's core decompositions (only asked for a case
    whose iree-turbine preparation fails to compile), from the store, else made and
    stored. ExportFailed says why there is none."""
    return core_text(_stored(case, store, CORE_KIND, _export_core, CORE_KIND))


def _stored(
    case: Listed,
    store: ArtifactStore,
    kind: str,
    make: Callable[[Path, Listed], bytes],
    *key_extra: str,
) -> bytes:
    """The case's ``kind`` payload from the store, else made and stored (a failure too)."""
    path, root = Path(case.source), Path(case.root)
    key = make_key(file_key(path, root, case.prefix), case.name, *key_extra)
    entry = store.get(kind, key)
    if entry is not None and entry[1] is not None:
        return entry[1]
    payload = bounded_payload(make, (path, case), case.case_id)
    store.put(kind, key, payload, {"case": case.case_id})
    return payload


def bounded_payload(make: Callable[..., Any], args: tuple[Any, ...], what: str) -> Any:
    """``make(*args)`` in a child under the export's limit (``bounded``); a timeout or a
    dead child raises (nothing is stored)."""
    try:
        return bounded.call(make, args, bounded.limit("prepare", "import"))
    except bounded.TimedOut as e:
        raise ExportTimedOut(
            f"{what}: the export (torch.export, torch eager, iree-turbine's import) {e} "
            "(--stage-timeout prepare=SECONDS import=SECONDS)"
        ) from None
    except bounded.ChildFailed as e:
        raise ExportFailed("prepare", f"{what}: the export failed: {e}") from None


def core_text(payload: bytes) -> str:
    if payload.startswith(b"{"):
        failure = json.loads(payload)
        raise ExportFailed(failure["stage"], failure["error"])
    return payload.decode("utf-8")


def _export_core(path: Path, listed: Listed) -> bytes:
    from iree_conformance.frontends.torch_export.export import ExportError, export_core

    try:
        found = find_case(path, listed.name)
    except Exception as e:  # noqa: BLE001 - it exported before: a file that changed since
        return failure_payload("prepare", f"{path}: {e}")
    try:
        return export_core(found).encode("utf-8")
    except ExportError as e:
        return failure_payload(e.stage, str(e))


def _export(path: Path, listed: Listed) -> bytes:
    from iree_conformance.frontends.torch_export.export import ExportError, export_case

    try:
        cases = {c.name: c for c in load_cases(path)}
    except Exception as e:  # noqa: BLE001 - it listed before: a file that changed since
        return failure_payload("prepare", load_error(path, e))
    if listed.name not in cases:
        return failure_payload("prepare", f"{path}: no case named {listed.name!r} any more")
    found = cases[listed.name]
    try:
        return export_case(found).to_bytes()
    except ExportError as e:
        message = f"{path}:{found.line}: case {listed.name}: {e}"
        return failure_payload(e.stage, message, e.core_mlir)


@functools.lru_cache(maxsize=64)
def _loaded(path: str, mtime_ns: int) -> tuple[TorchCase, ...]:
    """A case file imported once per process (and again when it changes)."""
    name = "_iree_conformance_torch_cases_" + hashlib.sha256(path.encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not importable")
    module = importlib.util.module_from_spec(spec)
    folder = str(Path(path).parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return tuple(cases_of(vars(module)))


def load_cases(path: Path) -> list[TorchCase]:
    """Imports the case file (its folder on sys.path, for helpers) and returns its cases."""
    return list(_loaded(str(path), path.stat().st_mtime_ns))


def find_case(path: Path, name: str) -> TorchCase:
    for c in load_cases(path):
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
