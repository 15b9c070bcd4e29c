"""Write a POSIX (pax) tar stream like ``tar --posix -cf -`` into any sink.

Headers are encoded by :class:`tarfile.TarInfo`; contents are copied in large
chunks straight from the file into the sink, so nothing is buffered whole.
GNU tar's ``--posix`` adds an extended header with mtime/atime/ctime to every
member; we do the same so the stream has the same shape and size.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Callable
from typing import Any, Protocol

from .errors import MeasureError
from .walk import Member

# Owner name lookups (uid -> user name, gid -> group name). The pwd and grp modules
# exist on Unix only; on Windows (or wherever they are missing) the lookups are None
# and tar headers carry empty uname/gname, as tar on Windows writes them.
_getpwuid: Callable[[int], Any] | None
_getgrgid: Callable[[int], Any] | None
try:
    from pwd import getpwuid as _getpwuid
except ImportError:  # Windows
    _getpwuid = None
try:
    from grp import getgrgid as _getgrgid
except ImportError:  # Windows
    _getgrgid = None

BLOCK = tarfile.BLOCKSIZE  # 512
RECORD = tarfile.RECORDSIZE  # 10240, GNU tar's default blocking factor 20
CHUNK = 1 << 20
_ZEROS = bytes(RECORD)


class Sink(Protocol):
    def write(self, data: bytes | memoryview, /) -> object: ...


def _open_for_read(path: str) -> io.RawIOBase:
    """Open a member for reading; a seam tests use to simulate unreadable files."""
    return open(path, "rb", buffering=0)


def _timestamp(ns: int) -> str:
    sec, frac = divmod(ns, 1_000_000_000)
    return f"{sec}.{frac:09d}"


class _Names:
    """uid/gid -> name lookups, cached (tar stores names, pwd lookups are slow)."""

    def __init__(self) -> None:
        self._users: dict[int, str] = {}
        self._groups: dict[int, str] = {}

    def user(self, uid: int) -> str:
        if uid not in self._users:
            self._users[uid] = _lookup(_getpwuid, uid, "pw_name")
        return self._users[uid]

    def group(self, gid: int) -> str:
        if gid not in self._groups:
            self._groups[gid] = _lookup(_getgrgid, gid, "gr_name")
        return self._groups[gid]


def _lookup(func: Callable[[int], Any] | None, ident: int, field: str) -> str:
    """A name from pwd/grp; "" without the module (Windows) or for an unknown id."""
    if func is None:
        return ""
    try:
        return str(getattr(func(ident), field))
    except (KeyError, OverflowError):
        return ""


class TarStreamWriter:
    """Append members to a tar stream; call :meth:`close` to write the end marker."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._names = _Names()
        self._inodes: dict[tuple[int, int], str] = {}
        self._buf = bytearray(CHUNK)
        self.offset = 0  # uncompressed bytes written
        self.warnings: list[str] = []

    def _write(self, data: bytes | memoryview) -> None:
        self._sink.write(data)
        self.offset += len(data)

    def _tarinfo(self, member: Member) -> tarfile.TarInfo:
        st = member.st
        info = tarfile.TarInfo(member.arcname)
        info.mode = stat.S_IMODE(st.st_mode)
        info.uid, info.gid = st.st_uid, st.st_gid
        info.uname, info.gname = self._names.user(st.st_uid), self._names.group(st.st_gid)
        info.mtime = int(st.st_mtime)
        info.pax_headers = {
            "mtime": _timestamp(st.st_mtime_ns),
            "atime": _timestamp(st.st_atime_ns),
            "ctime": _timestamp(st.st_ctime_ns),
        }
        mode = st.st_mode
        if stat.S_ISREG(mode):
            key = (st.st_dev, st.st_ino)
            if st.st_nlink > 1 and key in self._inodes:
                info.type = tarfile.LNKTYPE
                info.linkname = self._inodes[key]
            else:
                if st.st_nlink > 1:
                    self._inodes[key] = member.arcname
                info.type = tarfile.REGTYPE
                info.size = st.st_size
        elif stat.S_ISDIR(mode):
            info.type = tarfile.DIRTYPE
        elif stat.S_ISLNK(mode):
            info.type = tarfile.SYMTYPE
            try:
                info.linkname = os.readlink(member.path)
            except OSError as exc:
                raise MeasureError(f"cannot read symlink {member.path!r}: {exc.strerror}") from None
        elif stat.S_ISFIFO(mode):
            info.type = tarfile.FIFOTYPE
        elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            info.type = tarfile.CHRTYPE if stat.S_ISCHR(mode) else tarfile.BLKTYPE
            info.devmajor, info.devminor = os.major(st.st_rdev), os.minor(st.st_rdev)
        return info

    def add(self, member: Member, on_data: Callable[[memoryview], None] | None = None) -> int:
        """Write one member; returns the content bytes stored (0 for non-files)."""
        info = self._tarinfo(member)
        self._write(info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
        if info.type != tarfile.REGTYPE or info.size == 0:
            return 0
        return self._copy(member.path, info.size, on_data)

    def _copy(self, path: str, size: int, on_data: Callable[[memoryview], None] | None) -> int:
        view = memoryview(self._buf)
        remaining = size
        try:
            with _open_for_read(path) as fh:
                while remaining:
                    n = fh.readinto(view[: min(CHUNK, remaining)])
                    if not n:
                        break
                    chunk = view[:n]
                    if on_data is not None:
                        on_data(chunk)
                    self._write(chunk)
                    remaining -= n
        except PermissionError:
            raise MeasureError(
                f"file {path!r} is not readable (permission denied); "
                "fix its permissions or leave it out of the cache paths"
            ) from None
        except OSError as exc:
            raise MeasureError(f"cannot read file {path!r}: {exc.strerror}") from None
        if remaining:
            # GNU tar pads a file that shrank while being read with zeros and warns.
            self.warnings.append(f"{path}: file shrank by {remaining} bytes while being read")
            while remaining:
                pad = min(remaining, RECORD)
                self._write(_ZEROS[:pad])
                remaining -= pad
        tail = size % BLOCK
        if tail:
            self._write(_ZEROS[: BLOCK - tail])
        return size

    def close(self) -> None:
        """End-of-archive: two zero blocks, then pad to a whole record like GNU tar."""
        self._write(_ZEROS[: 2 * BLOCK])
        tail = self.offset % RECORD
        if tail:
            self._write(_ZEROS[: RECORD - tail])
