"""The sha256 of a file's bytes, hashed once per version of the file.

A store key that holds a file's bytes must see a rewrite at the same size (other weights
in an ONNX model's external data, a rebuilt compiler library), so a size and a time are
not enough; hashing a multi-GB file on every warm run is too much. The digest is kept
under the file's identity (its resolved path, size, inode, device, and modification and
change times: ``st_ctime_ns`` moves on every write and cannot be set back), in this
process and in the user cache's ``digests`` folder (an artifact store of its own, shared
by every store and process), so a file is read whole once per version.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.common.userdirs import user_cache_dir

__all__ = ["DIGEST_KIND", "file_digest"]

DIGEST_KIND = "digest"
_CHUNK = 1 << 22
_memo: dict[tuple[object, ...], str] = {}


def _identity(path: Path) -> tuple[object, ...]:
    st = os.stat(path)
    return (
        str(path.resolve()),
        st.st_size,
        st.st_ino,
        st.st_dev,
        st.st_mtime_ns,
        st.st_ctime_ns,
    )


def _hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def _store() -> ArtifactStore | None:
    try:
        return ArtifactStore(user_cache_dir("digests"))
    except Exception:  # noqa: BLE001 - no user cache dir here: each process hashes again
        return None


def file_digest(path: Path) -> str:
    """The sha256 (hex) of the file's bytes; raises OSError when it cannot be read."""
    path = Path(path)
    identity = _identity(path)
    found = _memo.get(identity)
    if found is not None:
        return found
    key = make_key("file-digest", repr(identity))
    store = _store()
    hit = store.get(DIGEST_KIND, key) if store is not None else None
    digest = str(hit[0].get("sha256", "")) if hit is not None else ""
    if len(digest) != 64:
        digest = _hash(path)
        if _identity(path) != identity:  # written while read: kept nowhere
            return digest
        if store is not None:
            try:
                store.put(DIGEST_KIND, key, b"", {"sha256": digest, "path": identity[0]})
            except OSError:
                pass  # a cache of a cache: the next run hashes it again
    _memo[identity] = digest
    return digest
