"""A seal on a ccache folder: written after a build that may be saved, checked after a restore.

The seal (SEAL_NAME, inside the folder) lists every other file's relative path, size and
sha256. A restored folder whose files do not match its seal, or that has files and no
seal, was truncated or corrupted on the way (a cut-off archive, a failed extraction, a
damaged blob): the build clears it and starts cold instead of feeding ccache a partial
folder. The seal is written last, after ccache's temporary files are gone, so a folder
is either sealed whole or not sealed at all.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

SEAL_NAME = "iree-ccache-seal.json"
SEAL_VERSION = 1


@dataclass(frozen=True)
class SealCheck:
    state: str  # "empty", "intact", "damaged"
    reason: str
    files: int = 0
    bytes: int = 0
    writer: dict[str, str] = field(default_factory=dict)  # the ccache that wrote the folder


def _files(folder: Path) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if rel == SEAL_NAME or path.is_symlink():
                continue
            digest = hashlib.sha256()
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            out[rel] = (path.stat().st_size, digest.hexdigest())
    return out


def write_seal(folder: Path, writer: dict[str, str] | None = None) -> SealCheck:
    """Seals the folder; writer names the ccache (path, version) that filled it."""
    files = _files(folder)
    data = {
        "version": SEAL_VERSION,
        "writer": dict(writer or {}),
        "files": {k: [s, h] for k, (s, h) in files.items()},
    }
    tmp = folder / (SEAL_NAME + ".part")
    tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8", newline="\n")
    os.replace(tmp, folder / SEAL_NAME)
    return SealCheck("intact", "sealed", len(files), sum(s for s, _ in files.values()))


def check_seal(folder: Path) -> SealCheck:
    """empty (nothing restored), intact (matches its seal) or damaged (and why)."""
    if not folder.is_dir() or not any(folder.iterdir()):
        return SealCheck("empty", "nothing restored")
    seal = folder / SEAL_NAME
    files = _files(folder)
    size = sum(s for s, _ in files.values())
    if not seal.is_file():
        return SealCheck("damaged", f"{len(files)} files and no seal", len(files), size)
    try:
        data = json.loads(seal.read_text(encoding="utf-8"))
        expected = {k: (int(v[0]), str(v[1])) for k, v in data["files"].items()}
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        return SealCheck("damaged", f"unreadable seal ({exc})", len(files), size)
    missing = sorted(set(expected) - set(files))
    if missing:
        return SealCheck(
            "damaged",
            f"{len(missing)} of {len(expected)} files missing (truncated), e.g. {missing[0]}",
            len(files),
            size,
        )
    changed = sorted(k for k in expected if files[k] != expected[k])
    if changed:
        return SealCheck(
            "damaged",
            f"{len(changed)} files differ from the seal (corrupt), e.g. {changed[0]}",
            len(files),
            size,
        )
    writer = data.get("writer") if isinstance(data.get("writer"), dict) else {}
    return SealCheck("intact", f"{len(files)} files match the seal", len(files), size, writer)
