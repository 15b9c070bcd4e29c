"""``cache-tools measure``: what would actions/cache upload for these paths?"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..compress import resolve_method
from ..measure import MeasureResult, measure_paths
from ..output import print_json, table, write_github_outputs
from ..reference_pipe import run_pipeline
from ..units import human_bytes
from ..walk import archive_name, expand_patterns
from .common import Context, add_json

HELP = "size of the cache archive actions/cache would save for PATH..."


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure",
        help=HELP,
        description=(
            "Stream the paths through tar --posix and zstd -T0 (level 3) the way actions/cache "
            "does, and report file count, raw bytes, compressed bytes and the top contributors. "
            "Nothing is written to disk unless --keep-archive asks."
        ),
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files, directories or globs (as in the cache step's path:)",
    )
    p.add_argument(
        "--compression",
        choices=["auto", "zstd", "gzip"],
        default="auto",
        help="auto: zstd if a zstd binary is on PATH (what actions/cache checks), else gzip",
    )
    p.add_argument(
        "--compressor",
        choices=["auto", "zstd-cli", "zstandard"],
        default="auto",
        help="zstd implementation: auto uses the zstd binary (what actions/cache runs) when on "
        "PATH, else the zstandard library",
    )
    p.add_argument(
        "--engine",
        choices=["python", "system"],
        default="python",
        help="python: built-in streaming (default); system: run tar | zstd as processes",
    )
    p.add_argument(
        "--keep-archive", metavar="FILE", help="also write the compressed archive to FILE"
    )
    p.add_argument(
        "--top", type=int, default=10, help="how many top folders and files to list (default 10)"
    )
    add_json(p)


def run(args: argparse.Namespace, ctx: Context) -> int:
    method = resolve_method(args.compression)
    if args.engine == "system":
        cwd = os.getcwd()
        paths = [archive_name(p, cwd) for p in expand_patterns(args.paths, cwd)]
        res = run_pipeline(paths, method, cwd=cwd)
        data: dict[str, Any] = {
            "paths": args.paths,
            "compression": method,
            "engine": "system",
            "compressed_bytes": res.compressed_bytes,
            "seconds": round(res.seconds, 3),
        }
        if args.json:
            print_json(data, ctx.out)
        else:
            ctx.out.write(
                f"compressed ({method}, system tar | {method}): {human_bytes(res.compressed_bytes)} "
                f"({res.compressed_bytes} B) in {res.seconds:.2f}s\n"
            )
        return 0
    result = measure_paths(
        args.paths, method, keep_archive=args.keep_archive, top=args.top, compressor=args.compressor
    )
    data = result.to_dict(top=args.top)
    write_github_outputs(
        {
            "files": result.files,
            "raw-bytes": result.raw_bytes,
            "compressed-bytes": result.compressed_bytes,
        },
        ctx.env,
    )
    if args.json:
        print_json(data, ctx.out)
    else:
        ctx.out.write(render(result, args.top))
    return 0


def render(r: MeasureResult, top: int) -> str:
    lines = [
        f"paths:       {' '.join(r.paths)}",
        f"files:       {r.files}",
        f"raw:         {human_bytes(r.raw_bytes)} ({r.raw_bytes} B)",
        f"tar stream:  {human_bytes(r.tar_bytes)} ({r.tar_bytes} B)",
        f"compressed:  {human_bytes(r.compressed_bytes)} ({r.compressed_bytes} B, {r.compression} "
        f"via {r.compressor}, "
        f"ratio {r.ratio:.3f})",
        f"time:        {r.seconds:.2f}s ({r.mb_per_s:.0f} MB/s of tar stream)",
    ]
    if r.archive:
        lines.append(f"archive:     {r.archive}")
    groups = sorted(r.groups, key=lambda g: (-g.raw_bytes, g.name))[:top]
    if groups:
        lines += [
            "",
            "top folders:",
            table(
                ["folder", "files", "raw", "compressed"],
                [
                    [
                        g.name,
                        g.files,
                        human_bytes(g.raw_bytes),
                        human_bytes(g.compressed_bytes) if g.compressed_bytes is not None else "-",
                    ]
                    for g in groups
                ],
            ),
        ]
    if r.largest_files:
        lines += [
            "",
            "largest files:",
            table(
                ["file", "raw"], [[name, human_bytes(size)] for name, size in r.largest_files[:top]]
            ),
        ]
    for w in r.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"
