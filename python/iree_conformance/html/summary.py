"""The numbers of the HTML report: verdict matrix, stage funnel, failure groups, slowest cases."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import normalize
from ..merging import suite_of
from ..results import VERDICTS

#: Verdicts with a fixed column, in this order; any other value gets a column of its own.
KNOWN_VERDICTS = VERDICTS
#: Verdicts that need attention (unexpected results).
UNEXPECTED = ("fail", "xpass")
#: The funnel's steps and the failing stages that stop a case before passing each.
FUNNEL = (
    ("import", {"prepare", "import"}),
    ("compile", {"compile"}),
    ("run", {"load", "run"}),
    ("numerics", {"reference", "compare"}),
)


def verdict_of(outcome: dict[str, Any]) -> str:
    return str(outcome.get("verdict") or outcome.get("status") or "?")


def verdict_columns(outcomes: list[dict[str, Any]]) -> list[str]:
    """The known verdicts, then any unknown ones found (sorted)."""
    unknown = sorted({verdict_of(o) for o in outcomes} - set(KNOWN_VERDICTS))
    return [*KNOWN_VERDICTS, *unknown]


@dataclass
class MatrixRow:
    """Verdict counts of one suite x target x OS."""

    suite: str
    target: str
    os: str
    counts: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def platform_of(outcome: dict[str, Any]) -> str:
    """'linux/x86_64 py3.11': two Pythons on one OS stay apart, as in ci/merge_results.py."""
    return f"{outcome.get('os', '?')}/{outcome.get('arch', '?')} py{outcome.get('python', '?')}"


def matrix(outcomes: list[dict[str, Any]]) -> list[MatrixRow]:
    """One row per suite x target x OS/arch, sorted."""
    rows: dict[tuple[str, str, str], MatrixRow] = {}
    for o in outcomes:
        key = (suite_of(o), str(o.get("target", "?")), platform_of(o))
        rows.setdefault(key, MatrixRow(*key)).counts[verdict_of(o)] += 1
    return [rows[k] for k in sorted(rows)]


@dataclass
class Funnel:
    """Pass rates per stage of one suite x target over its runnable (not skipped) cases."""

    suite: str
    target: str
    runnable: int
    passed: dict[str, int]

    def rate(self, step: str) -> float:
        return self.passed[step] / self.runnable if self.runnable else 0.0


def _passes(outcome: dict[str, Any]) -> dict[str, bool]:
    """Which funnel steps a runnable outcome got through."""
    if outcome.get("status") == "pass":
        return {step: True for step, _ in FUNNEL}
    stage = outcome.get("stage")
    if not any(stage in stages for _, stages in FUNNEL):
        return {step: False for step, _ in FUNNEL}  # unknown stage: count it as stopped first
    result, stopped = {}, False
    for step, stages in FUNNEL:
        stopped = stopped or stage in stages or (step == "numerics")
        result[step] = not stopped
    return result


def funnels(outcomes: list[dict[str, Any]]) -> list[Funnel]:
    """One funnel per suite x target (all OSes together), sorted."""
    table: dict[tuple[str, str], Funnel] = {}
    for o in outcomes:
        if o.get("status") == "skip":
            continue
        key = (suite_of(o), str(o.get("target", "?")))
        f = table.setdefault(key, Funnel(*key, 0, {step: 0 for step, _ in FUNNEL}))
        f.runnable += 1
        for step, ok in _passes(o).items():
            f.passed[step] += ok
    return [table[k] for k in sorted(table)]


def first_line(outcome: dict[str, Any]) -> str:
    """The first non-empty diagnostic line, else the reason."""
    return next(
        (d for d in outcome.get("diagnostics") or [] if d.strip()), outcome.get("reason") or ""
    )


@dataclass
class FailureGroup:
    """Failing outcomes that share a stage and a normalized first error line."""

    stage: str
    line: str
    members: list[dict[str, Any]]

    @property
    def unexpected(self) -> int:
        return sum(verdict_of(o) in UNEXPECTED for o in self.members)

    @property
    def cases(self) -> list[str]:
        return sorted({o["case_id"] for o in self.members})

    @property
    def where(self) -> list[str]:
        return sorted({f"{o.get('target')} {platform_of(o)}" for o in self.members})


def is_failure(outcome: dict[str, Any]) -> bool:
    """IREE did not get the case right (whatever the manifest expected)."""
    return outcome.get("status") not in ("pass", "skip")


def failure_groups(outcomes: list[dict[str, Any]]) -> list[FailureGroup]:
    """Failing outcomes by (stage, normalized first line), biggest group first."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for o in outcomes:
        if is_failure(o):
            line = first_line(o)
            groups[
                (str(o.get("stage", "?")), normalize(line) if line else "(no diagnostic)")
            ].append(o)
    found = [FailureGroup(stage, line, members) for (stage, line), members in groups.items()]
    return sorted(found, key=lambda g: (-g.unexpected, -len(g.members), g.stage, g.line))


def slowest(outcomes: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The ``count`` outcomes with the longest duration."""
    return sorted(outcomes, key=lambda o: -float(o.get("duration") or 0.0))[:count]


def header(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Versions, platforms and times of the current runs (distinct values, sorted)."""
    metas = [r.get("metadata") or {} for r in runs]

    def distinct(key: str) -> list[str]:
        return sorted({str(m.get(key)) for m in metas if m.get(key)})

    platforms = sorted(
        {
            f"{r.get('os', '?')}/{r.get('arch', '?')} (Python {r.get('python', '?')}, "
            f"{(r.get('metadata') or {}).get('platform', '?')})"
            for r in runs
        }
    )
    return {
        "versions": {
            name: distinct(key)
            for name, key in (
                ("IREE compiler", "iree_compiler"),
                ("IREE runtime", "iree_runtime"),
                ("onnx", "onnx"),
                ("onnxruntime", "onnxruntime"),
            )
        },
        "platforms": platforms,
        "targets": sorted({t for m in metas for t in m.get("targets", [])}),
        "started": min(distinct("started"), default="?"),
        "finished": max(distinct("finished"), default="?"),
    }
