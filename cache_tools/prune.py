"""Choose cache entries to delete, and delete exactly those, by id.

Candidates: superseded entries, and entries of closed pull requests (either
kind can be switched off). Entries on the default branch of a protected class
are kept unless that class is named with ``--include-protected``, or unless the
entry is an older snapshot of the newest entry's key (same key but for the ``-h``
content part): that one can never be restored again, since a restore takes the
newest entry of a prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from .audit import superseded
from .config import Config
from .entries import CacheEntry, pull_number, ref_kind
from .errors import ApiError
from .keys import class_of, lineage, snapshot_base

SUPERSEDED = "superseded"
CLOSED_PR = "closed-pull-request"


@dataclass
class PruneItem:
    entry: CacheEntry
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "reason": self.reason}


@dataclass
class PrunePlan:
    delete: list[PruneItem] = field(default_factory=list)
    kept_protected: list[PruneItem] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return [item.entry.id for item in self.delete]

    @property
    def bytes(self) -> int:
        return sum(item.entry.size_in_bytes for item in self.delete)


def plan_prune(
    entries: Sequence[CacheEntry],
    config: Config,
    pull_state: Callable[[int], str | None],
    include_protected: Collection[str] = (),
    only_classes: Collection[str] = (),
    closed_prs: bool = True,
    superseded_entries: bool = True,
    known_closed: Collection[int] = (),
) -> PrunePlan:
    """Pick what to delete. ``pull_state(n)`` answers 'open'/'closed'/None, once per PR.

    Pull requests in ``known_closed`` (e.g. the one whose `closed` event runs the prune)
    are closed without asking: reading a pull request needs `pull-requests: read` on a
    private repository, which the deleting job does not need otherwise.
    """
    reasons: dict[int, str] = {}
    if superseded_entries:
        reasons = {e.id: SUPERSEDED for e in superseded(entries, config.classes)}
    if closed_prs:
        states: dict[int, str | None] = {}
        for e in entries:
            number = pull_number(e.ref)
            if number is None or e.id in reasons:
                continue
            if number not in states:
                states[number] = "closed" if number in known_closed else pull_state(number)
            if states[number] == "closed":
                reasons[e.id] = CLOSED_PR
    newest: dict[tuple[str, str], CacheEntry] = {}
    variants = config.variant_classes
    for e in entries:
        group = (e.ref, lineage(e.key, config.classes, variants))
        if group not in newest or (e.created_at, e.id) > (
            newest[group].created_at,
            newest[group].id,
        ):
            newest[group] = e
    plan = PrunePlan()
    for e in sorted(entries, key=lambda e: e.id):
        if e.id not in reasons:
            continue
        name = class_of(e.key, config.classes)
        if only_classes and name not in only_classes:
            continue
        item = PruneItem(e, reasons[e.id])
        cls = config.classes.get(name) if name else None
        on_default = ref_kind(e.ref, config.settings.default_branch) == "default-branch"
        if cls is not None and cls.protected and on_default and name not in include_protected:
            top = newest[(e.ref, lineage(e.key, config.classes, variants))]
            if item.reason == SUPERSEDED and snapshot_base(top.key, cls.name) == snapshot_base(
                e.key, cls.name
            ):
                plan.delete.append(item)  # an older snapshot of the same key
            else:
                plan.kept_protected.append(item)
        else:
            plan.delete.append(item)
    return plan


@dataclass
class PruneOutcome:
    deleted: list[int] = field(default_factory=list)
    already_gone: list[int] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)


def execute_prune(plan: PrunePlan, delete: Callable[[int], bool]) -> PruneOutcome:
    """Delete the planned ids one by one; a failure is recorded and the rest go on."""
    out = PruneOutcome()
    for cache_id in plan.ids:
        try:
            gone = delete(cache_id)
        except ApiError as exc:
            out.failed.append({"id": cache_id, "error": str(exc)})
            if exc.status in (401, 403):
                break  # the rest would fail the same way
            continue
        (out.deleted if gone else out.already_gone).append(cache_id)
    return out
