"""Audit a repository's cache: where the bytes go and what is about to go wrong."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .config import CacheClass, Config, config_variant_classes
from .entries import CacheEntry, iso, ref_kind
from .eviction import eviction_order
from .keys import class_of, lineage
from .units import percent

OTHER = "(other)"


def superseded(
    entries: Sequence[CacheEntry], classes: Sequence[str] | Mapping[str, CacheClass]
) -> list[CacheEntry]:
    """Entries with a newer entry of the same lineage on the same ref.

    ``classes`` is the configured classes (their ``config_hash_is_variant`` is
    honoured) or just class names (config hashes never part of the lineage).
    """
    variants = config_variant_classes(classes)
    groups: dict[tuple[str, str], list[CacheEntry]] = defaultdict(list)
    for e in entries:
        groups[(e.ref, lineage(e.key, classes, variants))].append(e)
    out: list[CacheEntry] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda e: (e.created_at, e.id))
        out.extend(members[:-1])
    return sorted(out, key=lambda e: e.id)


def thrash(entries: Sequence[CacheEntry], config: Config) -> list[dict[str, Any]]:
    """Classes with more than ``thrash_per_day`` entries created within any 24 h."""
    by_class: dict[str, list[datetime]] = defaultdict(list)
    for e in entries:
        by_class[class_of(e.key, config.classes) or OTHER].append(e.created_at)
    limit = config.settings.thrash_per_day
    found = []
    for name, times in sorted(by_class.items()):
        times.sort()
        best, start = 0, 0
        for end in range(len(times)):
            while times[end] - times[start] > timedelta(days=1):
                start += 1
            best = max(best, end - start + 1)
        if best > limit:
            found.append({"class": name, "max_created_in_24h": best, "threshold": limit})
    return found


@dataclass
class AuditInput:
    repo: str
    entries: list[CacheEntry]
    usage_bytes: int
    usage_count: int
    limit_bytes: int
    limit_source: str
    retention_days: int
    retention_source: str
    now: datetime
    events: list[str]


def audit_report(data: AuditInput, config: Config) -> dict[str, Any]:
    """Everything the audit prints, as one JSON-able dict."""
    s = config.settings
    entries = data.entries
    limit = data.limit_bytes
    listed = sum(e.size_in_bytes for e in entries)
    default_branch = s.default_branch

    per_class: dict[str, dict[str, Any]] = {}
    for e in entries:
        name = class_of(e.key, config.classes) or OTHER
        row = per_class.setdefault(name, {"class": name, "entries": 0, "bytes": 0})
        row["entries"] += 1
        row["bytes"] += e.size_in_bytes
    for name, row in per_class.items():
        row["share_of_limit_pct"] = round(percent(row["bytes"], limit), 2)
        cls = config.classes.get(name)
        row["max_share_pct"] = round(cls.max_share * 100, 2) if cls else None
        row["priority"] = config.priority_of(name if cls else None)
        row["over_share"] = bool(cls and row["bytes"] > cls.max_share * limit)

    per_ref_kind: dict[str, dict[str, Any]] = {}
    for e in entries:
        kind = ref_kind(e.ref, default_branch)
        row = per_ref_kind.setdefault(kind, {"ref_kind": kind, "entries": 0, "bytes": 0})
        row["entries"] += 1
        row["bytes"] += e.size_in_bytes
    for row in per_ref_kind.values():
        row["share_pct"] = round(percent(row["bytes"], listed), 2)

    expiry_at = timedelta(days=data.retention_days)
    near = timedelta(days=s.near_expiry_days)
    near_expiry = []
    for e in entries:
        expires = e.last_accessed_at + expiry_at
        if expires - data.now <= near:
            near_expiry.append({**e.to_dict(), "expires_at": iso(expires)})

    large_threshold = int(s.large_entry_share * limit)
    large = [
        e.to_dict()
        for e in sorted(entries, key=lambda e: -e.size_in_bytes)
        if e.size_in_bytes > large_threshold
    ]
    sup = superseded(entries, config.classes)

    return {
        "repo": data.repo,
        "generated_at": iso(data.now),
        "limit_bytes": limit,
        "limit_source": data.limit_source,
        "retention_days": data.retention_days,
        "retention_source": data.retention_source,
        "usage_bytes": data.usage_bytes,
        "usage_count": data.usage_count,
        "usage_pct": round(percent(data.usage_bytes, limit), 2),
        "listed_entries": len(entries),
        "listed_bytes": listed,
        "per_class": sorted(per_class.values(), key=lambda r: -r["bytes"]),
        "per_ref_kind": sorted(per_ref_kind.values(), key=lambda r: -r["bytes"]),
        "superseded": [e.to_dict() for e in sup],
        "superseded_bytes": sum(e.size_in_bytes for e in sup),
        "near_expiry": sorted(near_expiry, key=lambda r: r["expires_at"]),
        "eviction_order": [e.to_dict() for e in eviction_order(entries)],
        "large_entries": large,
        "large_entry_threshold_bytes": large_threshold,
        "thrash": thrash(entries, config),
        "api_events": data.events,
    }
