"""Measure what actions/cache would upload: files, raw bytes, compressed bytes.

The tar stream is generated and compressed on the fly; only a byte count (and,
with ``keep_archive``, a file) comes out the other end.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import queue
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .compress import Compressor, CountingSink, resolve_method
from .errors import MeasureError
from .tarstream import TarStreamWriter
from .walk import Member, collect_members

# Compressed bytes are attributed to top-level folders by flushing the
# compressor at a folder boundary once this much tar stream has passed since the
# last flush, and around any folder at least this big; folders within one
# segment share its output in proportion to their tar bytes. A flush stalls zstd's workers briefly, so flushing at every
# small folder would cost throughput; large folders (models, build subtrees)
# get exact numbers. zstd's own progress counters cannot be used instead: its
# jobs finish out of order, so they do not map an input prefix to an output prefix.
ATTRIBUTION_INTERVAL = 64 << 20
QUEUE_ITEMS = 4  # chunks of up to 1 MiB read ahead of the compressor


@dataclass
class GroupStats:
    """A top-level contributor (a child folder of a measured directory)."""

    name: str
    files: int = 0
    raw_bytes: int = 0
    compressed_bytes: int | None = None  # attributed share of the compressed output
    content_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "files": self.files,
            "raw_bytes": self.raw_bytes,
            "compressed_bytes": self.compressed_bytes,
            "content_hash": self.content_hash,
        }


@dataclass
class MeasureResult:
    paths: list[str]
    compression: str
    compressor: str = ""  # zstd-cli, zstandard or zlib
    files: int = 0
    raw_bytes: int = 0  # sum of regular file sizes
    tar_bytes: int = 0  # uncompressed tar stream length
    compressed_bytes: int = 0
    seconds: float = 0.0
    groups: list[GroupStats] = field(default_factory=list)
    largest_files: list[tuple[str, int]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    archive: str | None = None

    @property
    def ratio(self) -> float:
        return self.compressed_bytes / self.tar_bytes if self.tar_bytes else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.tar_bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        groups = sorted(self.groups, key=lambda g: (-g.raw_bytes, g.name))
        return {
            "paths": self.paths,
            "compression": self.compression,
            "compressor": self.compressor,
            "files": self.files,
            "raw_bytes": self.raw_bytes,
            "tar_bytes": self.tar_bytes,
            "compressed_bytes": self.compressed_bytes,
            "ratio": round(self.ratio, 4),
            "seconds": round(self.seconds, 3),
            "mb_per_s": round(self.mb_per_s, 1),
            "top_folders": [g.to_dict() for g in groups[:top]],
            "largest_files": [{"path": p, "bytes": b} for p, b in self.largest_files[:top]],
            "warnings": self.warnings,
            "archive": self.archive,
        }


def _hash_member_header(h: Any, member: Member) -> None:
    # Names and contents only (no times, owners): a re-download of identical
    # models must give the same hash so unchanged shards are not re-saved.
    kind = "f" if member.is_file else "d" if member.is_dir else "o"
    h.update(f"{kind}\0{member.arcname}\0".encode("utf-8", "surrogateescape"))
    if not member.is_file and not member.is_dir:
        try:
            h.update(os.readlink(member.path).encode("utf-8", "surrogateescape"))
        except OSError:
            pass


class _Cancelled(Exception):
    """The consumer stopped; the producer thread should stop too."""


class _QueueSink:
    """Tar stream -> queue, batching small writes (headers) into larger items."""

    BATCH = 256 << 10

    def __init__(self, q: queue.Queue, cancelled: threading.Event) -> None:
        self._q = q
        self._cancelled = cancelled
        self._pending = bytearray()

    def _put(self, item: Any) -> None:
        while True:
            if self._cancelled.is_set():
                raise _Cancelled
            try:
                self._q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def write(self, data: bytes | memoryview) -> int:
        n = len(data)
        if n >= self.BATCH:
            self.flush()
            self._put(bytes(data))  # the tar writer reuses its buffer: copy
        else:
            self._pending += data
            if len(self._pending) >= self.BATCH:
                self.flush()
        return n

    def flush(self) -> None:
        if self._pending:
            self._put(bytes(self._pending))
            self._pending.clear()

    def mark(self, marker: tuple) -> None:
        self.flush()
        self._put(marker)


class _Producer:
    """Runs in its own thread: walks, reads and tars members, feeding the queue.

    Reading ahead while zstd's workers compress keeps them busy when files
    come from disk, like tar does in ``tar | zstd``.
    """

    def __init__(
        self, members: list[Member], sink: _QueueSink, hash_groups: bool, top: int, interval: int
    ) -> None:
        self.members = members
        self.sink = sink
        self.hash_groups = hash_groups
        self.top = top
        self.interval = interval
        self.tar = TarStreamWriter(sink)
        self.groups: dict[str, GroupStats] = {}
        self.files = 0
        self.raw_bytes = 0
        self.largest: list[tuple[int, str]] = []

    def run(self) -> None:
        try:
            self._run()
        except _Cancelled:
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer to raise
            try:
                self.sink.mark(("error", exc))
            except _Cancelled:
                pass

    def _run(self) -> None:
        planned: dict[str, int] = {}  # file bytes per group, known from stat before reading
        for m in self.members:
            planned[m.group] = planned.get(m.group, 0) + (m.st.st_size if m.is_file else 0)
        tar = self.tar
        segment_start = 0
        shares: dict[str, int] = {}
        current: str | None = None
        hasher: Any = None
        for member in self.members:
            if member.group != current:
                if current is not None:
                    if hasher is not None:
                        self.groups[current].content_hash = hasher.hexdigest()
                    big = max(planned[current], planned[member.group]) >= self.interval
                    if big or tar.offset - segment_start >= self.interval:
                        self.sink.mark(("segment", shares))
                        segment_start, shares = tar.offset, {}
                current = member.group
                self.groups.setdefault(current, GroupStats(current))
                hasher = hashlib.sha256() if self.hash_groups else None
            if hasher is not None:
                _hash_member_header(hasher, member)
            begin = tar.offset
            size = tar.add(member, hasher.update if hasher is not None else None)
            shares[current] = shares.get(current, 0) + tar.offset - begin
            if member.is_file:
                g = self.groups[current]
                g.files += 1
                g.raw_bytes += size
                self.files += 1
                self.raw_bytes += size
                if len(self.largest) < self.top:
                    heapq.heappush(self.largest, (size, member.arcname))
                elif size > self.largest[0][0]:
                    heapq.heapreplace(self.largest, (size, member.arcname))
        if hasher is not None and current is not None:
            self.groups[current].content_hash = hasher.hexdigest()
        tar.close()
        self.sink.mark(("done", shares))


def _share_out(out: int, shares: dict[str, int], into: dict[str, int]) -> None:
    """Split ``out`` compressed bytes over groups by their tar bytes, exactly."""
    total = sum(shares.values())
    cumulative = given = 0
    for name, part in shares.items():
        cumulative += part  # cumulative rounding: the parts add up to exactly ``out``
        share = out * cumulative // total - given if total else 0
        given += share
        into[name] = into.get(name, 0) + share


def measure_members(
    members: list[Member],
    compression: str = "zstd",
    keep_archive: str | None = None,
    top: int = 10,
    hash_groups: bool = False,
    paths: Iterable[str] = (),
    attribution_interval: int = ATTRIBUTION_INTERVAL,
    compressor: str = "auto",
) -> MeasureResult:
    """Stream ``members`` through tar and the compressor, counting bytes.

    A producer thread generates the tar stream; this thread compresses it.
    """
    method = resolve_method(compression)
    result = MeasureResult(paths=list(paths), compression=method, archive=keep_archive)
    tee = None
    if keep_archive:
        try:
            tee = open(keep_archive, "wb")  # noqa: SIM115 - closed in finally
        except OSError as exc:
            raise MeasureError(
                f"cannot write --keep-archive {keep_archive!r}: {exc.strerror}"
            ) from None
    start = time.perf_counter()
    q: queue.Queue = queue.Queue(maxsize=QUEUE_ITEMS)
    cancelled = threading.Event()
    producer = _Producer(members, _QueueSink(q, cancelled), hash_groups, top, attribution_interval)
    thread = threading.Thread(target=producer.run, name="cache-tools-tar", daemon=True)
    compressed: dict[str, int] = {}
    comp: Compressor | None = None
    try:
        sink = CountingSink(tee)
        comp = Compressor(method, sink, compressor)
        result.compressor = comp.backend
        thread.start()
        segment_out = 0
        while True:
            item = q.get()
            if isinstance(item, bytes):
                comp.write(item)
                continue
            kind, payload = item
            if kind == "error":
                raise payload
            if kind == "segment":
                comp.flush()
                _share_out(sink.count - segment_out, payload, compressed)
                segment_out = sink.count
                continue
            comp.finish()
            _share_out(sink.count - segment_out, payload, compressed)
            comp = None
            break
    finally:
        cancelled.set()
        if comp is not None:
            comp.abort()
        if thread.ident is not None:  # started
            thread.join()
        if tee is not None:
            tee.close()
    result.seconds = time.perf_counter() - start
    result.files, result.raw_bytes = producer.files, producer.raw_bytes
    result.tar_bytes = producer.tar.offset
    result.compressed_bytes = sink.count
    for name, g in producer.groups.items():
        g.compressed_bytes = compressed.get(name, 0)
    result.groups = list(producer.groups.values())
    result.largest_files = [(name, size) for size, name in sorted(producer.largest, reverse=True)]
    result.warnings = producer.tar.warnings
    return result


def measure_paths(
    patterns: Iterable[str],
    compression: str = "zstd",
    keep_archive: str | None = None,
    top: int = 10,
    hash_groups: bool = False,
    cwd: str | None = None,
    attribution_interval: int = ATTRIBUTION_INTERVAL,
    compressor: str = "auto",
) -> MeasureResult:
    """Measure the given ``path:`` lines (globs and ``~`` allowed)."""
    patterns = list(patterns)
    members = collect_members(patterns, cwd)
    return measure_members(
        members,
        compression,
        keep_archive,
        top,
        hash_groups,
        patterns,
        attribution_interval,
        compressor,
    )
