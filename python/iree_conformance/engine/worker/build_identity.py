"""Which IREE build made a module: part of every import key.

A version is not a build: a compiler engineer's own wheel or a re-spun nightly keeps the
version and changes what the compiler does. The identity holds the compiler's and the
runtime's version files (``VERSION`` and ``REVISIONS``) and the sha256 of the compiler
library itself (``libIREECompiler``), hashed once per installed file
(``common/file_digest``). All of it is read from files, without importing ``iree.compiler``, which a warm
case never needs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

from iree_conformance.common.file_digest import file_digest

__all__ = ["build_identity"]

_VERSION_FILES = (
    ("compiler", Path("compiler", "version.py")),
    ("runtime", Path("_runtime_libs", "version.py")),
)


def _iree_folders() -> list[Path]:
    try:
        spec = importlib.util.find_spec("iree")
    except (ImportError, ValueError):
        return []
    return [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []


@functools.lru_cache(maxsize=1)
def build_identity() -> str:
    """JSON of the installed IREE's version files' text and its compiler library's digest."""
    found: dict[str, str] = {}
    for base in _iree_folders():
        for name, relative in _VERSION_FILES:
            path = base / relative
            if name not in found and path.is_file():
                try:
                    found[name] = path.read_text(encoding="utf-8")
                except OSError:
                    pass
        libraries = sorted((base / "compiler" / "_mlir_libs").glob("*IREECompiler.*"))
        for library in libraries:
            if "compiler_library" not in found:
                try:
                    found["compiler_library"] = file_digest(library)
                except OSError:
                    pass
    return json.dumps(found, sort_keys=True)
