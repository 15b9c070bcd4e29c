"""``cache-tools plan``: should this job save its cache, and under which key(s)?"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from collections import Counter
from typing import Any

from ..cache_shards import ShardMember, split_into_shards
from ..config import CacheClass, Config
from ..entries import CacheEntry, parse_entries
from ..errors import CacheToolsError
from ..forecast import Forecast, ForecastInputs
from ..keys import KeyParts, build_key, check_key, parse_key
from ..measure import MeasureResult, measure_paths
from ..output import markdown_table, print_json, table, write_github_outputs, write_step_summary
from ..planner import Budget, Decision, Planner
from ..units import GIB, human_bytes
from .common import (
    Context,
    add_api,
    add_json,
    add_now,
    load_config_arg,
    make_client,
    now_arg,
    repo_arg,
)
from .keyparts import add_key_args, key_parts, version_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="decide before a save whether saving is worth it (save=true|false, reason=...)",
        description=(
            "Measure the class's paths, read the repository's cache state, and decide whether "
            "to save: the ref must be allowed by save_on, the key must be new, the class must "
            "stay within max_share, and a save that does not fit must not make GitHub evict an "
            "entry of higher priority. Sharded classes get one decision per shard. Outputs: save, "
            "reason, key, restore-keys, version, compressed-bytes, shards (JSON)."
        ),
    )
    p.add_argument("--config", required=True, help="cache classes config (TOML)")
    p.add_argument("--class", dest="cache_class", required=True, help="the class to plan for")
    p.add_argument(
        "--path",
        action="append",
        default=[],
        help="path to save (repeatable); default: the class's paths",
    )
    p.add_argument("--ref", required=True, help="the ref the save would belong to ($GITHUB_REF)")
    p.add_argument(
        "--default-branch", help="default branch name (default: settings.default_branch)"
    )
    p.add_argument(
        "--key",
        help=(
            "use this key instead of building one from the key parts; for a sharded class, "
            "the class's base key (no -s/-f parts, e.g. the restore step's key): each shard "
            "key is built from its parts plus the shard index and content hash"
        ),
    )
    p.add_argument(
        "--compressed-bytes",
        type=int,
        help="skip measuring and use this compressed size (non-sharded classes)",
    )
    p.add_argument(
        "--restored-key",
        default="",
        help=(
            "the key this job restored (the restore step's matched key): a save whose "
            "content hash gives the same key is skipped (reason=content-unchanged)"
        ),
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help=(
            "how many jobs save at the same time against the same usage snapshot (a "
            "matrix: ${{ strategy.job-total }}); each may use 1/jobs of the free space and "
            "of the class's headroom (default 1)"
        ),
    )
    p.add_argument(
        "--prune-policy",
        choices=["on", "off"],
        help=(
            "whether the scheduled prune deletes superseded entries (the repository "
            "variable CACHE_PRUNE_POLICY); only then are they counted as freed "
            "(default: $CACHE_PRUNE_POLICY, else off)"
        ),
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="do not call the API: assume an empty cache and the default 10 GiB limit",
    )
    add_key_args(p)
    add_api(p)
    add_now(p)
    add_json(p)


def _state(
    args: argparse.Namespace, ctx: Context, config: Config
) -> tuple[list[CacheEntry], Budget, list[str]]:
    fallback = config.settings.fallback_limit_bytes
    if args.offline:
        return [], Budget(fallback, 0, "default (offline)"), []
    repo = repo_arg(args, ctx)
    client = make_client(args, ctx)
    entries = parse_entries(client.list_caches(repo))
    usage = client.cache_usage(repo)["active_caches_size_in_bytes"]
    gb = client.storage_limit_gb(repo)
    budget = Budget(gb * GIB, usage, "api") if gb else Budget(fallback, usage, "default")
    return entries, budget, client.events


def _shard_members(result: MeasureResult, cls: CacheClass) -> list[ShardMember]:
    assert cls.shards is not None
    ratio = result.ratio or 1.0
    members = []
    for g in result.groups:
        if g.files == 0:
            continue
        size = g.compressed_bytes if g.compressed_bytes is not None else int(g.raw_bytes * ratio)
        members.append(
            ShardMember(
                g.name, size, g.raw_bytes, g.content_hash or "", cls.shards.value_of(g.name)
            )
        )
    return members


def _plan_shards(
    args: argparse.Namespace,
    ctx: Context,
    config: Config,
    cls: CacheClass,
    planner: Planner,
    result: MeasureResult,
) -> dict[str, Any]:
    assert cls.shards is not None
    split = split_into_shards(
        _shard_members(result, cls), cls.shards.max_shard_bytes, cls.shards.max_shards
    )
    stage_dir = cls.shards.stage_dir or f".cache-shards/{cls.name}"
    base = _base_parts(args.key, cls) if args.key else None
    shards = []
    for shard in split.shards:
        if base is not None:
            parts = dataclasses.replace(base, shard=shard.index, content_hash=shard.content_hash)
        else:
            parts = key_parts(
                args, ctx, config, cls.name, shard=shard.index, content_hash=shard.content_hash
            )
        built = build_key(parts)
        decision = planner.decide(built.key, shard.compressed_bytes)
        stage = f"{stage_dir}/s{shard.index:03d}"
        shards.append(
            {
                **shard.to_dict(),
                "key": built.key,
                "restore_keys": list(built.restore_keys),
                "stage_path": stage,
                "version": version_for(args, ctx, [stage]),
                "decision": decision.to_dict(),
            }
        )
    saving = [s for s in shards if s["decision"]["save"]]
    counts = Counter(s["decision"]["reason"] for s in shards if not s["decision"]["save"])
    detail = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
    reason = f"save {len(saving)}/{len(shards)} shards" + (f" ({detail})" if detail else "")
    return {
        "save": bool(saving),
        "reason": reason,
        "compressed_bytes": result.compressed_bytes,
        "shards": shards,
        "left_out": [m.name for m in split.left_out],
    }


def content_hash(result: MeasureResult) -> str:
    """16 hex digits over the names and contents of everything measured (no times):
    the -h part of the key, so that a changed folder gets a new key and an unchanged
    one the same key."""
    lines = sorted(f"{g.name}\0{g.content_hash or ''}" for g in result.groups)
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _base_parts(key: str, cls: CacheClass) -> KeyParts:
    """The parts of a sharded class's base key given with --key."""
    parts = parse_key(key, cls.name)
    if parts is None:
        raise CacheToolsError(
            f"--key {key!r} is not a key of class {cls.name!r} "
            f"({{class}}-v{{schema}}-{{os}}-{{arch}}[-c{{config}}], as `cache-tools key` builds it)"
        )
    if parts.shard is not None or parts.content_hash:
        raise CacheToolsError(
            f"--key {key!r}: give the base key of sharded class {cls.name!r}, without -s or -f "
            "parts; the shard index and content hash are added per shard"
        )
    return parts


