"""Simulate GitHub's LRU eviction.

Once a repository is over its limit, GitHub deletes entries in order of last
access, oldest first, until it is back under. A new entry is the most recently
used, so it is never the one evicted by its own save.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from .entries import CacheEntry


def eviction_order(entries: Iterable[CacheEntry]) -> list[CacheEntry]:
    """Entries in the order GitHub would evict them (least recently used first)."""
    return sorted(entries, key=lambda e: (e.last_accessed_at, e.created_at, e.id))


@dataclass
class EvictionResult:
    fits: bool
    total_after: int
    evicted: list[CacheEntry] = field(default_factory=list)

    @property
    def evicted_bytes(self) -> int:
        return sum(e.size_in_bytes for e in self.evicted)


def simulate_save(
    entries: Iterable[CacheEntry],
    new_bytes: int,
    limit: int,
    removed_ids: Collection[int] = (),
) -> EvictionResult:
    """What adding ``new_bytes`` would evict, with ``removed_ids`` deleted first."""
    remaining = [e for e in entries if e.id not in removed_ids]
    total = sum(e.size_in_bytes for e in remaining) + new_bytes
    evicted: list[CacheEntry] = []
    for entry in eviction_order(remaining):
        if total <= limit:
            break
        evicted.append(entry)
        total -= entry.size_in_bytes
    return EvictionResult(fits=total <= limit, total_after=total, evicted=evicted)
