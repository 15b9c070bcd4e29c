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
        """Returns (header, payload), or None when absent or not valid."""
        if self.root is None:
            return None
        try:
            data = self._path(kind, key).read_bytes()
        except OSError:
            return None
        if not data.startswith(_MAGIC):
            return None
        try:
            header_end = data.index(b"\n", len(_MAGIC))
            header = json.loads(data[len(_MAGIC) : header_end])
        except ValueError:
            return None
        payload = data[header_end + 1 :]
        if len(payload) != header.get("size") or hashlib.sha256(payload).hexdigest() != header.get(
            "sha256"
        ):
            return None
        return header.get("meta", {}), payload

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
