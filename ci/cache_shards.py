"""Restore and save a cache class that cache_tools.toml splits into shards (the zoo).

A sharded class ([classes.X.shards]) is one cache entry per shard. Shard I is saved from
and restored to its own staged folder ({stage_dir}/sIII, the same path both ways, so
save and restore agree on the cache version), under a key that carries the shard index
and a hash of the shard's members. The composite actions .github/actions/cache-restore
and cache-save have one actions/cache step per shard index ("slot"); this script fills
their inputs. All decisions are cache-tools': `cache-tools key --shard I` builds the
restore keys, `cache-tools plan` packs the members into shards and decides, shard by
shard and under the class's share of the cache budget, which ones to save.

Subcommands:

  keys      For each shard index < min(shard count, --slots): `cache-tools key --shard I`.
            Step outputs sI-key, sI-restore-keys, sI-path, and stage-dir.
  unstage   After the restores: move what the shards brought from the stage folder into
            the class's folder (--into), keeping relative paths; a file already there
            is kept (the zoo store is content-addressed). Output restored (shard count).
  plan      Before saving, any class: asks `cache-tools key --json` whether the class is
            sharded. Not sharded: runs `cache-tools plan` (its outputs save, reason, key,
            ... are the step's outputs; key is --key plus -h<hash of the content>, and
            --restored-key with that same key means save=false, content-unchanged). Sharded: runs `cache-tools plan
            --json` on the member folders (--members, globs under --path), hard-links
            (or copies) the members of every shard it allows into that shard's stage
            folder and outputs sharded=true, save, reason and sI-key, sI-path per shard
            to save.

Examples:
  python -m ci cache-shards keys --class zoo-models --count 6 --slots 6 --os Linux --arch X64
  python -m ci cache-shards unstage --stage-dir .cache-shards/zoo-models --into /tmp/ci/zoo-models
  python -m ci cache-shards plan --class zoo-models --path /tmp/ci/zoo-models \\
      --members 'onnx-zoo/*' --key zoo-models-v1-Linux-X64 --ref refs/heads/main --offline
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ci._common import CIError, format_size, notice, set_outputs

CONFIG = "cache_tools.toml"
FILE_COMMANDS = ("GITHUB_OUTPUT", "GITHUB_ENV")


def cache_tools(args: list[str], *, json_out: bool = False, outputs: bool = False) -> Any:
    """Runs `cache-tools ARGS`; with json_out, returns its parsed JSON.

    Without outputs, $GITHUB_OUTPUT is hidden from it: this script writes the step's
    outputs itself.
    """
    exe = shutil.which("cache-tools")
    if exe is None:
        raise CIError("cache-tools is not on PATH (python -m ci install --bootstrap installs it)")
    env = dict(os.environ)
    if not outputs:
        for name in FILE_COMMANDS:
            env.pop(name, None)
    print("+ " + subprocess.list2cmdline(["cache-tools", *args]), flush=True)
    result = subprocess.run([exe, *args], env=env, capture_output=json_out, text=True)
    if result.returncode != 0:
        if json_out:
            sys.stderr.write(result.stderr)
        raise CIError(f"cache-tools {args[0]} exited {result.returncode}")
    if not json_out:
        return None
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        raise CIError(
            f"cache-tools {args[0]} --json printed no JSON: {result.stdout[:200]!r}"
        ) from None


def key_part_args(args: argparse.Namespace) -> list[str]:
    out = []
    for flag, value in (
        ("--os", args.os),
        ("--arch", args.arch),
        ("--config-hash", args.config_hash),
    ):
        if value:
            out += [flag, value]
    return out


# -- keys ------------------------------------------------------------------------------------


def cmd_keys(args: argparse.Namespace) -> int:
    count = min(args.count, args.slots)
    if args.count > args.slots:
        notice(
            f"{args.cache_class}: {args.count} shards but {args.slots} restore slots; "
            f"shards {args.slots}..{args.count - 1} are not restored",
            "warning",
        )
    outputs: dict[str, Any] = {}
    stage_dirs = set()
    for index in range(count):
        data = cache_tools(
            [
                "key",
                "--config",
                args.config,
                "--class",
                args.cache_class,
                "--shard",
                str(index),
                *key_part_args(args),
                "--json",
            ],
            json_out=True,
        )
        outputs[f"s{index}-key"] = data["key"]
        outputs[f"s{index}-restore-keys"] = data["restore_keys"]
        outputs[f"s{index}-path"] = data["stage_path"]
        stage_dirs.add(str(Path(data["stage_path"]).parent.as_posix()))
        print(f"shard {index}: {data['stage_path']}  {data['restore_keys'][0]}*")
    if len(stage_dirs) > 1:
        raise CIError(f"shard stage folders have different parents: {sorted(stage_dirs)}")
    outputs["stage-dir"] = stage_dirs.pop() if stage_dirs else ""
    outputs["count"] = count
    set_outputs(outputs)
    return 0


# -- unstage ---------------------------------------------------------------------------------


def merge_move(src: Path, dest: Path) -> int:
    """Moves src into dest (renaming whole folders where dest has none); returns files moved.

    What dest already has is kept: the same relative path in the zoo store is the same
    verified content.
    """
    if src.is_dir() and not src.is_symlink():
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            files = sum(1 for p in src.rglob("*") if not p.is_dir())
            shutil.move(str(src), str(dest))
            return files
        if not dest.is_dir():
            return 0
        return sum(merge_move(child, dest / child.name) for child in sorted(src.iterdir()))
    if dest.exists() or dest.is_symlink():
        return 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(src), str(dest))
    return 1


def cmd_unstage(args: argparse.Namespace) -> int:
    stage = Path(args.stage_dir)
    into = Path(args.into)
    restored = moved = 0
    if stage.is_dir():
        for shard in sorted(p for p in stage.iterdir() if p.is_dir()):
            if not any(shard.iterdir()):
                continue  # this slot restored nothing
            files = merge_move(shard, into)
            restored += 1
            moved += files
            print(f"{shard.name}: {files} new file(s) into {into}")
        shutil.rmtree(stage, ignore_errors=True)
    print(f"restored {restored} shard(s), {moved} file(s) moved into {into}")
    set_outputs({"restored": restored})
    return 0


# -- plan ------------------------------------------------------------------------------------


def link_tree(src: Path, dest: Path) -> int:
    """Hard-links src (a file or folder) to dest, copying where linking fails; bytes staged."""
    if src.is_symlink():
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.readlink(src), dest)
        return 0
    if src.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        return sum(link_tree(child, dest / child.name) for child in sorted(src.iterdir()))
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:  # another file system, or a file system without hard links
        shutil.copy2(src, dest)
    return src.stat().st_size


def member_dirs(root: Path, patterns: list[str]) -> list[Path]:
    """The folders whose children are the shard members: each glob under root (default root)."""
    if not patterns:
        return [root] if root.is_dir() else []
    found: list[Path] = []
    for pattern in patterns:
        for match in sorted(glob.glob(str(root / pattern))):
            path = Path(match)
            if path.is_dir() and path not in found:
                found.append(path)
    return found


def stage_shards(shards: list[dict[str, Any]], root: Path, slots: int, cwd: Path) -> dict[str, Any]:
    """Stages every shard the plan allows; returns the step outputs for the save slots."""
    outputs: dict[str, Any] = {}
    for shard in shards:
        index = shard["index"]
        if not shard["decision"]["save"]:
            print(f"shard {index}: not saved ({shard['decision']['reason']})")
            continue
        if index >= slots:
            notice(
                f"shard {index} may be saved but the cache-save action has only {slots} slots; "
                "raise the slots or lower max_shards",
                "warning",
            )
            continue
        stage = cwd / shard["stage_path"]
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        staged = 0
        for member in shard["members"]:
            src = Path(os.path.normpath(cwd / member))
            rel = Path(os.path.relpath(src, root))
            if rel.parts and rel.parts[0] == "..":
                raise CIError(f"shard member {member} is not under {root}")
            staged += link_tree(src, stage / rel)
        outputs[f"s{index}-key"] = shard["key"]
        outputs[f"s{index}-path"] = shard["stage_path"]
        print(
            f"shard {index}: {len(shard['members'])} member(s), {format_size(staged)} staged in "
            f"{shard['stage_path']} -> {shard['key']}"
        )
    return outputs


def cmd_plan(args: argparse.Namespace) -> int:
    info = cache_tools(
        ["key", "--config", args.config, "--class", args.cache_class, "--json"], json_out=True
    )
    plan = [
        "plan",
        "--config",
        args.config,
        "--class",
        args.cache_class,
        "--ref",
        args.ref,
        "--jobs",
        str(args.jobs),
    ]
    for flag, value in (
        ("--key", args.key),
        ("--default-branch", args.default_branch),
        ("--repo", args.repo),
    ):
        if value:
            plan += [flag, value]
    if args.restored_key and not info.get("shard_count"):
        plan += ["--restored-key", args.restored_key]
    if args.offline:
        plan.append("--offline")
    if not info.get("shard_count"):
        set_outputs({"sharded": False})
        cache_tools([*plan, "--path", args.path], outputs=True)  # its outputs are the step's
        return 0

    root = Path(args.path).resolve()
    dirs = member_dirs(root, args.members)
    if not dirs:
        print(
            f"{args.cache_class}: nothing under {root} matches {args.members or ['.']}; nothing to save"
        )
        set_outputs({"sharded": True, "save": False, "reason": "nothing-to-save"})
        return 0
    for folder in dirs:
        plan += ["--path", str(folder)]
    data = cache_tools([*plan, "--json"], json_out=True)
    outputs = stage_shards(data.get("shards") or [], root, args.slots, Path.cwd())
    if data.get("left_out"):
        notice(
            f"{args.cache_class}: {len(data['left_out'])} member(s) beyond max_shards are not cached"
        )
    saving = sum(1 for name in outputs if name.endswith("-key"))
    print(f"{args.cache_class}: {data['reason']}")
    set_outputs({"sharded": True, "save": saving > 0, "reason": data["reason"], **outputs})
    return 0


# -- command line ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="command", required=True)

    k = sub.add_parser("keys", help="restore keys and stage folders of each shard slot")
    k.add_argument("--class", dest="cache_class", required=True, help="the sharded cache class")
    k.add_argument(
        "--count", type=int, required=True, help="the class's shard count (key output shard-count)"
    )
    k.add_argument("--slots", type=int, required=True, help="restore steps the action has")
    k.add_argument("--os", help="OS key part (default: $RUNNER_OS)")
    k.add_argument("--arch", help="arch key part (default: $RUNNER_ARCH)")
    k.add_argument(
        "--config-hash", default="", help="configuration key part, as given to cache-restore"
    )
    k.add_argument("--config", default=CONFIG, help=f"cache classes config (default {CONFIG})")
    k.set_defaults(func=cmd_keys)

    u = sub.add_parser("unstage", help="move the restored shards into the class's folder")
    u.add_argument("--stage-dir", required=True, help="folder holding the shards' stage folders")
    u.add_argument("--into", required=True, help="the class's folder (the cache step's path)")
    u.set_defaults(func=cmd_unstage)

    p = sub.add_parser(
        "plan", help="decide the save (any class); stage the shards of a sharded one"
    )
    p.add_argument("--class", dest="cache_class", required=True, help="cache class")
    p.add_argument("--path", required=True, help="the class's folder (the cache step's path)")
    p.add_argument("--key", default="", help="the restore step's key (a sharded class's base key)")
    p.add_argument(
        "--members",
        nargs="*",
        default=[],
        metavar="GLOB",
        help="sharded: folders under --path whose children are the members (default: --path)",
    )
    p.add_argument(
        "--restored-key",
        default="",
        help="the key the restore step matched: the same content is not saved again",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="jobs saving at the same time (a matrix's strategy.job-total): each plans "
        "with 1/jobs of the free space",
    )
    p.add_argument("--slots", type=int, default=1 << 30, help="save steps the action has")
    p.add_argument("--ref", required=True, help="the ref the save belongs to ($GITHUB_REF)")
    p.add_argument("--default-branch", default="", help="default branch (default: the config's)")
    p.add_argument("--repo", default="", help="OWNER/NAME (default: $GITHUB_REPOSITORY)")
    p.add_argument(
        "--offline", action="store_true", help="plan without the API (empty cache, default limit)"
    )
    p.add_argument("--config", default=CONFIG, help=f"cache classes config (default {CONFIG})")
    p.set_defaults(func=cmd_plan)


def run(args: argparse.Namespace) -> int:
    return args.func(args)
