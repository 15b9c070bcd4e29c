"""``cache-tools key``: build a key, restore keys and the cache version."""

from __future__ import annotations

import argparse

from ..keys import build_key
from ..output import print_json, write_github_outputs
from .common import Context, add_config, add_json, load_config_arg
from .keyparts import add_key_args, key_parts, version_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "key",
        help="build a cache key, restore keys and the cache version",
        description=(
            "Build {class}-v{schema}-{os}-{arch}[-c{config}][-f{files}] and its restore keys "
            "(most to least specific), check GitHub's key rules, and compute the version "
            "actions/cache will send for --path. Writes outputs key, restore-keys, version "
            "when $GITHUB_OUTPUT is set."
        ),
    )
    p.add_argument("--class", dest="cache_class", required=True, help="cache class, e.g. llvm-mlir")
    p.add_argument(
        "--path",
        action="append",
        default=[],
        help="a path: line of the cache step (repeatable); default: the class's paths in --config",
    )
    add_key_args(p)
    add_config(p)
    add_json(p)


def run(args: argparse.Namespace, ctx: Context) -> int:
    config = load_config_arg(args.config)
    paths = list(args.path)
    if not paths and args.cache_class in config.classes:
        paths = list(config.classes[args.cache_class].paths)
    parts = key_parts(args, ctx, config, args.cache_class)
    built = build_key(parts)
    version = version_for(args, ctx, paths)
    data = {
        "key": built.key,
        "restore_keys": list(built.restore_keys),
        "version": version,
        "paths": paths,
        "files_hash": parts.content_hash,
    }
    outputs = {"key": built.key, "restore-keys": list(built.restore_keys)}
    if version:
        outputs["version"] = version
    write_github_outputs(outputs, ctx.env)
    if args.json:
        print_json(data, ctx.out)
    else:
        lines = [f"key:          {built.key}", "restore-keys:"]
        lines += [f"  {rk}" for rk in built.restore_keys] or ["  (none)"]
        lines.append(f"version:      {version or '(no --path given)'}")
        ctx.out.write("\n".join(lines) + "\n")
    return 0
