"""Parameter files (``.irpa``) in the artifact store: the weights an import kept out of
its MLIR (an ONNX model over 2 GiB, ``frontends/onnx/large_import.py``).

A parameter file can be gigabytes: it is not a store entry (an entry is read whole and
hashed on every read) but a plain file beside them, ``<root>/params/<key[:2]>/<import
key>.irpa``, keyed like the import that wrote it and named by that import's metadata
(``parameters``: the file relative to the store, its size and scope). The importer writes
it under ``<root>/params/tmp`` so that keeping it is a rename, never a copy. An import
whose file is gone or of another size is a miss: the model is imported again. Without a
store the file stays in its temporary folder, removed when the worker exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import time
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import current_umask
from iree_conformance.common.store import ArtifactStore

__all__ = ["PARAMS_KIND", "ParameterFiles"]

PARAMS_KIND = "params"
_SCOPE = "model"  # frontends/onnx/large_import.PARAMS_SCOPE
# A folder of tmp/ older than this is a killed import's (a live one of a large model can
# read for many minutes without touching its folder).
_STRAY_AFTER_S = 24 * 3600.0


class ParameterFiles:
    """Where an import writes its parameter file, and where the store keeps it."""

    def __init__(self, store: ArtifactStore):
        self.store = store

    def work_dir(self) -> Path | None:
        """The folder an importer writes a parameter file in (None: no store); the folders
        that killed imports left there (older than a live import's) are removed first."""
        if self.store.root is None:
            return None
        work = self.store.root / PARAMS_KIND / "tmp"
        cutoff = time.time() - _STRAY_AFTER_S
        try:
            stray = [p for p in work.iterdir() if p.is_dir() and p.stat().st_mtime < cutoff]
        except OSError:
            stray = []
        for folder in stray:
            shutil.rmtree(folder, ignore_errors=True)
        return work

    def keep(self, import_key: str, meta: dict[str, Any]) -> dict[str, Any]:
        """The import's metadata, its new parameter file (``parameters_file``) moved into
        the store under ``import_key`` and named as ``parameters``."""
        written = meta.get("parameters_file")
        if not written:
            return meta
        meta = {k: v for k, v in meta.items() if k != "parameters_file"}
        source = Path(written)
        size = source.stat().st_size
        if self.store.root is None:
            atexit.register(shutil.rmtree, source.parent, True)
            meta["parameters"] = {"file": str(source), "bytes": size, "scope": _SCOPE}
            return meta
        relative = Path(PARAMS_KIND, import_key[:2], f"{import_key}.irpa")
        target = self.store.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        target.chmod(0o666 & ~current_umask())  # as the store's entries: others may read it
        shutil.rmtree(source.parent, ignore_errors=True)
        meta["parameters"] = {"file": relative.as_posix(), "bytes": size, "scope": _SCOPE}
        return meta

    def path(self, meta: dict[str, Any]) -> Path | None:
        """The parameter file an import's metadata names (None: it names none)."""
        entry = meta.get("parameters")
        if not isinstance(entry, dict) or not entry.get("file"):
            return None
        file = Path(str(entry["file"]))
        if self.store.root is None:
            return file  # no store: the worker's own scratch file, named by this process
        # A store entry names a file under the store's params/ folder, never elsewhere (the
        # store is shared and restored from caches): anything else is no file.
        params = (self.store.root / PARAMS_KIND).resolve()
        if file.is_absolute() or not (self.store.root / file).resolve().is_relative_to(params):
            return None
        return self.store.root / file

    def present(self, meta: dict[str, Any]) -> bool:
        """Whether the parameter file the metadata names is there, whole (its size), or
        it names none. One that names a file outside the store's params/ is not there:
        the import is made again."""
        if not isinstance(meta.get("parameters"), dict) or not meta["parameters"].get("file"):
            return True
        file = self.path(meta)
        if file is None:
            return False
        try:
            return file.stat().st_size == int(meta["parameters"].get("bytes", -1))
        except (OSError, TypeError, ValueError):
            return False

    def runtime_parameters(self, meta: dict[str, Any]) -> tuple[str, Path] | None:
        """(scope, file) for the runtime to load beside the module, or None."""
        file = self.path(meta)
        if file is None:
            return None
        return str(meta["parameters"].get("scope") or _SCOPE), file
