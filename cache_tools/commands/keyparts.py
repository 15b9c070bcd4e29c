"""Key-building arguments shared by ``key`` and ``plan``."""

from __future__ import annotations

import argparse

from ..cache_version import COMPRESSION_METHODS, cache_version, detect_compression
from ..config import Config
from ..errors import KeyRuleError
from ..hashing import hash_files, short_digest
from ..keys import KeyParts
from .common import Context, runner_arch, runner_os


def add_key_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("key parts")
    g.add_argument("--os", help="runner OS part, e.g. Linux (default $RUNNER_OS or this machine's)")
    g.add_argument(
        "--arch", help="architecture part, e.g. X64 (default $RUNNER_ARCH or this machine's)"
    )
    g.add_argument(
        "--hash-files",
        nargs="+",
        metavar="GLOB",
        default=[],
        help="hash these files like hashFiles(): sorted paths, content only",
    )
    g.add_argument(
        "--config-hash", default="", help="a hash (or any text, hashed) of the build configuration"
    )
    g.add_argument(
        "--schema", type=int, help="key schema version (default: settings.schema_version, else 1)"
    )
    v = p.add_argument_group("cache version (why a same-key restore can still miss)")
    v.add_argument(
        "--compression",
        choices=["auto", *COMPRESSION_METHODS],
        default="auto",
        help="as actions/cache reports it; auto: zstd-without-long if zstd is on PATH, else gzip",
    )
    v.add_argument(
        "--enable-cross-os-archive",
        action="store_true",
        help="the cache step's enableCrossOsArchive",
    )


def key_parts(
    args: argparse.Namespace,
    ctx: Context,
    config: Config,
    cache_class: str,
    shard: int | None = None,
    content_hash: str | None = None,
) -> KeyParts:
    schema = args.schema if args.schema is not None else config.settings.schema_version
    if content_hash is not None:
        files = content_hash
    elif args.hash_files:
        files = hash_files(args.hash_files)
        if not files:
            raise KeyRuleError(
                f"--hash-files {' '.join(args.hash_files)} matched no files under the workspace; "
                "fix the globs (relative to $GITHUB_WORKSPACE or the current directory)"
            )
    else:
        files = ""
    return KeyParts(
        cache_class=cache_class,
        os=args.os or runner_os(ctx.env),
        arch=args.arch or runner_arch(ctx.env),
        schema=schema,
        config_hash=short_digest(args.config_hash) if args.config_hash else "",
        content_hash=files,
        shard=shard,
    )


def version_for(args: argparse.Namespace, ctx: Context, paths: list[str]) -> str | None:
    if not paths:
        return None
    compression = detect_compression() if args.compression == "auto" else args.compression
    return cache_version(paths, compression, args.enable_cross_os_archive, runner_os(ctx.env))
