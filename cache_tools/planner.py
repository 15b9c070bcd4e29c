"""Decide, before a save, whether saving is worth it.

Budget = repository limit - current usage + bytes of the superseded entries that
the scheduled prune will really delete (same lineage, same ref; only when the
prune policy is on, and for a protected class's default-branch entries only older
snapshots of the same key). The lineage includes the config hash for classes with
``config_hash_is_variant``. When ``jobs`` jobs of a matrix plan at the same time
against the same usage snapshot, each gets 1/jobs of the free space and of the
class's headroom. A save that does not fit is simulated against GitHub's LRU
eviction and refused if it would push out an entry of a higher-priority class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .config import CacheClass, Config
from .entries import CacheEntry, ref_kind
from .eviction import simulate_save
from .keys import class_of, lineage, snapshot_base
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
UNCHANGED = "content-unchanged"


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
    replaces: list[CacheEntry] = field(default_factory=list)  # credited: prune deletes them
    evicts: list[CacheEntry] = field(default_factory=list)
    blocked_by: list[CacheEntry] = field(default_factory=list)
    superseded_kept: list[CacheEntry] = field(default_factory=list)  # superseded, not deleted

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
            "superseded_kept": [e.to_dict() for e in self.superseded_kept],
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
        *,
        prune_superseded: bool = False,
        jobs: int = 1,
    ) -> None:
        """``prune_superseded``: the scheduled prune deletes superseded entries (the
        repository's CACHE_PRUNE_POLICY is on); otherwise none is credited as freed.
        ``jobs``: how many jobs plan saves at the same time (a matrix), sharing the space."""
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {jobs}")
        self.prune_superseded = prune_superseded
        self.jobs = jobs
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

    def pruned_once_superseded(self, entry: CacheEntry, new_key: str) -> bool:
        """Will the scheduled prune really delete ``entry`` once ``new_key`` exists?

        Only with the prune policy on; a protected class's default-branch entries are
        kept by prune unless the newer one is a later snapshot of the same key.
        """
        if not self.prune_superseded:
            return False
        name = self._class_of(entry)
        cls = self.config.classes.get(name) if name else None
        on_default = ref_kind(entry.ref, self.default_branch) == "default-branch"
        if cls is not None and cls.protected and on_default:
            return snapshot_base(entry.key, cls.name) == snapshot_base(new_key, cls.name)
        return True

    def decide(self, key: str, size: int, unchanged_from: str = "") -> Decision:
        """Decide one save of ``size`` compressed bytes under ``key``; accepted saves are remembered.

        ``unchanged_from``: the key this job restored; the same key means the content did
        not change (keys end in a hash of the content), so there is nothing to save.
        """
        refused = self.ref_allowed()
        if refused is not None:
            refused.key, refused.size = key, size
            return refused
        if unchanged_from and key == unchanged_from:
            return Decision(
                key,
                size,
                False,
                UNCHANGED,
                f"the content is what this job restored ({key!r}); nothing new to save",
            )
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
        superseded = [
            e
            for e in live
            if e.ref == self.ref and e.id > 0 and lineage(e.key, classes, variants) == mine
        ]
        replaces = [e for e in superseded if self.pruned_once_superseded(e, key)]
        kept = [e for e in superseded if e not in replaces]
        replaced_bytes = sum(e.size_in_bytes for e in replaces)
        pending_bytes = sum(e.size_in_bytes for e in self._pending)
        free = limit - self._usage
        quota = free // self.jobs if free > 0 else free  # this job's share of the free space
        budget = quota - pending_bytes + replaced_bytes
        d = Decision(
            key, size, False, "", "", budget=budget, replaces=replaces, superseded_kept=kept
        )
        if size > limit:
            d.reason = LARGER_THAN_LIMIT
            d.message = (
                f"{human_bytes(size)} is more than the whole cache limit ({human_bytes(limit)}); "
                "shard the class or cache less"
            )
            return d
        cap = int(self.cls.max_share * limit)
        removed = {e.id for e in replaces}
        class_now = sum(
            e.size_in_bytes for e in live if e.id > 0 and self._class_of(e) == self.cls.name
        )
        headroom = cap - class_now
        class_quota = headroom // self.jobs if headroom > 0 else headroom
        if size + pending_bytes > class_quota + replaced_bytes:
            d.reason = OVER_CLASS_SHARE
            held = class_now - replaced_bytes + pending_bytes + size
            shared = (
                f"; {self.jobs} jobs save at once, so this one may use 1/{self.jobs} of the "
                f"class's headroom ({human_bytes(max(class_quota, 0))})"
                if self.jobs > 1
                else ""
            )
            d.message = (
                f"class {self.cls.name!r} would hold {human_bytes(held)}, over its share "
                f"{self.cls.max_share:.0%} of the limit ({human_bytes(cap)}){shared}; "
                "raise max_share or cache less"
            )
            if kept:
                d.message += (
                    f" ({len(kept)} superseded entr{'y' if len(kept) == 1 else 'ies'} stay: "
                    "prune deletes them only with CACHE_PRUNE_POLICY on)"
                )
            return d
        if size <= budget:
            d.save, d.reason = True, FITS
            d.message = f"{human_bytes(size)} fits in the free budget of {human_bytes(budget)}"
        else:
            # The other jobs of a matrix take their quotas of the free space meanwhile.
            others = (self.jobs - 1) * quota if quota > 0 else 0
            sim = simulate_save(live, size, limit - others, removed)
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
