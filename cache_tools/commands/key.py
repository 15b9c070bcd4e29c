"""``cache-tools key``: build a key, restore keys and the cache version."""

from __future__ import annotations

import argparse

from ..config import CacheClass, Config
from ..errors import CacheToolsError
from ..keys import build_key, check_keys
from ..output import print_json, write_github_outputs
from .common import Context, add_config, add_json, load_config_arg
from .keyparts import add_key_args, key_parts, version_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "key",
        help="build a cache key, restore keys and the cache version",
        description=(
            "Build {class}-v{schema}-{os}-{arch}[-s{shard}][-c{config}][-f{files}] and its "
            "restore keys (most to least specific; KEY- first for a configured class, which "
            "`plan` saves under KEY-h{content hash}; not below the config part for a class with "
            "config_hash_is_variant), check GitHub's key rules, and compute the "
            "version actions/cache will send for --path. Writes outputs key, restore-keys, "
            "version (and shard-count for a sharded class; stage-path with --shard) when "
            "$GITHUB_OUTPUT is set."
        ),
    )
    p.add_argument("--class", dest="cache_class", required=True, help="cache class, e.g. llvm-mlir")
    p.add_argument(
        "--path",
        action="append",
        default=[],
        help=(
            "a path: line of the cache step (repeatable); default: the class's paths in "
            "--config, or with --shard the shard's staged folder"
        ),
    )
    p.add_argument(
        "--shard",
        type=int,
        metavar="N",
        help=(
            "key of shard N of a sharded class ([classes.X.shards]): adds -sNNN, and the "
            "version is the one of the shard's staged folder; without --content-hash the "
            "restore keys start with KEY- (the newest entry of that shard)"
        ),
    )
    p.add_argument(
        "--content-hash",
        metavar="HEX",
        help=(
            "the -f part as a ready hash (lowercase hex), e.g. a shard's content_hash from "
            "`plan --json`; instead of --hash-files"
        ),
    )
    add_key_args(p)
    add_config(p)
    add_json(p)


def _shard_stage_path(config: Config, cls: CacheClass | None, name: str, shard: int) -> str:
    """The folder a shard is staged in (the `plan` output's stage_path)."""
    if cls is not None and cls.shards is None:
        raise CacheToolsError(
            f"--shard: class {name!r} is not sharded in {config.source}; "
            f"add a [classes.{name}.shards] table or drop --shard"
        )
    if cls is not None and cls.shards is not None and shard >= cls.shards.max_shards:
        raise CacheToolsError(
            f"--shard {shard}: class {name!r} has at most {cls.shards.max_shards} shards "
            f"(indexes 0..{cls.shards.max_shards - 1}, max_shards in {config.source})"
        )
    stage_dir = (cls.shards.stage_dir if cls is not None and cls.shards else "") or (
        f".cache-shards/{name}"
    )
    return f"{stage_dir}/s{shard:03d}"


def run(args: argparse.Namespace, ctx: Context) -> int:
    config = load_config_arg(args.config)
    cls = config.classes.get(args.cache_class)
    if args.content_hash is not None and args.hash_files:
        raise CacheToolsError("give either --hash-files or --content-hash, not both")
    stage_path = None
    if args.shard is not None:
        stage_path = _shard_stage_path(config, cls, args.cache_class, args.shard)
    paths = list(args.path)
    if not paths:
        if stage_path is not None:
            paths = [stage_path]
        elif cls is not None:
            paths = list(cls.paths)
    parts = key_parts(
        args, ctx, config, args.cache_class, shard=args.shard, content_hash=args.content_hash
    )
    built = build_key(parts, variant=args.cache_class in config.variant_classes)
    restore_keys = list(built.restore_keys)
    if args.shard is not None and not parts.content_hash:
        # A shard is saved under KEY-f{members hash}; KEY itself never exists, so the
        # first restore key is KEY- (the newest entry of this shard, whatever its content).
        restore_keys.insert(0, built.key + "-")
        check_keys(built.key, restore_keys)
    elif args.shard is None and cls is not None and cls.shards is None:
        # `plan` saves a configured class under KEY-h{hash of the content at save time}:
        # KEY itself never exists, and KEY- restores its newest snapshot.
        restore_keys.insert(0, built.key + "-")
        check_keys(built.key, restore_keys)
    version = version_for(args, ctx, paths)
    data = {
        "key": built.key,
        "restore_keys": restore_keys,
        "version": version,
        "paths": paths,
        "files_hash": parts.content_hash,
        "shard": args.shard,
        "stage_path": stage_path,
        "shard_count": cls.shards.max_shards if cls is not None and cls.shards else None,
    }
    outputs = {"key": built.key, "restore-keys": restore_keys}
    if version:
        outputs["version"] = version
    if data["shard_count"] is not None:
        outputs["shard-count"] = data["shard_count"]
    if stage_path is not None:
        outputs["stage-path"] = stage_path
    write_github_outputs(outputs, ctx.env)
    if args.json:
        print_json(data, ctx.out)
    else:
        lines = [f"key:          {built.key}", "restore-keys:"]
        lines += [f"  {rk}" for rk in restore_keys] or ["  (none)"]
        lines.append(f"version:      {version or '(no --path given)'}")
        if stage_path is not None:
            lines.append(f"stage path:   {stage_path}")
        ctx.out.write("\n".join(lines) + "\n")
    return 0
