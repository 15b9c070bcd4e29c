"""Verified, resumable downloads into a cache folder.

A file is streamed into a private temporary file next to its destination, resumed with
an HTTP ``Range`` request when the connection breaks, retried with exponential backoff
on 5xx answers and timeouts (a bounded number of times), checked against the expected
sha256 and size, and only then moved into place with ``os.replace``. Whatever fails,
the temporary file is deleted, so the cache only ever holds verified files.

When no host can be reached (``offline=True``, or every attempt failed to even open a
connection) the download raises ``DownloadSkipped`` with a reason, so that callers
mark the case skipped rather than failed.

A URL may also be a local path or a ``file://`` URL (a mirror on disk); it is copied
and verified the same way.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import requests
import urllib3.exceptions

from iree_conformance.common.fsutil import replace_file
from iree_conformance.frontends.onnx.progress import NullProgress, Progress, make_progress
from iree_conformance.frontends.onnx.stale import STALE_AFTER, remove_stale

__all__ = [
    "DownloadError",
    "DownloadSkipped",
    "Downloader",
    "ADOPT_AFTER",
    "RetryPolicy",
    "adopt_partial",
    "file_digest",
    "is_partial_name",
    "sweep_partials",
]

_CHUNK = 1 << 20
_PARTIAL_MARK = ".part-"
_CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")
_TRANSIENT_STATUS = {408, 429}


class DownloadError(Exception):
    """A download failed for good: HTTP error, bad content, or retries exhausted."""

    def __init__(self, url: str, message: str):
        super().__init__(f"{url}: {message}")
        self.url = url


class DownloadSkipped(Exception):
    """No download was possible here (offline); the case should be skipped."""

    def __init__(self, url: str, reason: str):
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts per file; the wait before attempt n+1 is min(backoff * 2**(n-1), max_backoff).

    ``connect_attempts`` bounds attempts that could not open a connection at all, so an
    offline machine gives up quickly.
    """

    attempts: int = 5
    backoff: float = 1.0
    max_backoff: float = 30.0
    connect_attempts: int = 2

    def delay(self, attempt: int) -> float:
        return min(self.backoff * (2 ** (attempt - 1)), self.max_backoff)


def is_partial_name(name: str) -> bool:
    """Whether a cache file name is a download still in progress (or abandoned)."""
    return _PARTIAL_MARK in name


#: A partial download untouched for this long belongs to no live download (a live one
#: writes a chunk at least every read timeout), so a new fetch may resume from it.
ADOPT_AFTER = 120.0


def adopt_partial(dest: Path, partial: Path, idle: float = ADOPT_AFTER) -> int:
    """Takes over the largest abandoned partial download of ``dest`` (left by a process
    killed mid-download, untouched for ``idle`` seconds) by renaming it to ``partial``,
    so the download resumes from its bytes; returns how many bytes it holds (0: none).
    The rename is atomic: of two processes that try, one gets it. What it holds is
    verified like any download (sha256 and size) before it is used."""
    cutoff = time.time() - idle
    candidates = []
    for path in dest.parent.glob(f".{dest.name}{_PARTIAL_MARK}*"):
        try:
            stat = path.stat()
        except OSError:
            continue
        if is_partial_name(path.name) and path.is_file() and stat.st_mtime < cutoff:
            candidates.append((stat.st_size, path))
    for size, path in sorted(candidates, reverse=True):
        try:
            path.rename(partial)
        except OSError:
            continue  # another process took it first
        return size
    return 0


def sweep_partials(folder: Path, max_age: float = STALE_AFTER) -> list[Path]:
    """Deletes abandoned partial downloads anywhere under ``folder`` (a cache), also
    those of files that are never fetched again."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for sub in {p.parent for p in folder.rglob(f".*{_PARTIAL_MARK}*") if is_partial_name(p.name)}:
        removed += remove_stale(sub, f".*{_PARTIAL_MARK}*", max_age)
    return removed


def file_digest(path: Path) -> tuple[str, int]:
    """sha256 hex digest and size of a file."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


class _Transient(Exception):
    """An attempt failed in a way that a later attempt may not."""


class _Unreachable(_Transient):
    """The attempt could not open a connection at all."""


def _unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or what it wraps) means no connection could be opened."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(
            e,
            (
                urllib3.exceptions.NewConnectionError,
                urllib3.exceptions.ConnectTimeoutError,
                requests.ConnectTimeout,
            ),
        ):
            return True
        if isinstance(e, urllib3.exceptions.MaxRetryError):
            todo.append(e.reason)
        todo.extend(a for a in getattr(e, "args", ()) if isinstance(a, BaseException))
        todo.extend([e.__cause__, e.__context__])
    return False


def _local_path(url: str, url2pathname: Callable[[str], str] = url2pathname) -> Path | None:
    """The local file a ``file://`` URL or a plain path names; None for other URLs.

    ``url2pathname`` is the OS's own conversion (on Windows ``file:///C:/x`` is
    ``C:\\x``, not ``/C:/x``); tests pass ``nturl2path.url2pathname`` to check that.
    """
    if url.startswith("file://"):
        parsed = urlparse(url)
        path = parsed.path
        if parsed.netloc and parsed.netloc != "localhost":
            path = f"//{parsed.netloc}{path}"  # a UNC share: file://server/share/x
        return Path(url2pathname(path))
    if "://" not in url:
        return Path(url)
    return None


