"""The comparison of one selection's results under several IREE versions.

Each version's results file (``--report-json``) is a column; a case's cell is what it did
there (its failure kind or pass, the stage, the first diagnostic line). Versions compare
with each other, never with the expectations manifests, which describe the default
version only: the kind a case shows (``Outcome.observed``) is compared, not its verdict.

Changes between two versions, oldest first:

- ``newly-failing``: passed in the older version, fails (any kind) in the newer;
- ``newly-passing``: failed in the older, passes in the newer;
- ``other-kind``: fails in both, at another stage or of another kind;
- ``message-changed``: fails the same way, with another first diagnostic line (numbers,
  locations and SSA names folded as the report groups them);
- ``flaky``: its tries disagreed in one of the two (the flaky policy's retries): listed,
  never counted as worse;
- ``harness-error``: the case failed in one of the two because that version's environment
  could not load IREE (common/env_check.py): the harness's error, listed, never counted as
  worse nor as newly passing (the ``versions`` command refuses such a run with exit 10
  before it gets here; this keeps results files compared with ``--results`` honest).

A newer version is *worse* on a case when it fails where an older one passed; the
``versions`` command's exit status is 1 then (a gate).

Each row also lists its compile statistics' changes (dispatch count, module size) between
consecutive versions that have figures for it, by ``compare``'s rules
(report/compile_stats.py): reported, growth and shrink alike, never a gate here.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from packaging.version import InvalidVersion, Version

from iree_conformance.common.diagnostics import normalize
from iree_conformance.common.env_check import is_harness_environment_error
from iree_conformance.common.markdown_escape import md_code, md_text
from iree_conformance.common.vocabulary import Status, Verdict
from iree_conformance.model.outcome import Outcome
from iree_conformance.report.compile_stats import StatChange, compare_compile_stats, compile_stats
from iree_conformance.report.tables import capped_lines

NEWLY_FAILING = "newly-failing"
NEWLY_PASSING = "newly-passing"
OTHER_KIND = "other-kind"
MESSAGE_CHANGED = "message-changed"
FLAKY = "flaky"  # tries disagreed in a version (the flaky policy): shown, never a gate
HARNESS_ERROR = "harness-error"  # IREE could not be loaded there: no verdict, never a gate
# The row's change is its most telling step's, in this order.
CHANGE_ORDER = (NEWLY_FAILING, OTHER_KIND, NEWLY_PASSING, MESSAGE_CHANGED, FLAKY, HARNESS_ERROR)


@dataclasses.dataclass
class Column:
    """One version: its label, what its environment recorded, its results' outcomes."""

    label: str
    info: dict[str, Any]  # iree_compiler, iree_runtime, revision, build
    outcomes: list[dict[str, Any]]
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)


def column_of_results(data: dict[str, Any], label: str) -> Column:
    """One version's column from its results file (``--report-json``): the IREE version
    and revision its metadata recorded; ``label`` when it recorded none."""
    meta = data.get("metadata", {})
    info = {
        "iree_compiler": meta.get("iree_compiler"),
        "iree_runtime": meta.get("iree_runtime"),
        "revision": meta.get("iree_revision"),
    }
    return Column(meta.get("iree_compiler") or label, info, data["outcomes"], meta)


def version_order(column: Column) -> Version:
    """Oldest first: the compiler's build version (a nightly's rc date orders it)."""
    text = str(column.info.get("build") or column.info.get("iree_compiler") or "0")
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


@dataclasses.dataclass
class Cell:
    kind: str  # "pass", "fail-compile", "crash", ... (Outcome.observed)
    status: str
    stage: str
    message: str
    duration: float
    timing_s: float | None  # median call time, where --timing-runs (or issue V) recorded one
    flaky: bool = False  # its tries disagreed (retried in a fresh worker)
    harness: bool = False  # its environment could not load IREE: no verdict


@dataclasses.dataclass
class Row:
    case_id: str
    target: str
    cells: dict[str, Cell | None]  # by version label; None: not run (skipped or absent)
    steps: list[dict[str, str]]  # {"from", "to", "change"} for each step that changed
    #: (from, to, change) for each compile figure that changed between consecutive
    #: versions with figures (compare's rules: report/compile_stats.py)
    stat_changes: list[tuple[str, str, StatChange]] = dataclasses.field(default_factory=list)
    stats_compared: bool = False  # figures of one scope in two versions or more
    stats: dict[str, dict[str, Any] | None] = dataclasses.field(default_factory=dict)  # by label

    @property
    def change(self) -> str:
        found = {s["change"] for s in self.steps}
        return next((c for c in CHANGE_ORDER if c in found), "")

    @property
    def worse(self) -> bool:
        """A newer version fails where an older one passed."""
        seen_pass = False
        for cell in self.cells.values():
            if cell is None:
                continue
            if cell.flaky or cell.harness:
                continue
            if cell.kind == "pass":
                seen_pass = True
            elif seen_pass:
                return True
        return False


