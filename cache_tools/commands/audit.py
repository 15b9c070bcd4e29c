"""``cache-tools audit``: where the repository's cache bytes go."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..audit import AuditInput, audit_report
from ..config import DEFAULT_RETENTION_DAYS, Config
from ..entries import parse_entries
from ..errors import EXIT_THRESHOLD
from ..output import markdown_table, print_json, table, write_step_summary
from ..units import GIB, human_bytes
from .common import (
    Context,
    add_api,
    add_config,
    add_json,
    add_now,
    load_config_arg,
    make_client,
    now_arg,
    repo_arg,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        help="report cache usage per class and ref, waste, expiry and eviction risk",
        description=(
            "Read every cache entry (all pages), the usage, and the storage and retention limits "
            "where permitted, and report: usage against the limit, bytes per class and per ref kind, "
            "superseded entries, entries near expiry, the predicted eviction order, oversized "
            f"entries and thrash. --fail-over PCT exits {EXIT_THRESHOLD} when usage exceeds PCT "
            "percent of the limit."
        ),
    )
    add_api(p)
    add_config(p)
    p.add_argument(
        "--fail-over",
        type=float,
        metavar="PCT",
        help=f"exit {EXIT_THRESHOLD} if usage is above PCT%% of the limit",
    )
    p.add_argument(
        "--top", type=int, default=10, help="rows per list in the table output (default 10)"
    )
    add_now(p)
    add_json(p)


def collect(args: argparse.Namespace, ctx: Context, config: Config) -> AuditInput:
    repo = repo_arg(args, ctx)
    client = make_client(args, ctx)
    entries = parse_entries(client.list_caches(repo))
    usage = client.cache_usage(repo)
    gb = client.storage_limit_gb(repo)
    days = client.retention_days(repo)
    return AuditInput(
        repo=repo,
        entries=entries,
        usage_bytes=usage["active_caches_size_in_bytes"],
        usage_count=int(usage.get("active_caches_count") or 0),
        limit_bytes=gb * GIB if gb else config.settings.fallback_limit_bytes,
        limit_source="api" if gb else "default",
        retention_days=days or config.settings.retention_days or DEFAULT_RETENTION_DAYS,
        retention_source="api" if days else "default",
        now=now_arg(args.now),
        events=client.events,
    )


def run(args: argparse.Namespace, ctx: Context) -> int:
    config = load_config_arg(args.config)
    report = audit_report(collect(args, ctx, config), config)
    tripped = args.fail_over is not None and report["usage_pct"] > args.fail_over
    report["fail_over_pct"] = args.fail_over
    report["fail_over_tripped"] = tripped
    if args.json:
        print_json(report, ctx.out)
    else:
        ctx.out.write(render(report, args.top))
    write_step_summary(summary(report), ctx.env)
    if tripped:
        ctx.out.flush()
        sys.stderr.write(
            f"cache usage {report['usage_pct']:.1f}% is over --fail-over {args.fail_over:g}%\n"
        )
        return EXIT_THRESHOLD
    return 0


def _entry_rows(items: list[dict[str, Any]], top: int, extra: str | None = None) -> list[list[Any]]:
    rows = []
    for e in items[:top]:
        row = [e["id"], e["key"], e["ref"], human_bytes(e["size_in_bytes"]), e["last_accessed_at"]]
        if extra:
            row.append(e[extra])
        rows.append(row)
    return rows


def render(r: dict[str, Any], top: int) -> str:
    out = [
        f"repository:  {r['repo']}",
        f"usage:       {human_bytes(r['usage_bytes'])} of {human_bytes(r['limit_bytes'])} "
        f"({r['usage_pct']:.1f}%, limit from {r['limit_source']}); {r['usage_count']} active entries",
        f"listed:      {r['listed_entries']} entries, {human_bytes(r['listed_bytes'])}",
        f"retention:   {r['retention_days']} days ({r['retention_source']})",
        "",
        "per class:",
        table(
            ["class", "entries", "bytes", "% of limit", "max share %", "priority"],
            [
                [
                    c["class"],
                    c["entries"],
                    human_bytes(c["bytes"]),
                    f"{c['share_of_limit_pct']:.1f}",
                    "-" if c["max_share_pct"] is None else f"{c['max_share_pct']:.0f}",
                    c["priority"],
                ]
                for c in r["per_class"]
            ],
        ),
        "",
        "per ref kind:",
        table(
            ["ref kind", "entries", "bytes", "% of listed"],
            [
                [k["ref_kind"], k["entries"], human_bytes(k["bytes"]), f"{k['share_pct']:.1f}"]
                for k in r["per_ref_kind"]
            ],
        ),
    ]
    headers = ["id", "key", "ref", "size", "last accessed"]
    sections = [
        (
            f"superseded ({len(r['superseded'])}, {human_bytes(r['superseded_bytes'])}; `cache-tools prune` removes them):",
            r["superseded"],
            None,
        ),
        (f"near expiry ({len(r['near_expiry'])}):", r["near_expiry"], "expires_at"),
        (
            f"larger than {human_bytes(r['large_entry_threshold_bytes'])} ({len(r['large_entries'])}):",
            r["large_entries"],
            None,
        ),
        ("predicted eviction order (first evicted first):", r["eviction_order"], None),
    ]
    for title, items, extra in sections:
        if items:
            out += [
                "",
                title,
                table(headers + ([extra] if extra else []), _entry_rows(items, top, extra)),
            ]
    for t in r["thrash"]:
        out.append(
            f"\nthrash: class {t['class']!r} created {t['max_created_in_24h']} entries within 24 h "
            f"(threshold {t['threshold']})"
        )
    for event in r["api_events"]:
        out.append(f"api: {event}")
    return "\n".join(out) + "\n"


def summary(r: dict[str, Any]) -> str:
    lines = [
        f"### Actions cache audit: {r['repo']}",
        "",
        f"{human_bytes(r['usage_bytes'])} of {human_bytes(r['limit_bytes'])} used ({r['usage_pct']:.1f}%)",
        "",
        markdown_table(
            ["class", "entries", "bytes", "% of limit"],
            [
                [
                    c["class"],
                    c["entries"],
                    human_bytes(c["bytes"]),
                    f"{c['share_of_limit_pct']:.1f}",
                ]
                for c in r["per_class"]
            ],
        ),
    ]
    if r["superseded"]:
        lines += [
            "",
            f"{len(r['superseded'])} superseded entries ({human_bytes(r['superseded_bytes'])}) can be pruned.",
        ]
    return "\n".join(lines)
