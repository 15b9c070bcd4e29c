"""The cache *version* actions/cache sends alongside the key.

A restore only hits an entry whose key AND version match, so two jobs with the
same key but different ``path:`` lines, compression or OS flag miss each other.
Port of ``getCacheVersion`` in actions/toolkit packages/cache/src/internal/
cacheUtils.ts (verified against the source; the upstream unit tests in
packages/cache/__tests__/cacheUtils.test.ts pin the values our tests reuse)::

    components = paths.slice()
    if (compressionMethod) components.push(compressionMethod)
    if (process.platform === 'win32' && !enableCrossOsArchive) components.push('windows-only')
    components.push(versionSalt)          // '1.0'
    return sha256(components.join('|')).hex

``paths`` are the literal ``path:`` input lines (trimmed, empty lines dropped),
not the resolved files. Current toolkits report ``zstd-without-long`` whenever a
``zstd`` binary exists and ``gzip`` otherwise; older ones used ``zstd``.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Iterable

from .errors import CacheToolsError

VERSION_SALT = "1.0"
COMPRESSION_METHODS = ("zstd-without-long", "zstd", "gzip")


def path_lines(paths: Iterable[str]) -> list[str]:
    """Split/trim like ``core.getInput(...).split('\\n')`` with empties dropped."""
    out: list[str] = []
    for p in paths:
        out.extend(line.strip() for line in p.split("\n") if line.strip())
    return out


def detect_compression() -> str:
    """The method actions/cache would pick here (zstd CLI present or not)."""
    return "zstd-without-long" if shutil.which("zstd") else "gzip"


def cache_version(
    paths: Iterable[str],
    compression: str | None = "zstd-without-long",
    enable_cross_os_archive: bool = False,
    platform: str | None = None,
) -> str:
    """sha256 hex of the version components, exactly as actions/cache joins them."""
    if compression is not None and compression not in COMPRESSION_METHODS:
        raise CacheToolsError(
            f"compression {compression!r} is not one actions/cache uses; "
            f"pick one of {', '.join(COMPRESSION_METHODS)}"
        )
    components = path_lines(paths)
    if not components:
        raise CacheToolsError(
            "cache version needs at least one path (the 'path:' lines of the cache step)"
        )
    if compression:
        components.append(compression)
    platform = platform or sys.platform
    if platform.lower() in ("win32", "windows") and not enable_cross_os_archive:
        components.append("windows-only")
    components.append(VERSION_SALT)
    return hashlib.sha256("|".join(components).encode()).hexdigest()
