"""The files of a folder that Python code reads while it runs: part of a stored export's key.

A torch or JAX case file may read a data file beside it (weights, a vocabulary, inputs)
or import a module beside it; its stored export answers only while those files are as
they were. ``recording(folder)`` watches, through Python's audit hooks (``sys.addaudithook``:
the ``open`` event of ``open``, ``os.open`` and ``io.open_code``, and the ``import``
event), every file under ``folder`` that the code inside opens or imports; a module
imported before (in ``sys.modules``, so not opened again) whose file is under the folder
counts too. ``entry_meta`` keeps each file's digest (``common/file_digest``) in the store
entry, and ``unchanged`` says whether the entry still holds for the files on disk.

An audit hook cannot be removed: one is installed per process, on first use, and does
nothing unless a recording is active.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iree_conformance.common.file_digest import file_digest

__all__ = ["READS_META", "entry_meta", "recording", "unchanged"]

#: The store entry's meta field: {path relative to the folder: sha256}.
READS_META = "reads"
#: The prefix of the names the torch and JAX trees import case files under.
_CASE_MODULES = "_iree_conformance_"
_active: list[set[str]] = []
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _active:
        return
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
    elif event == "import" and len(args) > 1 and isinstance(args[1], str):
        path = args[1]
    else:
        return
    found = os.path.abspath(path)
    for reads in _active:
        reads.add(found)


def _source(path: str) -> str:
    """A cached module's source file for its ``__pycache__`` file, else the path."""
    if path.endswith(".pyc") and "__pycache__" in path:
        with contextlib.suppress(ValueError, NotImplementedError):
            return importlib.util.source_from_cache(path)
    return path


@contextlib.contextmanager
def recording(folder: Path) -> Iterator[set[Path]]:
    """The files under ``folder`` read inside the block (filled when the block ends)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    seen: set[str] = set()
    result: set[Path] = set()
    _active.append(seen)
    try:
        yield result
    finally:
        # By identity: nested recordings' sets can be equal, and list.remove compares.
        del _active[next(i for i, r in enumerate(_active) if r is seen)]
        base = Path(folder).resolve()
        prefixes = tuple({str(base), os.path.abspath(folder)})
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            # Not the case files themselves (each keyed by its own text), which a listing
            # imports one after another under these names.
            if isinstance(path, str) and not name.startswith(_CASE_MODULES):
                seen.add(os.path.abspath(path))
        for path in seen:
            if not path.startswith(prefixes):  # cheap: most are the libraries' files
                continue
            found = Path(_source(path))
            with contextlib.suppress(OSError, ValueError):
                resolved = found.resolve()
                # A file it looked for and did not find counts too (it may appear).
                if resolved.is_relative_to(base) and not resolved.is_dir():
                    result.add(resolved)


def _digest(path: Path) -> str | None:
    """The file's sha256, None when there is no file (or it cannot be read)."""
    try:
        return file_digest(path)
    except OSError:
        return None


def entry_meta(reads: set[Path], folder: Path) -> dict[str, Any]:
    """The store entry's record of the files read: {relative path: sha256 or None}."""
    base = Path(folder).resolve()
    return {READS_META: {p.relative_to(base).as_posix(): _digest(p) for p in sorted(reads)}}


def unchanged(meta: dict[str, Any], folder: Path) -> bool:
    """Whether every file the entry records is on disk with the same bytes (or still
    absent)."""
    reads = meta.get(READS_META, {})
    if not isinstance(reads, dict):
        return False
    return all(_digest(Path(folder) / relative) == digest for relative, digest in reads.items())