def run(args: argparse.Namespace, ctx: Context) -> int:
    config = load_config_arg(args.config, required=True)
    cls = config.get_class(args.cache_class)
    args.fallback_limit = config.settings.fallback_limit_bytes
    paths = list(args.path) or list(cls.paths)
    default_branch = args.default_branch or config.settings.default_branch
    now = now_arg(args.now)
    if cls.shards is not None and args.key:
        _base_parts(args.key, cls)  # a wrong --key fails before measuring
    if cls.shards is not None and args.compressed_bytes is not None:
        raise CacheToolsError(
            f"--compressed-bytes cannot be used for sharded class {cls.name!r}: shards need measuring"
        )

    # Refuse by ref before spending time on the API or measuring.
    gate = Planner(config, cls, [], Budget(0, 0, ""), args.ref, default_branch, now).ref_allowed()
    if gate is not None:
        return _emit(
            args,
            ctx,
            cls,
            {
                "save": False,
                "reason": gate.reason,
                "message": gate.message,
                "compressed_bytes": None,
                "budget": None,
            },
            None,
        )

    if args.jobs < 1:
        raise CacheToolsError(f"--jobs {args.jobs}: must be at least 1")
    policy = (args.prune_policy or ctx.env.get("CACHE_PRUNE_POLICY") or "off").strip().lower()
    entries, budget, events = _state(args, ctx, config)
    planner = Planner(
        config,
        cls,
        entries,
        budget,
        args.ref,
        default_branch,
        now,
        prune_superseded=policy == "on",
        jobs=args.jobs,
    )
    if cls.shards is not None:
        result = measure_paths(paths, _archive_method(args), hash_groups=True)
        data = _plan_shards(args, ctx, config, cls, planner, result)
        data["budget"] = budget.to_dict()
        data["api_events"] = events
        return _emit(args, ctx, cls, data, None)

    variant = cls.name in config.variant_classes
    if args.key:
        base, restore = args.key, [args.key + "-"]
        parsed = parse_key(args.key, cls.name)
        if parsed is not None:
            if parsed.snapshot_hash:
                raise CacheToolsError(
                    f"--key {args.key!r} already has a -h (content) part; give the restore "
                    "step's key, plan adds the hash of the content"
                )
            restore += list(build_key(parsed, variant=variant).restore_keys)
    else:
        built = build_key(key_parts(args, ctx, config, cls.name), variant=variant)
        base, restore = built.key, [built.key + "-", *built.restore_keys]
    if args.compressed_bytes is not None:
        size, key = args.compressed_bytes, base  # not measured: no content hash
    else:
        result = measure_paths(paths, _archive_method(args), hash_groups=True)
        size, key = result.compressed_bytes, f"{base}-h{content_hash(result)}"
        check_key(key)
    decision = planner.decide(key, size, unchanged_from=args.restored_key)
    data = {
        "save": decision.save,
        "reason": decision.reason,
        "message": decision.message,
        "key": key,
        "restore_keys": restore,
        "version": version_for(args, ctx, paths),
        "compressed_bytes": size,
        "budget": budget.to_dict(),
        "decision": decision.to_dict(),
        "api_events": events,
    }
    return _emit(args, ctx, cls, data, decision)


