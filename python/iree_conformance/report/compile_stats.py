"""What the compiler made of each case, and how that changed between two results files.

Every compiled case's outcome carries ``metrics["compile_stats"]`` (written by the
worker's compile, engine/worker/compiler.py)::

    {"module_bytes": 10701, "dispatches": 1, "executables": 1, "scope": "case"}
    # scope "batch": the figures are the batch module's, "batch_size" cases compiled together

``dispatches`` and ``executables`` are IREE's scheduling statistics
(``--iree-scheduling-dump-statistics-format=json``: the stream aggregate's
``dispatch-count`` and ``executable-count``); an IREE that does not write them leaves
them out. A compile is deterministic, so any change of the dispatch count between two
runs is real (a fusion that stopped, a new copy); the module size is reported when it
moves by at least 1 KiB and ``min_effect`` (its own small changes are the version string
and the like). Figures of different scopes (a case compiled alone in one run and in a
batch in the other) are not compared. Standard library only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from iree_conformance.common.markdown_escape import md_code, md_text

__all__ = ["StatChange", "compare_compile_stats", "compile_stats", "stat_change_lines"]

Key = tuple[str, str]  # (target, case_id)

#: The smallest change of a module's size reported.
SIZE_FLOOR_BYTES = 1 << 10


@dataclasses.dataclass(frozen=True)
class StatChange:
    """One case's compile figure that changed: ``kind`` "dispatches" or "module size"."""

    key: Key
    kind: str
    base: int
    new: int
    scope: str

    @property
    def worse(self) -> bool:
        """More dispatches or a bigger module."""
        return self.new > self.base

    def describe(self) -> str:
        if self.kind == "dispatches":
            what = f"dispatches {self.base} -> {self.new}"
        else:
            what = f"module size {self.base:,} -> {self.new:,} bytes"
        change = (self.new - self.base) / self.base if self.base else float("inf")
        where = " (the batch module's)" if self.scope == "batch" else ""
        return f"{what} ({change:+.1%}){where}"


def compile_stats(outcome: Mapping[str, Any]) -> dict[str, Any] | None:
    """The outcome's compile statistics, or None (not compiled, or an older results file)."""
    stats = (outcome.get("metrics") or {}).get("compile_stats")
    return stats if isinstance(stats, dict) else None


def _count(stats: Mapping[str, Any], field: str) -> int | None:
    value = stats.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def compare_compile_stats(
    base_outcomes: Iterable[Mapping[str, Any]],
    new_outcomes: Iterable[Mapping[str, Any]],
    min_effect: float = 0.10,
) -> tuple[list[StatChange], int]:
    """(the changes, how many cases had figures on both sides)."""
    base = {(str(o["target"]), str(o["case_id"])): o for o in base_outcomes}
    new = {(str(o["target"]), str(o["case_id"])): o for o in new_outcomes}
    changes: list[StatChange] = []
    compared = 0
    for key in sorted(base.keys() & new.keys()):
        b, n = compile_stats(base[key]), compile_stats(new[key])
        if b is None or n is None or b.get("scope") != n.get("scope"):
            continue
        compared += 1
        scope = str(n.get("scope", "case"))
        bd, nd = _count(b, "dispatches"), _count(n, "dispatches")
        if bd is not None and nd is not None and bd != nd:
            changes.append(StatChange(key, "dispatches", bd, nd, scope))
        bs, ns = _count(b, "module_bytes"), _count(n, "module_bytes")
        if (
            bs is not None
            and ns is not None
            and bs > 0
            and abs(ns - bs) >= SIZE_FLOOR_BYTES
            and abs(ns - bs) / bs >= min_effect
        ):
            changes.append(StatChange(key, "module size", bs, ns, scope))
    return changes, compared


def stat_change_lines(
    changes: list[StatChange], compared: int, markdown: bool = False
) -> list[str]:
    """The changes as ``compare`` prints them (nothing when no case had figures)."""
    if not compared:
        return []
    bullet = "- " if markdown else "  "
    if not changes:
        return [
            f"Compile statistics: no change in dispatch count or module size ({compared} case(s))."
        ]
    lines = [f"Compile statistics changed ({len(changes)}, over {compared} case(s)):"]
    for c in changes:
        case = md_code(c.key[1]) if markdown else c.key[1]
        target = md_text(c.key[0]) if markdown else c.key[0]
        lines.append(f"{bullet}{case} on {target}: {c.describe()}")
    return lines
