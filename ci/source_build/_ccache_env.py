"""ccache's settings for hits that survive a new checkout and a new runner, its stats,
and the remote store (URL without secrets in config, credentials from the environment).

Settings (as CCACHE_* variables, so nothing is written into the saved folder):

  CCACHE_DIR            the folder saved in the llvm-mlir cache class
  CCACHE_TEMPDIR        beside it, never inside: nothing half-written is saved
  CCACHE_BASEDIR        the common parent of the source and build folders: absolute paths
                        under it are hashed relative to the build folder, so a checkout
                        elsewhere (another runner, a moved folder) hits
  CCACHE_NOHASHDIR      hash_dir off: the working directory is not hashed (debug info)
  CCACHE_COMPILERCHECK  content: the compiler is known by its bytes, not its mtime,
                        which a fresh runner image or a new install always changes
  CCACHE_SLOPPINESS     time_macros: __DATE__/__TIME__ do not stop a hit
  CCACHE_COMPRESS(LEVEL) zstd at [ccache] compress_level of pins.toml
  CCACHE_MAXSIZE        from the class budget (ccache_budget.py)
  CCACHE_REMOTE_STORAGE only in the build's own environment (it may hold a password)
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

REMOTE_SCHEMES = ("redis", "http")
SLOPPINESS = "time_macros"


@dataclass(frozen=True)
class Settings:
    ccache_dir: Path
    base_dir: Path
    max_size: str
    compress_level: int = 5

    def env(self) -> dict[str, str]:
        return {
            "CCACHE_DIR": str(self.ccache_dir),
            "CCACHE_TEMPDIR": str(temp_dir(self.ccache_dir)),
            "CCACHE_BASEDIR": str(self.base_dir),
            "CCACHE_NOHASHDIR": "1",
            "CCACHE_COMPILERCHECK": "content",
            "CCACHE_SLOPPINESS": SLOPPINESS,
            "CCACHE_COMPRESS": "1",
            "CCACHE_COMPRESSLEVEL": str(self.compress_level),
            "CCACHE_MAXSIZE": self.max_size,
        }


def temp_dir(ccache_dir: Path) -> Path:
    return ccache_dir.with_name(ccache_dir.name + ".tmp")


def base_dir_for(source: Path, build: Path) -> Path:
    """The common parent of the source and build folders (ccache's base_dir)."""
    return Path(os.path.commonpath([source.resolve(), build.resolve()]))


# -- remote store ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Remote:
    """A remote store URL as configured (no credentials) and the password to add to it."""

    url: str
    password: str = ""

    def check(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in REMOTE_SCHEMES:
            raise ValueError(
                f"remote store {self.redacted()}: use redis://HOST[:PORT] or http://HOST[:PORT]/PATH"
            )
        if parts.password:
            raise ValueError(
                "remote store URL carries credentials: give them as a secret "
                "(LLVM_MLIR_REMOTE_PASSWORD), never in the URL, a workflow input or config"
            )
        if not parts.hostname:
            raise ValueError(f"remote store {self.redacted()}: no host")

    def endpoint(self) -> tuple[str, int]:
        parts = urlsplit(self.url)
        default = 6379 if parts.scheme == "redis" else 80
        return parts.hostname or "", parts.port or default

    def with_credentials(self) -> str:
        """The URL ccache gets: redis://[USER:]PASSWORD@HOST[:PORT], http://USER:PASSWORD@HOST
        (a user name may be in the configured URL, a password never); never print it."""
        if not self.password:
            return self.url
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        secret = quote(self.password, safe="")
        auth = f"{parts.username}:{secret}" if parts.username else secret
        netloc = f"{auth}@{host}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def redacted(self) -> str:
        parts = urlsplit(self.url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
        auth = "***@" if self.password or parts.password else ""
        return urlunsplit((parts.scheme, f"{auth}{host}{port}", parts.path, "", ""))


def reachable(remote: Remote, timeout: float = 3.0) -> str | None:
    """None when a TCP connection to the store opens, else why not."""
    host, port = remote.endpoint()
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"


# -- statistics -----------------------------------------------------------------------------


def print_stats(ccache: str, env: dict[str, str]) -> dict[str, int]:
    """`ccache --print-stats` as {counter: value}."""
    out = subprocess.run(
        [ccache, "--print-stats"], env=env, capture_output=True, text=True, check=True
    ).stdout
    stats: dict[str, int] = {}
    for line in out.splitlines():
        name, _, value = line.partition("\t")
        if value.strip().lstrip("-").isdigit():
            stats[name.strip()] = int(value)
    return stats


@dataclass(frozen=True)
class HitCounts:
    direct: int
    preprocessed: int
    misses: int
    remote_hits: int
    remote_errors: int

    @property
    def hits(self) -> int:
        return self.direct + self.preprocessed

    @property
    def objects(self) -> int:
        """Cacheable compilations (hits and misses)."""
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.objects if self.objects else 0.0

    @property
    def remote_hit_rate(self) -> float:
        return self.remote_hits / self.objects if self.objects else 0.0

    def to_json(self) -> dict[str, int | float]:
        return {
            "objects": self.objects,
            "hits": self.hits,
            "direct_hits": self.direct,
            "preprocessed_hits": self.preprocessed,
            "misses": self.misses,
            "hit_rate": round(self.hit_rate, 4),
            "remote_hits": self.remote_hits,
            "remote_hit_rate": round(self.remote_hit_rate, 4),
            "remote_errors": self.remote_errors,
        }


def hit_counts(stats: dict[str, int]) -> HitCounts:
    return HitCounts(
        direct=stats.get("direct_cache_hit", 0),
        preprocessed=stats.get("preprocessed_cache_hit", 0),
        misses=stats.get("cache_miss", 0),
        remote_hits=stats.get("remote_storage_hit", 0),
        remote_errors=stats.get("remote_storage_error", 0) + stats.get("remote_storage_timeout", 0),
    )
