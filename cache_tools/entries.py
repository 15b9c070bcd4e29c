"""Cache entries as the REST API lists them, and what kind of ref owns them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .errors import ApiError

_PULL_RE = re.compile(r"^refs/pull/(\d+)/(?:merge|head)$")
_FRACTION_RE = re.compile(r"\.(\d+)(?=[+-]\d\d:\d\d$|$)")


def parse_time(value: Any, what: str) -> datetime:
    """ISO 8601 as GitHub writes it (``2019-01-24T22:45:36.000Z``), as aware UTC."""
    if not isinstance(value, str):
        raise ApiError(f"malformed cache entry: {what} is {value!r}, expected an ISO 8601 time")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # GitHub may send up to 9 fractional digits; fromisoformat on 3.10 takes at most 6.
    text = _FRACTION_RE.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ApiError(f"malformed cache entry: {what} {value!r} is not an ISO 8601 time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class CacheEntry:
    id: int
    ref: str
    key: str
    version: str
    size_in_bytes: int
    created_at: datetime
    last_accessed_at: datetime

    @classmethod
    def from_api(cls, raw: Any) -> CacheEntry:
        if not isinstance(raw, dict):
            raise ApiError(f"malformed cache entry: expected an object, got {type(raw).__name__}")
        for name, kind in (("id", int), ("ref", str), ("key", str), ("size_in_bytes", int)):
            value = raw.get(name)
            if isinstance(value, bool) or not isinstance(value, kind):
                raise ApiError(
                    f"malformed cache entry {raw.get('id', '?')}: field '{name}' is {value!r}, "
                    f"expected {kind.__name__}"
                )
        if raw["size_in_bytes"] < 0:
            raise ApiError(f"malformed cache entry {raw['id']}: negative size_in_bytes")
        return cls(
            id=raw["id"],
            ref=raw["ref"],
            key=raw["key"],
            version=str(raw.get("version") or ""),
            size_in_bytes=raw["size_in_bytes"],
            created_at=parse_time(raw.get("created_at"), f"entry {raw['id']} created_at"),
            last_accessed_at=parse_time(
                raw.get("last_accessed_at"), f"entry {raw['id']} last_accessed_at"
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ref": self.ref,
            "key": self.key,
            "version": self.version,
            "size_in_bytes": self.size_in_bytes,
            "created_at": iso(self.created_at),
            "last_accessed_at": iso(self.last_accessed_at),
        }


def pull_number(ref: str) -> int | None:
    m = _PULL_RE.match(ref)
    return int(m.group(1)) if m else None


def ref_kind(ref: str, default_branch: str) -> str:
    """'default-branch', 'pull-request', 'branch' or 'tag' (as used by save_on)."""
    if ref in (default_branch, f"refs/heads/{default_branch}"):
        return "default-branch"
    if pull_number(ref) is not None:
        return "pull-request"
    if ref.startswith("refs/tags/"):
        return "tag"
    return "branch"


def parse_entries(raw: list[Any]) -> list[CacheEntry]:
    return [CacheEntry.from_api(item) for item in raw]
