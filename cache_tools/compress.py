"""Compressors that stream into a byte-counting sink (optionally tee'd to a file).

Settings mirror actions/cache, which pipes tar into the runner's ``zstd -T0``
(default level 3, with the content checksum the CLI writes by default), or
``gzip`` where zstd is absent.

Two zstd backends: the ``zstd`` CLI as a child process (what actions/cache
itself runs, so sizes and speed match it; used when the binary is on PATH) and
the ``zstandard`` library (no binary needed). A ``flush`` marks a point up to
which the output is complete, for per-folder attribution: the library ends a
block; the CLI backend ends the frame and starts a new process. A multi-frame
.tzst is still one valid archive for ``zstd -d`` and ``tar``.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import zlib
from typing import Any, BinaryIO

import zstandard

from .errors import CacheToolsError, MeasureError

ZSTD_LEVEL = 3
GZIP_LEVEL = 6
METHODS = ("zstd", "gzip")
BACKENDS = ("auto", "zstd-cli", "zstandard")
_READ = 1 << 20


class CountingSink:
    """Counts bytes written; writes them on to ``tee`` when one is given."""

    def __init__(self, tee: BinaryIO | None = None) -> None:
        self.count = 0
        self._tee = tee

    def write(self, data: bytes | memoryview) -> int:
        n = len(data)
        self.count += n
        if self._tee is not None:
            self._tee.write(data)
        return n

    def flush(self) -> None:
        if self._tee is not None:
            self._tee.flush()


def detect_method() -> str:
    """What actions/cache picks on this machine: zstd if the CLI exists, else gzip."""
    return "zstd" if shutil.which("zstd") else "gzip"


def resolve_method(method: str) -> str:
    if method == "auto":
        return detect_method()
    if method not in METHODS:
        raise CacheToolsError(f"compression {method!r} is not known; use one of auto, zstd, gzip")
    return method


def resolve_backend(method: str, backend: str = "auto") -> str:
    """The implementation that will compress: 'zstd-cli', 'zstandard' or 'zlib'."""
    if backend not in BACKENDS:
        raise CacheToolsError(
            f"compressor {backend!r} is not known; use one of {', '.join(BACKENDS)}"
        )
    if method == "gzip":
        return "zlib"
    if backend == "auto":
        return "zstd-cli" if shutil.which("zstd") else "zstandard"
    if backend == "zstd-cli" and not shutil.which("zstd"):
        raise CacheToolsError(
            "--compressor zstd-cli needs the zstd binary on PATH (apt-get install zstd); "
            "or use --compressor zstandard"
        )
    return backend


class _ZstdProcess:
    """One ``zstd -T0`` child: we write its stdin, a thread counts its stdout."""

    def __init__(self, sink: CountingSink) -> None:
        self._sink = sink
        self._proc = subprocess.Popen(
            ["zstd", "-T0", "-q", "-c"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._reader = threading.Thread(
            target=self._drain, name="cache-tools-zstd-out", daemon=True
        )
        self._reader.start()

    def _drain(self) -> None:
        assert self._proc.stdout is not None
        while chunk := self._proc.stdout.read(_READ):
            self._sink.write(chunk)

    def write(self, data: bytes | memoryview) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
        except BrokenPipeError:
            self.close()  # raises with zstd's own message

    def close(self) -> None:
        """End the frame; wait until all output is counted."""
        assert self._proc.stdin is not None and self._proc.stderr is not None
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        self._reader.join()
        err = self._proc.stderr.read().decode(errors="replace").strip()
        if self._proc.wait() != 0:
            raise MeasureError(f"zstd exited with {self._proc.returncode}: {err or 'no message'}")

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._reader.join(timeout=5)


class Compressor:
    """Uniform write / flush / finish over the zstd CLI, zstandard and zlib."""

    def __init__(self, method: str, sink: CountingSink, backend: str = "auto") -> None:
        self.method = resolve_method(method)
        self.backend = resolve_backend(self.method, backend)
        self.sink = sink
        self._proc: _ZstdProcess | None = None
        self._zw = None
        self._gz = None
        if self.backend == "zstd-cli":
            self._proc = _ZstdProcess(sink)
        elif self.backend == "zstandard":
            cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL, threads=-1, write_checksum=True)
            # zstandard's stubs want IO[bytes]; it only calls the sink's write and flush.
            self._zw = cctx.stream_writer(sink, closefd=False)  # type: ignore[arg-type]
        else:
            self._gz = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)

    def _zlib(self) -> Any:
        """The zlib compressor of the 'zlib' backend (typeshed's type for it is private)."""
        if self._gz is None:
            raise RuntimeError(f"compressor of backend {self.backend!r} has no zlib stream")
        return self._gz

    def write(self, data: bytes | memoryview) -> None:
        if self._proc is not None:
            self._proc.write(data)
        elif self._zw is not None:
            self._zw.write(data)
        else:
            out = self._zlib().compress(data)
            if out:
                self.sink.write(out)

    def flush(self) -> None:
        """Make ``sink.count`` cover everything written so far."""
        if self._proc is not None:
            self._proc.close()
            self._proc = _ZstdProcess(self.sink)
        elif self._zw is not None:
            self._zw.flush(zstandard.FLUSH_BLOCK)
        else:
            self.sink.write(self._zlib().flush(zlib.Z_SYNC_FLUSH))

    def finish(self) -> None:
        if self._proc is not None:
            proc, self._proc = self._proc, None
            proc.close()
        elif self._zw is not None:
            self._zw.flush(zstandard.FLUSH_FRAME)
            self._zw.close()
        else:
            self.sink.write(self._zlib().flush(zlib.Z_FINISH))
        self.sink.flush()

    def abort(self) -> None:
        """Stop a child process after an error elsewhere."""
        if self._proc is not None:
            self._proc.kill()
            self._proc = None
