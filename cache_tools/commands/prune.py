"""``cache-tools prune``: delete superseded and closed-PR cache entries (dry run by default)."""

from __future__ import annotations

import argparse
from typing import Any

from ..entries import parse_entries
from ..errors import EXIT_API
from ..output import print_json, table
from ..prune import execute_prune, plan_prune
from ..units import human_bytes
from .common import Context, add_api, add_config, add_json, load_config_arg, make_client, repo_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prune",
        help="delete superseded entries and caches of closed pull requests (dry run unless --yes)",
        description=(
            "Plan deletions by id: superseded entries (an older entry of the same class, OS, arch "
            "and shard on the same ref; --keep-superseded skips them) and entries of closed pull "
            "requests (--keep-closed-prs skips them). Default-branch entries "
            "of protected classes are kept unless named with --include-protected. Nothing is "
            "deleted without --yes."
        ),
    )
    add_api(p)
    add_config(p)
    p.add_argument("--yes", action="store_true", help="really delete (default: dry run)")
    p.add_argument(
        "--include-protected",
        action="append",
        default=[],
        metavar="CLASS",
        help="also prune default-branch entries of this protected class (repeatable)",
    )
    p.add_argument(
        "--class",
        dest="classes",
        action="append",
        default=[],
        metavar="CLASS",
        help="only prune entries of this class (repeatable)",
    )
    p.add_argument(
        "--keep-closed-prs",
        action="store_true",
        help="do not look up or prune closed pull requests",
    )
    p.add_argument(
        "--closed-pr",
        dest="closed_pr",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help=(
            "pull request N is closed: delete its refs/pull/N/merge and /head entries without "
            "reading it over the API (repeatable; the pull_request closed event's number)"
        ),
    )
    p.add_argument(
        "--keep-superseded",
        action="store_true",
        help="do not prune superseded entries (e.g. only the caches of closed pull requests)",
    )
    add_json(p)


def run(args: argparse.Namespace, ctx: Context) -> int:
    config = load_config_arg(args.config)
    for name in [*args.include_protected, *args.classes]:
        config.get_class(name)  # typo in a class name is an error, not a silent no-op
    repo = repo_arg(args, ctx)
    client = make_client(args, ctx)
    entries = parse_entries(client.list_caches(repo))
    plan = plan_prune(
        entries,
        config,
        lambda n: client.pull_state(repo, n),
        include_protected=args.include_protected,
        only_classes=args.classes,
        closed_prs=not args.keep_closed_prs or bool(args.closed_pr),
        superseded_entries=not args.keep_superseded,
        known_closed=args.closed_pr,
    )
    data: dict[str, Any] = {
        "repo": repo,
        "dry_run": not args.yes,
        "planned": [i.to_dict() for i in plan.delete],
        "planned_ids": plan.ids,
        "planned_bytes": plan.bytes,
        "kept_protected": [i.to_dict() for i in plan.kept_protected],
    }
    code = 0
    if args.yes:
        outcome = execute_prune(plan, lambda cache_id: client.delete_cache(repo, cache_id))
        data.update(
            deleted=outcome.deleted, already_gone=outcome.already_gone, failed=outcome.failed
        )
        code = EXIT_API if outcome.failed else 0
    data["api_events"] = client.events
    if args.json:
        print_json(data, ctx.out)
    else:
        ctx.out.write(render(data))
    return code


def render(d: dict[str, Any]) -> str:
    mode = "dry run: nothing deleted (add --yes to delete)" if d["dry_run"] else "deleting"
    lines = [
        f"{d['repo']}: {len(d['planned'])} entries, {human_bytes(d['planned_bytes'])} to prune; {mode}"
    ]
    if d["planned"]:
        lines.append(
            table(
                ["id", "reason", "key", "ref", "size"],
                [
                    [e["id"], e["reason"], e["key"], e["ref"], human_bytes(e["size_in_bytes"])]
                    for e in d["planned"]
                ],
            )
        )
    if d["kept_protected"]:
        lines.append(
            f"kept {len(d['kept_protected'])} default-branch entries of protected classes "
            "(name a class with --include-protected to prune them)"
        )
    if not d["dry_run"]:
        lines.append(
            f"deleted {len(d['deleted'])}, already gone {len(d['already_gone'])}, failed {len(d['failed'])}"
        )
        lines += [f"  failed {f['id']}: {f['error']}" for f in d["failed"]]
    lines += [f"api: {e}" for e in d["api_events"]]
    return "\n".join(lines) + "\n"
