"""Content hashes: a ``hashFiles()`` equivalent and short digests for key parts."""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections.abc import Iterable

from .errors import MeasureError

_HEX = re.compile(r"^[0-9a-f]{8,}$")
CHUNK = 1 << 20


def file_sha256(path: str) -> bytes:
    h = hashlib.sha256()
    try:
        with open(path, "rb", buffering=0) as fh:
            while chunk := fh.read(CHUNK):
                h.update(chunk)
    except PermissionError:
        raise MeasureError(
            f"file {path!r} is not readable (permission denied); fix its permissions"
        ) from None
    except OSError as exc:
        raise MeasureError(f"cannot read file {path!r}: {exc.strerror}") from None
    return h.digest()


def hash_files(patterns: Iterable[str], workspace: str | None = None) -> str:
    """Like the runner's ``hashFiles()``: sha256 over each matched file's sha256.

    Files are taken in sorted path order, contents only (names, times and modes
    do not count); directories and files outside the workspace are skipped, as
    the runner does. Returns ``""`` when nothing matches, also like the runner.
    (actions/runner src/Misc/expressionFunc/hashFiles/src/hashFiles.ts)
    """
    workspace = os.path.abspath(workspace or os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    matched: set[str] = set()
    for pattern in patterns:
        full = pattern if os.path.isabs(pattern) else os.path.join(workspace, pattern)
        for path in glob.glob(full, recursive=True):
            real = os.path.abspath(path)
            if not real.startswith(workspace + os.sep) or os.path.isdir(real):
                continue
            matched.add(real)
    if not matched:
        return ""
    outer = hashlib.sha256()
    for path in sorted(matched):
        outer.update(file_sha256(path))
    return outer.hexdigest()


def short_digest(value: str, length: int = 16) -> str:
    """A key-sized digest: hex input is kept (truncated), anything else is hashed."""
    value = value.strip()
    if _HEX.match(value):
        return value[:length]
    return hashlib.sha256(value.encode()).hexdigest()[:length]


def digest_of(parts: Iterable[str], length: int = 16) -> str:
    """Order-sensitive digest of several strings (e.g. shard member hashes)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\n")
    return h.hexdigest()[:length]
