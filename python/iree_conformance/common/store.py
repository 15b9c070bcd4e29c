"""Content-addressed artifact store for imported MLIR and compiled modules.

An entry is one file, ``<root>/<kind>/<key[:2]>/<key>.bin``: a magic line, a JSON
header (small metadata such as the entry function or a cached failure) and the payload
bytes. Writers build the file under a temporary name in the same folder and move it
into place (``fsutil.atomic_write_bytes``), so concurrent writers (pytest-xdist) and a
process killed mid-write never leave a file that a reader takes as valid: a reader also checks the
payload length and digest recorded in the header.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import atomic_write_bytes
from iree_conformance.common.userdirs import STORE_ENV

_MAGIC = b"IREE-CONFORMANCE-STORE 1\n"


def _problem(data: bytes) -> str | None:
    """Why an entry's bytes are not a valid entry, or None."""
    if not data.startswith(_MAGIC):
        return "no store header (overwritten or truncated)"
    try:
        header_end = data.index(b"\n", len(_MAGIC))
        header = json.loads(data[len(_MAGIC) : header_end])
    except ValueError:
        return "its header is cut or not JSON (truncated)"
    if not isinstance(header, dict):
        return "its header is not an object"
    payload = data[header_end + 1 :]
    if len(payload) != header.get("size"):
        return (
            f"{len(payload)} payload bytes where the header says {header.get('size')} (truncated)"
        )
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        return "its payload does not match its sha256"
    return None


def default_store_dir() -> Path:
    """$IREE_CONFORMANCE_STORE, else the user cache dir (``--store-dir`` overrides both)."""
    from iree_conformance.common.userdirs import resolve_dir

    return resolve_dir(None, STORE_ENV, "store")


def make_key(*parts: bytes | str) -> str:
    """sha256 over length-prefixed parts, so that ("ab", "c") != ("a", "bc")."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class ArtifactStore:
    """Reads and writes entries; ``root=None`` disables it (``--no-cache``)."""

    def __init__(self, root: Path | None):
        self.root = Path(root) if root is not None else None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def _path(self, kind: str, key: str) -> Path:
        assert self.root is not None
        return self.root / kind / key[:2] / f"{key}.bin"

    def has(self, kind: str, key: str) -> bool:
        """Whether an entry is there (not checked: ``get`` checks what it reads)."""
        return self.root is not None and self._path(kind, key).is_file()

    def get(self, kind: str, key: str) -> tuple[dict[str, Any], bytes] | None:
        """Returns (header, payload), or None when absent or not valid.

        An entry that is there but fails its checks (truncated, overwritten) is damage:
        it is reported once (``store_events``) and removed, so that the next writer
        stores it again and nothing keeps pointing at it."""
        if self.root is None:
            return None
        path = self._path(kind, key)
        try:
            before = path.stat()
            data = path.read_bytes()
        except OSError:
            return None
        problem = _problem(data)
        if problem is not None:
            self._drop_damaged(path, before, kind, key, problem)
            return None
        header_end = data.index(b"\n", len(_MAGIC))
        header = json.loads(data[len(_MAGIC) : header_end])
        return header.get("meta", {}), data[header_end + 1 :]

    def _drop_damaged(self, path: Path, seen: Any, kind: str, key: str, problem: str) -> None:
        from iree_conformance.common import store_events

        store_events.damaged(self.root, kind, key, problem)
        try:
            now = path.stat()
            if (now.st_ino, now.st_mtime_ns, now.st_size) == (
                seen.st_ino,
                seen.st_mtime_ns,
                seen.st_size,
            ):  # not replaced meanwhile by a writer with a good copy
                path.unlink()
        except OSError:
            pass  # a read-only store: it stays damaged, and is recompiled each time

    def put(
        self, kind: str, key: str, payload: bytes, meta: dict[str, Any] | None = None
    ) -> Path | None:
        if self.root is None:
            return None
        path = self._path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {
            "size": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "meta": meta or {},
        }
        data = (_MAGIC, json.dumps(header, sort_keys=True).encode(), b"\n", payload)
        # Keyed by a hash of its inputs: an entry another writer already put there is
        # as good as ours (Windows refuses the replace while a reader has it open).
        return atomic_write_bytes(path, data, exists_ok=True)