class Downloader:
    """Downloads files into a cache, verified by sha256 and size."""

    def __init__(
        self,
        *,
        session: requests.Session | None = None,
        retry: RetryPolicy = RetryPolicy(),
        timeout: tuple[float, float] = (15.0, 60.0),
        offline: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        progress: Callable[[], Progress] | None = None,
    ):
        """``timeout`` is (connect, read) seconds; ``sleep`` and ``progress`` are
        injectable for tests (``progress`` makes one reporter per download)."""
        self.session = session or requests.Session()
        self.retry = retry
        self.timeout = timeout
        self.offline = offline
        self.sleep = sleep
        self.progress = progress or make_progress

    def fetch(self, url: str, dest: Path, *, sha256: str, size: int) -> Path:
        """Make ``dest`` hold the verified file: keep it if already there, else download."""
        dest = Path(dest)
        if dest.is_file() and dest.stat().st_size == size:
            # Only verified files ever get this name (see module docstring).
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(dest.parent, f".{dest.name}{_PARTIAL_MARK}*")
        partial = dest.parent / f".{dest.name}{_PARTIAL_MARK}{uuid.uuid4().hex[:12]}"
        local = _local_path(url)
        adopted = 0
        if local is None and not self.offline:
            adopted = adopt_partial(dest, partial)  # a killed run's bytes: resumed with Range
        reporter: Progress = NullProgress()
        ok = False
        try:
            if local is not None:
                self._copy_local(local, partial, url)
            elif self.offline:
                raise DownloadSkipped(url, "offline")
            else:
                reporter = self.progress()
                self._download(url, partial, size, reporter, dest.name)
            try:
                self._verify(url, partial, sha256, size)
            except DownloadError:
                if not adopted:
                    raise
                # The killed run's bytes were not a prefix of this file: start over once.
                partial.unlink(missing_ok=True)
                self._download(url, partial, size, reporter, dest.name)
                self._verify(url, partial, sha256, size)
            replace_file(partial, dest, exists_ok=True)  # only verified files get this name
            ok = True
            return dest
        finally:
            reporter.finish(ok)
            if not ok:
                partial.unlink(missing_ok=True)

    # -- sources -------------------------------------------------------------------

    @staticmethod
    def _copy_local(source: Path, partial: Path, url: str) -> None:
        try:
            shutil.copyfile(source, partial)
        except OSError as e:
            raise DownloadError(url, f"cannot copy from the local mirror: {e}") from e

    def _download(self, url: str, partial: Path, size: int, reporter: Progress, label: str) -> None:
        attempt = connect_failures = 0
        last: Exception | None = None
        while attempt < self.retry.attempts:
            attempt += 1
            try:
                self._attempt(url, partial, size, reporter, label)
                return
            except _Unreachable as e:
                last = e
                connect_failures += 1
                if connect_failures >= self.retry.connect_attempts:
                    raise DownloadSkipped(url, f"offline: cannot connect ({e})") from e
            except _Transient as e:
                last = e
            if attempt < self.retry.attempts:
                self.sleep(self.retry.delay(attempt))
        raise DownloadError(url, f"gave up after {attempt} attempts; last error: {last}")

    def _attempt(self, url: str, partial: Path, size: int, reporter: Progress, label: str) -> None:
        offset = partial.stat().st_size if partial.exists() else 0
        headers = {"Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        try:
            response = self.session.get(url, headers=headers, stream=True, timeout=self.timeout)
        except requests.RequestException as e:
            if _unreachable(e):
                raise _Unreachable(str(e)) from e
            if isinstance(e, (requests.ConnectionError, requests.Timeout)):
                raise _Transient(f"{type(e).__name__}: {e}") from e
            raise DownloadError(url, f"request failed: {e}") from e
        with response:
            status = response.status_code
            if status >= 500 or status in _TRANSIENT_STATUS:
                raise _Transient(f"HTTP {status}")
            if status == 416:
                partial.unlink(missing_ok=True)  # our partial is not a prefix: restart
                raise _Transient("HTTP 416 for a resumed range; restarting from byte 0")
            if status == 206 and offset:
                match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
                if not match or int(match.group(1)) != offset:
                    partial.unlink(missing_ok=True)
                    raise _Transient(
                        f"server answered a range from byte {offset} with Content-Range "
                        f"{response.headers.get('Content-Range')!r}; restarting from byte 0"
                    )
                mode = "ab"
            elif status in (200, 206):
                offset, mode = 0, "wb"  # a 200 to a Range request: the server restarts
            else:
                raise DownloadError(url, f"HTTP {status} {response.reason or ''}".rstrip())
            reporter.start(label, size, offset)
            self._stream(url, response, partial, mode, offset, size, reporter)

    @staticmethod
    def _stream(
        url: str,
        response: requests.Response,
        partial: Path,
        mode: str,
        offset: int,
        size: int,
        reporter: Progress,
    ) -> None:
        done = offset
        try:
            with open(partial, mode) as f:
                # raw, undecoded bytes: a server's Content-Encoding must not alter the file.
                for chunk in response.raw.stream(_CHUNK, decode_content=False):
                    f.write(chunk)
                    done += len(chunk)
                    if done > size:
                        raise DownloadError(
                            url, f"served more than the expected {size} bytes; wrong file?"
                        )
                    reporter.update(done)
        except (
            urllib3.exceptions.HTTPError,
            requests.RequestException,
            ConnectionError,
            TimeoutError,
        ) as e:
            raise _Transient(f"connection broken after {done} bytes: {e}") from e

    @staticmethod
    def _verify(url: str, partial: Path, sha256: str, size: int) -> None:
        got_sha, got_size = file_digest(partial)
        if got_size != size or got_sha != sha256.lower():
            raise DownloadError(
                url,
                f"content does not match the manifest: served {got_size} bytes with sha256 "
                f"{got_sha}, expected {size} bytes with sha256 {sha256.lower()}",
            )
