"""Atomic file and folder replacement that survives Windows' transient sharing errors.

Every write that replaces a file goes through here: the content is written under a
private temporary name in the target's folder and moved into place. On Windows the move
fails with ``PermissionError`` while another process (a reader, a virus scanner, the
search indexer) holds the target or the source open; that clears within moments, so the
move is retried with backoff for up to ``RETRY_SECONDS``. For content-addressed targets
(``exists_ok=True``) a target that already exists is success: whoever wrote it wrote the
same content.

A written file gets the mode an ordinary ``open()`` would give it: the mode of the file it
replaces, else ``0o666`` less the process umask (``mkstemp`` alone makes every file 0600,
which locks other users out of a shared store, checkout or bundle).
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "RETRY_SECONDS",
    "atomic_write_bytes",
    "atomic_write_text",
    "current_umask",
    "make_temp_dir",
    "rename_dir",
    "replace_file",
    "sweep_stray_temps",
]

#: A temporary file of an atomic write older than this was left by a killed writer.
STRAY_AFTER_SECONDS = 600.0

#: How long a move is retried on ``PermissionError`` before it is an error.
RETRY_SECONDS = 5.0

_Sleep = Callable[[float], None]


def _retry(
    move: Callable[[], None], done: Callable[[], bool], retry_for: float, sleep: _Sleep
) -> None:
    """Run ``move``; on PermissionError retry with backoff unless ``done()`` says it is moot."""
    delay, waited = 0.01, 0.0
    while True:
        try:
            move()
            return
        except PermissionError:
            if done():
                return
            if waited >= retry_for:
                raise
        sleep(delay)
        waited += delay
        delay = min(delay * 2, 0.5)


def replace_file(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    exists_ok: bool = False,
    retry_for: float = RETRY_SECONDS,
    sleep: _Sleep = time.sleep,
) -> None:
    """``os.replace(src, dst)``, retried on PermissionError.

    With ``exists_ok`` (content-addressed targets) an existing ``dst`` counts as done and
    ``src`` is removed.
    """
    dst_path = Path(dst)

    def done() -> bool:
        if exists_ok and dst_path.is_file():
            Path(src).unlink(missing_ok=True)
            return True
        return False

    _retry(lambda: os.replace(src, dst), done, retry_for, sleep)


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux'
    /proc/self/status): setting it to read it would race with other threads' creates."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    """The mode ``open(path, "w")`` would leave: the existing file's, else 0o666 & ~umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~current_umask()


def make_temp_dir(prefix: str, parent: str | os.PathLike[str]) -> Path:
    """``mkdtemp`` in ``parent``, with the mode ``mkdir`` would give (0o777 less the umask)
    rather than 0700: it is renamed into a shared cache once complete."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    if os.name == "posix":
        tmp.chmod(0o777 & ~current_umask())
    return tmp


def sweep_stray_temps(
    path: str | os.PathLike[str], older_than: float = STRAY_AFTER_SECONDS
) -> list[Path]:
    """Removes the temporary files that atomic writes of ``path`` left behind when their
    process was killed between writing and renaming (``.NAME.*.tmp`` beside it), once
    they are older than ``older_than`` seconds (a live writer's is younger); the removed."""
    path = Path(path)
    removed = []
    cutoff = time.time() - older_than
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name[:32])}.*.tmp"))
    except OSError:
        return []
    for tmp in candidates:
        try:
            if tmp.is_file() and tmp.stat().st_mtime < cutoff:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            continue
    return removed


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes | Iterable[bytes],
    *,
    exists_ok: bool = False,
    retry_for: float = RETRY_SECONDS,
    sleep: _Sleep = time.sleep,
) -> Path:
    """Write ``data`` (bytes, or chunks of it) to ``path`` through a temporary file in
    the same folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:32]}.", suffix=".tmp", dir=path.parent)
    try:
        if os.name == "posix":
            os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as f:
            for chunk in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                f.write(chunk)
        replace_file(tmp, path, exists_ok=exists_ok, retry_for=retry_for, sleep=sleep)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str, **kwargs: object) -> Path:
    """``atomic_write_bytes`` of UTF-8 text with ``\\n`` line ends on every OS."""
    return atomic_write_bytes(path, text.encode("utf-8"), **kwargs)  # type: ignore[arg-type]


def rename_dir(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    retry_for: float = RETRY_SECONDS,
    sleep: _Sleep = time.sleep,
) -> bool:
    """Rename a finished folder into place; False if ``dst`` already exists (another
    process won the race), True if this call put it there.

    PermissionError is retried while ``dst`` does not exist (Windows: a scanner holds a
    file inside ``src``); any other error propagates.
    """
    dst_path = Path(dst)
    if dst_path.exists():
        return False
    try:
        _retry(lambda: os.rename(src, dst), dst_path.exists, retry_for, sleep)
    except OSError:
        if dst_path.exists():
            return False
        raise
    # _retry also returns when dst appeared meanwhile; then src is still there.
    return not Path(src).exists()


def link_or_copy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> bool:
    """Hard-links source at target; copies it where a link cannot be made (another file
    system). True: linked."""
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
        return True
    except OSError:
        shutil.copy2(source, target)
        return False