def _archive_method(args: argparse.Namespace) -> str:
    """The archive compression matching the version's compression method."""
    if args.compression == "auto":
        return "auto"
    return "gzip" if args.compression == "gzip" else "zstd"


def _emit(
    args: argparse.Namespace,
    ctx: Context,
    cls: CacheClass,
    data: dict[str, Any],
    decision: Decision | None,
) -> int:
    if cls.forecast is not None:
        limit = (data.get("budget") or {}).get("limit_bytes") or args.fallback_limit
        data["forecast"] = Forecast(cls.forecast, int(cls.max_share * limit), limit).to_json()
    outputs: dict[str, Any] = {"save": data["save"], "reason": data["reason"]}
    for name in ("key", "version", "compressed_bytes"):
        if data.get(name) not in (None, ""):
            outputs[name.replace("_", "-")] = data[name]
    if data.get("restore_keys"):
        outputs["restore-keys"] = data["restore_keys"]
    if "shards" in data:
        outputs["shards"] = _json_list(data["shards"])
    write_github_outputs(outputs, ctx.env)
    write_step_summary(_summary(cls, data), ctx.env)
    if args.json:
        print_json(data, ctx.out)
    else:
        ctx.out.write(_render(data))
    return 0


def _json_list(shards: list[dict[str, Any]]) -> str:
    slim = [
        {
            "index": s["index"],
            "key": s["key"],
            "stage_path": s["stage_path"],
            "version": s["version"],
            "members": s["members"],
            "save": s["decision"]["save"],
            "reason": s["decision"]["reason"],
        }
        for s in shards
    ]
    return json.dumps(slim, separators=(",", ":"))


def _render(data: dict[str, Any]) -> str:
    lines = [f"save:    {'true' if data['save'] else 'false'}", f"reason:  {data['reason']}"]
    if data.get("message"):
        lines.append(f"why:     {data['message']}")
    if data.get("key"):
        lines.append(f"key:     {data['key']}")
    if data.get("compressed_bytes") is not None:
        lines.append(f"size:    {human_bytes(data['compressed_bytes'])} compressed")
    budget = data.get("budget")
    if budget:
        lines.append(
            f"limit:   {human_bytes(budget['limit_bytes'])} ({budget['limit_source']}), "
            f"in use {human_bytes(budget['usage_bytes'])}"
        )
    decision = data.get("decision") or {}
    for label in ("replaces", "evicts", "blocked_by"):
        items = decision.get(label) or []
        if items:
            lines.append(f"{label.replace('_', ' ')}:")
            lines += [
                f"  {e['key']} ({human_bytes(e['size_in_bytes'])}, {e['ref']})" for e in items[:10]
            ]
    if data.get("shards"):
        lines += [
            "",
            table(
                ["shard", "members", "compressed", "save", "reason", "key"],
                [
                    [
                        s["index"],
                        len(s["members"]),
                        human_bytes(s["compressed_bytes"]),
                        "yes" if s["decision"]["save"] else "no",
                        s["decision"]["reason"],
                        s["key"],
                    ]
                    for s in data["shards"]
                ],
            ),
        ]
    if data.get("forecast"):
        f = data["forecast"]
        inputs = ForecastInputs(f["bytes_per_object"], f["objects"], f["measured"])
        lines += Forecast(inputs, f["class_budget"], f["limit"]).lines()
    lines += [f"api: {event}" for event in data.get("api_events") or []]
    if data.get("left_out"):
        lines.append(f"not cached (over max_shards): {', '.join(data['left_out'])}")
    return "\n".join(lines) + "\n"


def _summary(cls: CacheClass, data: dict[str, Any]) -> str:
    verdict = "will be saved" if data["save"] else "will NOT be saved"
    lines = [f"### Cache plan: `{cls.name}` {verdict}", "", f"**reason:** `{data['reason']}`"]
    if data.get("message"):
        lines += ["", data["message"]]
    decision = data.get("decision") or {}
    if decision.get("blocked_by"):
        lines += [
            "",
            "Entries that would be evicted despite a higher priority:",
            "",
            markdown_table(
                ["key", "ref", "size"],
                [
                    [e["key"], e["ref"], human_bytes(e["size_in_bytes"])]
                    for e in decision["blocked_by"][:20]
                ],
            ),
        ]
    if data.get("shards"):
        lines += [
            "",
            markdown_table(
                ["shard", "members", "compressed", "save", "reason"],
                [
                    [
                        s["index"],
                        len(s["members"]),
                        human_bytes(s["compressed_bytes"]),
                        "yes" if s["decision"]["save"] else "no",
                        s["decision"]["reason"],
                    ]
                    for s in data["shards"]
                ],
            ),
        ]
    return "\n".join(lines)
