"""Safe unpacking of Model Zoo tarballs and discovery of their test data sets.

A ``model_with_data_path`` tarball holds the model and ``test_data_set_N`` folders with
real inputs and expected outputs, e.g. ``mnist-12/model.onnx`` and
``mnist-12/test_data_set_0/input_0.pb``. Archives come from the network, so every
member is checked before anything is written: no absolute names, no ``..`` parts, no
links that resolve outside the target, no device files. tarfile's own ``"data"``
filter (Python >= 3.12 and recent 3.10/3.11 patch releases) is applied on top where
available. The archive is unpacked into a temporary folder and renamed into place, so
an unpacked folder that exists is complete.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from iree_conformance.common.fsutil import make_temp_dir, rename_dir

__all__ = ["ArchiveError", "ModelData", "check_members", "find_model_data", "safe_extract"]

_DATA_SET = re.compile(r"^test_data_set_(\d+)$")


def _data_set_index(path: Path) -> int:
    """N of a test_data_set_N folder (the caller kept only names _DATA_SET matches)."""
    m = _DATA_SET.match(path.name)
    assert m is not None
    return int(m.group(1))


class ArchiveError(Exception):
    """The archive is unreadable, unsafe, or holds no model."""


def _escapes(name: str) -> bool:
    """Whether a member path is absolute or climbs out of the extraction folder."""
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return True
    normalized = posixpath.normpath(name.replace("\\", "/"))
    return normalized == ".." or normalized.startswith("../")


def check_members(archive: Path, members: list[tarfile.TarInfo]) -> None:
    """Raise ``ArchiveError`` naming the first member that is unsafe to extract."""
    for m in members:
        if _escapes(m.name):
            raise ArchiveError(f"{archive}: member {m.name!r} would be written outside the target")
        if m.issym() or m.islnk():
            # A symlink resolves relative to its own folder, a hard link to the root.
            base = posixpath.dirname(m.name) if m.issym() else ""
            target = posixpath.join(base, m.linkname)
            if m.linkname.startswith("/") or _escapes(target):
                raise ArchiveError(
                    f"{archive}: link {m.name!r} -> {m.linkname!r} points outside the target"
                )
        elif not (m.isfile() or m.isdir()):
            raise ArchiveError(
                f"{archive}: member {m.name!r} is a device, fifo or other special file"
            )


def safe_extract(archive: Path, dest: Path) -> Path:
    """Unpack ``archive`` into ``dest`` (created atomically); return ``dest``.

    If ``dest`` already exists it is taken as a complete earlier unpacking.
    """
    archive, dest = Path(archive), Path(dest)
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(f".{dest.name}.tmp-", dest.parent)
    try:
        try:
            with tarfile.open(archive, "r:*") as tar:
                members = tar.getmembers()
                check_members(archive, members)
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(tmp, members=members, filter="data")
                else:  # pragma: no cover - older Pythons; members were checked above
                    tar.extractall(tmp, members=members)
        except (tarfile.TarError, EOFError, OSError) as e:
            raise ArchiveError(f"{archive}: cannot unpack ({e})") from e
        # False: another process unpacked the same archive first; keep the winner's.
        rename_dir(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


@dataclass(frozen=True)
class ModelData:
    """The model file of an unpacked archive and its data set folders, in order."""

    model_path: Path
    data_set_dirs: tuple[Path, ...]


def find_model_data(root: Path, preferred_stem: str | None = None) -> ModelData:
    """Find the ``.onnx`` model and the ``test_data_set_N`` folders under ``root``.

    With several models, one named ``preferred_stem`` + ".onnx" wins, then
    ``model.onnx``; data sets are those next to the chosen model, else anywhere.
    """
    root = Path(root)
    models = sorted(p for p in root.rglob("*.onnx") if p.is_file())
    if not models:
        raise ArchiveError(f"{root}: the unpacked archive holds no .onnx model")
    chosen = models[0]
    if len(models) > 1:
        by_name = {p.name: p for p in models}
        chosen = by_name.get(f"{preferred_stem}.onnx") or by_name.get("model.onnx") or models[0]
    data_sets = [p for p in root.rglob("test_data_set_*") if p.is_dir() and _DATA_SET.match(p.name)]
    beside = [p for p in data_sets if p.parent == chosen.parent]
    chosen_sets = beside or data_sets
    chosen_sets.sort(key=lambda p: (str(p.parent), _data_set_index(p)))
    return ModelData(chosen, tuple(chosen_sets))
