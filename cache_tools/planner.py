"""Decide, before a save, whether saving is worth it.

Budget = repository limit - current usage + bytes of the entries this save
supersedes (same lineage, same ref; they are pruned after). The lineage includes
the config hash for classes with ``config_hash_is_variant``. A save that does
not fit is simulated against GitHub's LRU eviction and refused if it would push
out an entry of a higher-priority class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .config import CacheClass, Config
from .entries import CacheEntry, ref_kind
from .eviction import simulate_save
from .keys import class_of, lineage
from .units import human_bytes

# Reason codes a workflow can test (reason=...).
FITS = "fits"
FITS_AFTER_EVICTION = "fits-after-eviction"
REF_NOT_ALLOWED = "ref-not-allowed"
KEY_EXISTS = "key-exists"
LARGER_THAN_LIMIT = "larger-than-limit"
OVER_CLASS_SHARE = "over-class-share"
WOULD_EVICT_HIGHER = "would-evict-higher-priority"
EMPTY = "nothing-to-save"


@dataclass
class Budget:
    limit: int
    usage: int
    limit_source: str  # "api" or "default"

    def to_dict(self) -> dict[str, Any]:
        return {
            "limit_bytes": self.limit,
            "usage_bytes": self.usage,
            "limit_source": self.limit_source,
        }


@dataclass
class Decision:
    key: str
    size: int
    save: bool
    reason: str
    message: str
    budget: int = 0
    replaces: list[CacheEntry] = field(default_factory=list)
    evicts: list[CacheEntry] = field(default_factory=list)
    blocked_by: list[CacheEntry] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "compressed_bytes": self.size,
            "save": self.save,
            "reason": self.reason,
            "message": self.message,
            "budget_bytes": self.budget,
            "replaces": [e.to_dict() for e in self.replaces],
            "evicts": [e.to_dict() for e in self.evicts],
            "blocked_by": [e.to_dict() for e in self.blocked_by],
        }


class Planner:
    """Holds the repository state; decides one save (or a sequence of shard saves)."""

    def __init__(
        self,
        config: Config,
        cache_class: CacheClass,
        entries: Sequence[CacheEntry],
        budget: Budget,
        ref: str,
        default_branch: str,
        now: datetime,
    ) -> None:
        self.config = config
        self.cls = cache_class
        self.entries = list(entries)
        self.budget = budget
        self.ref = ref
        self.default_branch = default_branch
        self.now = now
        self.ref_kind = ref_kind(ref, default_branch)
        self._usage = budget.usage
        self._pending: list[CacheEntry] = []  # saves already accepted in this plan
        self._removed: set[int] = set()
        self._next_id = -1

    def _class_of(self, entry: CacheEntry) -> str | None:
        return class_of(entry.key, self.config.classes)

    def _priority(self, entry: CacheEntry) -> int:
        return self.config.priority_of(self._class_of(entry))

    def ref_allowed(self) -> Decision | None:
        if self.ref_kind in self.cls.save_on:
            return None
        heavy = " heavy" if self.cls.heavy else ""
        return Decision(
            key="",
            size=0,
            save=False,
            reason=REF_NOT_ALLOWED,
            message=(
                f"{self.ref_kind} ref {self.ref!r} only restores{heavy} class {self.cls.name!r} "
                f"(save_on = {list(self.cls.save_on)}); add '{self.ref_kind}' to save_on to save here"
            ),
        )

    def decide(self, key: str, size: int) -> Decision:
        """Decide one save of ``size`` compressed bytes under ``key``; accepted saves are remembered."""
        refused = self.ref_allowed()
        if refused is not None:
            refused.key, refused.size = key, size
            return refused
        live = [e for e in self.entries if e.id not in self._removed] + self._pending
        if any(e.key == key and e.ref == self.ref for e in live):
            return Decision(
                key,
                size,
                False,
                KEY_EXISTS,
                f"{key!r} already exists on {self.ref}; GitHub never overwrites a key, nothing to save",
            )
        if size <= 0:
            return Decision(
                key, size, False, EMPTY, "the measured paths are empty; nothing to save"
            )
        limit = self.budget.limit
        classes, variants = self.config.classes, self.config.variant_classes
        mine = lineage(key, classes, variants)
        replaces = [
            e
            for e in live
            if e.ref == self.ref and e.id > 0 and lineage(e.key, classes, variants) == mine
        ]
        replaced_bytes = sum(e.size_in_bytes for e in replaces)
        usage = self._usage + sum(e.size_in_bytes for e in self._pending)
        budget = limit - usage + replaced_bytes
        d = Decision(key, size, False, "", "", budget=budget, replaces=replaces)
        if size > limit:
            d.reason = LARGER_THAN_LIMIT
            d.message = (
                f"{human_bytes(size)} is more than the whole cache limit ({human_bytes(limit)}); "
                "shard the class or cache less"
            )
            return d
        cap = int(self.cls.max_share * limit)
        removed = {e.id for e in replaces}
        class_bytes = sum(
            e.size_in_bytes
            for e in live
            if e.id not in removed and self._class_of(e) == self.cls.name
        )
        if class_bytes + size > cap:
            d.reason = OVER_CLASS_SHARE
            d.message = (
                f"class {self.cls.name!r} would hold {human_bytes(class_bytes + size)}, over its share "
                f"{self.cls.max_share:.0%} of the limit ({human_bytes(cap)}); raise max_share or cache less"
            )
            return d
        if size <= budget:
            d.save, d.reason = True, FITS
            d.message = f"{human_bytes(size)} fits in the free budget of {human_bytes(budget)}"
        else:
            sim = simulate_save(live, size, limit, removed)
            mine_priority = self.cls.priority
            higher = [e for e in sim.evicted if self._priority(e) > mine_priority]
            if higher:
                d.reason = WOULD_EVICT_HIGHER
                d.evicts, d.blocked_by = sim.evicted, higher
                names = ", ".join(f"{e.key} (priority {self._priority(e)})" for e in higher[:3])
                d.message = (
                    f"saving {human_bytes(size)} would evict {len(higher)} entr{'y' if len(higher) == 1 else 'ies'} "
                    f"of higher priority than {self.cls.name!r} ({mine_priority}): {names}"
                )
                return d
            if not sim.fits:
                d.reason = LARGER_THAN_LIMIT
                d.message = f"{human_bytes(size)} does not fit even after evicting every entry"
                return d
            d.save, d.reason, d.evicts = True, FITS_AFTER_EVICTION, sim.evicted
            d.message = (
                f"{human_bytes(size)} fits after GitHub evicts {len(sim.evicted)} older "
                f"entr{'y' if len(sim.evicted) == 1 else 'ies'} ({human_bytes(sim.evicted_bytes)}) of equal or lower priority"
            )
        self._accept(d)
        return d

    def _accept(self, d: Decision) -> None:
        """Record an accepted save so later shard decisions see it."""
        for e in d.replaces + d.evicts:
            self._removed.add(e.id)
        self._usage -= sum(e.size_in_bytes for e in d.replaces + d.evicts if e.id > 0)
        self._pending = [e for e in self._pending if e.id not in self._removed]
        self._pending.append(
            CacheEntry(self._next_id, self.ref, d.key, "", d.size, self.now, self.now)
        )
        self._next_id -= 1