def _cell(data: dict[str, Any]) -> Cell | None:
    outcome = Outcome.from_json(data)
    if outcome.status == Status.SKIP:
        return None
    harness = is_harness_environment_error(data)
    timing = outcome.metrics.get("timing") if isinstance(outcome.metrics, dict) else None
    median = timing.get("iree_median_s") if isinstance(timing, dict) else None
    return Cell(
        kind=outcome.observed,
        status=str(outcome.status),
        stage=str(outcome.stage),
        message=normalize(outcome.diagnostics[0]) if outcome.diagnostics else "",
        duration=float(outcome.duration or 0.0),
        timing_s=float(median) if isinstance(median, (int, float)) else None,
        flaky=outcome.verdict == Verdict.FLAKY
        or len({a.get("kind") for a in outcome.attempts} | {outcome.observed}) > 1,
        harness=harness,
    )


def step_change(old: Cell, new: Cell) -> str | None:
    if old.harness or new.harness:
        return HARNESS_ERROR if old.harness != new.harness else None
    if old.flaky or new.flaky:
        return FLAKY if old.kind != new.kind or old.flaky != new.flaky else None
    if old.kind == "pass" and new.kind != "pass":
        return NEWLY_FAILING
    if old.kind != "pass" and new.kind == "pass":
        return NEWLY_PASSING
    if old.kind != new.kind or old.stage != new.stage:
        return OTHER_KIND
    if old.kind != "pass" and old.message != new.message:
        return MESSAGE_CHANGED
    return None


def compare(columns: list[Column]) -> list[Row]:
    """A row per (target, case) run in any version; columns oldest first."""
    table: dict[tuple[str, str], dict[str, Cell | None]] = {}
    raw: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for column in columns:
        for data in column.outcomes:
            key = (str(data.get("target")), str(data.get("case_id")))
            table.setdefault(key, {c.label: None for c in columns})[column.label] = _cell(data)
            raw.setdefault(key, {})[column.label] = data
    rows = []
    for (target, case_id), cells in sorted(table.items()):
        steps = []
        previous: tuple[str, Cell] | None = None
        for label, cell in cells.items():
            if cell is None:
                continue
            if cell.harness:  # no verdict here: listed, and the next version compares past it
                steps.append(
                    {
                        "from": previous[0] if previous else label,
                        "to": label,
                        "change": HARNESS_ERROR,
                    }
                )
                continue
            if previous is not None:
                change = step_change(previous[1], cell)
                if change:
                    steps.append({"from": previous[0], "to": label, "change": change})
            previous = (label, cell)
        row = Row(case_id, target, cells, steps)
        _add_stat_changes(row, [raw[(target, case_id)].get(c.label) for c in columns], columns)
        rows.append(row)
    return rows


def _add_stat_changes(
    row: Row, outcomes: list[dict[str, Any] | None], columns: list[Column]
) -> None:
    """Each version's figures against the previous version's that has figures."""
    previous: tuple[str, dict[str, Any]] | None = None
    for column, data in zip(columns, outcomes):
        row.stats[column.label] = compile_stats(data) if data is not None else None
        if data is None or row.stats[column.label] is None:
            continue
        if previous is not None:
            changes, compared = compare_compile_stats([previous[1]], [data])
            row.stats_compared = row.stats_compared or compared > 0
            row.stat_changes += [(previous[0], column.label, c) for c in changes]
        previous = (column.label, data)


def stat_change_json(row: Row) -> list[dict[str, Any]]:
    return [
        {
            "from": old,
            "to": new,
            "kind": c.kind,
            "old": c.base,
            "new": c.new,
            "scope": c.scope,
            "grew": c.worse,
            "text": c.describe(),
        }
        for old, new, c in row.stat_changes
    ]


def to_json(columns: list[Column], rows: list[Row], changed_only: bool = False) -> dict[str, Any]:
    """``{"versions": [...], "cases": [{"case_id", "target", "verdicts", "stages", "change"}]}``
    (docs/versions.md); each case also carries its kinds, messages, steps and timings."""

    def per(row: Row, field: str) -> dict[str, Any]:
        return {label: getattr(c, field) if c else None for label, c in row.cells.items()}

    return {
        "versions": [
            {
                "label": c.label,
                "iree_compiler": c.info.get("iree_compiler"),
                "iree_runtime": c.info.get("iree_runtime"),
                "revision": c.info.get("revision"),
                "build": c.info.get("build"),
                "cases_run": sum(1 for r in rows if r.cells.get(c.label)),
                "seconds": round(
                    sum(cell.duration for r in rows if (cell := r.cells.get(c.label))), 1
                ),
            }
            for c in columns
        ],
        "cases": [
            {
                "case_id": r.case_id,
                "target": r.target,
                "verdicts": per(r, "status"),
                "stages": per(r, "stage"),
                "kinds": per(r, "kind"),
                "messages": per(r, "message"),
                "durations": per(r, "duration"),
                "timings": per(r, "timing_s"),
                "compile_stats": {c.label: r.stats.get(c.label) for c in columns},
                "stat_changes": stat_change_json(r),
                "change": r.change,
                "steps": r.steps,
                "worse": r.worse,
            }
            for r in rows
            if r.change or r.stat_changes or not changed_only
        ],
    }


_REVISION = re.compile(r"[0-9a-fA-F]{7,40}")


def compare_link(old: str | None, new: str | None) -> str | None:
    """GitHub's compare page between two IREE revisions (commit hashes only: any other
    text could close the link and inject Markdown)."""
    if not old or not new or not all(_REVISION.fullmatch(str(r)) for r in (old, new)):
        return None
    return f"https://github.com/iree-org/iree/compare/{old}...{new}"


def _esc(text: str) -> str:
    """Untrusted text (a version's label, a target, a diagnostic) as inert Markdown."""
    return md_text(text)


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "—"
    if cell.harness:
        return f"harness error (IREE not loaded): {_esc(cell.message[:80])}"
    if cell.flaky:
        return f"flaky ({_esc(cell.kind)} last)"
    if cell.kind == "pass":
        return "pass"
    message = f": {_esc(cell.message[:80])}" if cell.message else ""
    return f"{_esc(cell.kind)}{message}"


def markdown(columns: list[Column], rows: list[Row], max_listed: int = 100) -> str:
    """The step summary: each version with its revision, then every changed case."""
    lines = ["## IREE versions compared", ""]
    lines += [
        "| version | IREE compiler | revision | cases run | pass | seconds |",
        "|---|---|---|---:|---:|---:|",
    ]
    for c in columns:
        cells = [r.cells.get(c.label) for r in rows]
        run = [x for x in cells if x]
        revision = c.info.get("revision") or "?"
        lines.append(
            f"| {_esc(c.label)} | {_esc(c.info.get('iree_compiler') or '?')} | "
            f"{md_code(str(revision)[:12])} | "
            f"{len(run)} | {sum(1 for x in run if x.kind == 'pass')} | "
            f"{sum(x.duration for x in run):.0f} |"
        )
    for old, new in zip(columns, columns[1:]):
        link = compare_link(old.info.get("revision"), new.info.get("revision"))
        if link:
            lines.append(f"\n{_esc(old.label)} → {_esc(new.label)}: [IREE changes]({link})")
    changed = [r for r in rows if r.change]
    worse = [r for r in changed if r.worse]
    lines += [
        "",
        f"**{len(changed)} case(s) changed**, {len(worse)} worse in a newer version"
        + (" (the gate fails)." if worse else "."),
    ]
    if changed:
        head = " | ".join(_esc(c.label) for c in columns)
        lines += [
            "",
            f"| case | target | change | {head} |",
            "|---|---|---|" + "---|" * len(columns),
        ]

        def row(r: Row) -> str:
            cells = " | ".join(_cell_text(r.cells.get(c.label)) for c in columns)
            return f"| {md_code(r.case_id)} | {_esc(r.target)} | {_esc(r.change)} | {cells} |"

        lines += capped_lines(changed, max_listed, row, _more_in_json)
    lines += stats_markdown(rows, max_listed)
    return "\n".join(lines) + "\n"


def _more_in_json(left_out: int) -> str:
    return f"\n… and {left_out} more (see the JSON)."


def _stat_row(change: tuple[Row, str, str, StatChange]) -> str:
    r, old, new, c = change
    return (
        f"| {md_code(r.case_id)} | {_esc(r.target)} | {_esc(old)} → {_esc(new)} | "
        f"{_esc(c.describe())} |"
    )


def stats_markdown(rows: list[Row], max_listed: int = 100) -> list[str]:
    """The compile statistics' changes (nothing when no case had figures in two versions)."""
    compared = sum(1 for r in rows if r.stats_compared)
    if not compared:
        return []
    changes = [(r, old, new, c) for r in rows for old, new, c in r.stat_changes]
    grew = sum(1 for *_, c in changes if c.worse)
    lines = [
        "",
        f"**Compile statistics: {len(changes)} change(s)** over {compared} case(s) with "
        f"figures in two versions or more, {grew} growth(s) (dispatch count, or module size "
        "by at least 1 KiB and 10 %, as `compare` counts them).",
    ]
    if changes:
        lines += ["", "| case | target | versions | change |", "|---|---|---|---|"]
        lines += capped_lines(changes, max_listed, _stat_row, _more_in_json)
    return lines
