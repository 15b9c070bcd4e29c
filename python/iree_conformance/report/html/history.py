"""The nightly history: every case's verdict per night, folded into weeks as nights age.

The state (``iree-conformance history --state``, a JSON file the nightly carries forward
in its results artifact, like the report's trend file) holds:

- ``began``: the first night ever added (a case failing on it may have failed before);
- ``nights``: the last ``keep_nights`` nights in full, oldest first; a night is the
  results files that started within 12 hours of each other (one nightly run on several
  OSes, targets and shards), named by its earliest start;
- ``weeks``: older nights folded into one summary per ISO week, the last ``keep_weeks``;
- ``cases``: per case id, one *cell* per target and OS/architecture with one verdict
  code per kept night (``nights``) and one per kept week (``weeks``, the worst verdict
  of the week), the failing/passing streak as of the oldest kept night (``base``, so
  "failing since" survives folding), the flaky nights folded away (counted since the history began), and the reason of
  its latest unexpected or expected failure;
- ``trend_weeks``: the pass and total counts per suite, target and OS of each folded
  week (its last night); the kept nights' counts are computed from the cells;
- per cell, ``stats``: its compile statistics (``[night id, dispatches, module bytes,
  scope]``) on the first kept night that had them and on each night they changed by
  ``compare``'s rules (report/compile_stats.py), so a few entries per cell, at most one
  from before the kept nights.

So the state grows with the number of cases, never with the number of nights: at most
``keep_nights + keep_weeks`` codes per cell.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import Counter
from dataclasses import dataclass
from typing import Any

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.report.compile_stats import StatChange, compare_compile_stats, compile_stats
from iree_conformance.report.merging import suite_of
from iree_conformance.report.speed import trend_point

KIND = "history"
SCHEMA = 1
KEEP_NIGHTS = 30
KEEP_WEEKS = 52
REASON_CHARS = 300

#: One character per verdict; "." is "not run that night" (the case or cell was absent).
CODES = {"pass": "P", "xpass": "X", "fail": "F", "xfail": "x", "flaky": "k", "skip": "s"}
OTHER = "?"
ABSENT = "."
VERDICT_OF = {code: verdict for verdict, code in CODES.items()} | {OTHER: "other", ABSENT: "-"}
FAILING = frozenset("Fx")  # IREE fails the case (expected or not)
PASSING = frozenset("PX")  # IREE passes it; flaky, skip and absent leave a streak alone
SEVERITY = "F?Xkx" + "Ps" + ABSENT  # worst first: a week shows its worst night


class HistoryError(ConfigurationError):
    """A state file or an input that cannot be used (the message says which and why)."""


@dataclass(frozen=True)
class Night:
    """One night's outcomes (merged across its files) and what it ran."""

    id: str  # ISO start time of its earliest file
    iree_compiler: str
    sources: list[str]
    outcomes: list[dict[str, Any]]

    @property
    def day(self) -> str:
        return self.id[:10]


@dataclass(frozen=True)
class Streak:
    """Where a cell stands after the last kept night."""

    state: str | None  # "failing", "passing", or None (never ran, or only skipped/flaky)
    since: str | None  # night id the current state started (None: before the history)
    since_iree: str | None
    last_pass: str | None
    last_pass_iree: str | None


def code_of(verdict: Any) -> str:
    return CODES.get(str(verdict), OTHER)


def cell_key(outcome: dict[str, Any]) -> str:
    """'llvm-cpu linux/x86_64': one cell per target and OS/architecture."""
    return f"{outcome.get('target', '?')} {outcome.get('os', '?')}/{outcome.get('arch', '?')}"


def worst(codes: str) -> str:
    return min(codes, key=SEVERITY.index) if codes else ABSENT


def week_of(day: str) -> str:
    year, week, _ = datetime.date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def empty_state() -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "kind": KIND,
        "began": None,
        "nights": [],
        "weeks": [],
        "trend_weeks": [],
        "cases": {},
    }


def check_state(data: Any, where: str) -> dict[str, Any]:
    """The state, after checking its shape and that every cell is aligned with it."""
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise HistoryError(
            f"{where}: not a history state file (written by iree-conformance history)"
        )
    if data.get("schema") != SCHEMA:
        raise HistoryError(f"{where}: history schema {data.get('schema')!r}, expected {SCHEMA}")
    for key, kind in (("nights", list), ("weeks", list), ("trend_weeks", list), ("cases", dict)):
        if not isinstance(data.get(key), kind):
            raise HistoryError(f"{where}: {key!r} missing or not a {kind.__name__}")
    n, w = len(data["nights"]), len(data["weeks"])
    for case_id, case in data["cases"].items():
        for key, cell in case.get("cells", {}).items():
            if len(cell.get("nights", "")) != n or len(cell.get("weeks", "")) != w:
                raise HistoryError(
                    f"{where}: case {case_id!r} cell {key!r} has {len(cell.get('nights', ''))} night(s) "
                    f"and {len(cell.get('weeks', ''))} week(s) for {n} and {w}: the file is damaged; "
                    "delete it to start a new history"
                )
    return data


EMPTY_BASE: dict[str, Any] = dict.fromkeys(
    ("state", "since", "since_iree", "last_pass", "last_pass_iree")
)


def _new_cell(n: int, w: int) -> dict[str, Any]:
    """A cell stores only what it has: a passing case is its two code strings (most
    cells are), ``base``, ``flaky_folded``, ``last_flaky`` and ``reason`` come when set."""
    return {"nights": ABSENT * n, "weeks": ABSENT * w}


def _base(cell: dict[str, Any]) -> dict[str, Any]:
    return {**EMPTY_BASE, **cell.get("base", {})}


def _reason_of(outcome: dict[str, Any]) -> str:
    text = str(outcome.get("reason") or "")
    if not text:
        for d in outcome.get("diagnostics") or []:
            text = str(d.get("message", d) if isinstance(d, dict) else d)
            if text:
                break
    status = str(outcome.get("status") or "")
    text = f"{status}: {text}" if status and text else status or text
    return text[:REASON_CHARS]


def _cells_of(
    outcomes: list[dict[str, Any]],
) -> dict[tuple[str, str], tuple[str, str, dict[str, Any]]]:
    """(case id, cell key) -> (suite, code, outcome); two outcomes of one cell: the worst."""
    out: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = {}
    for o in outcomes:
        key = (str(o.get("case_id", "?")), cell_key(o))
        code = code_of(o.get("verdict"))
        old = out.get(key)
        if old is None or SEVERITY.index(code) < SEVERITY.index(old[1]):
            out[key] = (suite_of(o), code, o)
    return out


def add_night(state: dict[str, Any], night: Night) -> None:
    """Puts ``night`` in its place among the kept nights (replacing one of the same id)."""
    nights = state["nights"]
    ids = [x["id"] for x in nights]
    if state["weeks"] and ids and night.id < ids[0]:
        raise HistoryError(
            f"night {night.id} is older than the oldest night kept in full ({ids[0]}); "
            "older nights are already folded into weeks"
        )
    replace = night.id in ids
    if not state.get("began") or night.id < state["began"]:
        state["began"] = night.id  # the first night ever added: what failed then, failed before
    pos = ids.index(night.id) if replace else sum(i < night.id for i in ids)
    record = {
        "id": night.id,
        "day": night.day,
        "iree_compiler": night.iree_compiler,
        "sources": night.sources,
        "outcomes": len(night.outcomes),
    }
    if replace:
        nights[pos] = record
    else:
        nights.insert(pos, record)
    newest = pos == len(nights) - 1
    cells = _cells_of(night.outcomes)
    for case in state["cases"].values():
        for cell in case["cells"].values():
            s = cell["nights"]
            cell["nights"] = s[:pos] + ABSENT + s[pos + (1 if replace else 0) :]
    for (case_id, key), (suite, code, outcome) in cells.items():
        case = state["cases"].setdefault(case_id, {"suite": suite, "cells": {}})
        cell = case["cells"].get(key)
        if cell is None:
            cell = case["cells"][key] = _new_cell(len(nights), len(state["weeks"]))
        s = cell["nights"]
        cell["nights"] = s[:pos] + code + s[pos + 1 :]
        record_stats(cell, night.id, compile_stats(outcome))
        point = trend_point(outcome)
        if point:  # the speed figures, keyed by night (report/speed.py)
            cell.setdefault("speed", {})[night.id] = point
        if newest and code not in "Ps":
            cell["reason"], cell["reason_night"] = _reason_of(outcome), night.id
    _drop_empty(state)


StatEntry = list[Any]  # [night id, dispatches, module bytes, scope]


def _stat_outcome(entry: StatEntry) -> dict[str, Any]:
    """An entry as compare_compile_stats reads an outcome."""
    figures = {"dispatches": entry[1], "module_bytes": entry[2], "scope": entry[3]}
    return {"target": "", "case_id": "", "metrics": {"compile_stats": figures}}


def stat_changes(old: StatEntry, new: StatEntry) -> list[StatChange]:
    """What changed from one entry to the next, by compare's rules (none across scopes)."""
    return compare_compile_stats([_stat_outcome(old)], [_stat_outcome(new)])[0]


def record_stats(cell: dict[str, Any], night_id: str, stats: dict[str, Any] | None) -> None:
    """Keeps the night's figures when they are the first or differ from the night before's."""
    entries = [e for e in cell.get("stats", []) if e[0] != night_id]
    if stats is not None:
        entry = [night_id, stats.get("dispatches"), stats.get("module_bytes"), stats.get("scope")]
        before = [e for e in entries if e[0] < night_id]
        if not before or before[-1][3] != entry[3] or stat_changes(before[-1], entry):
            entries = sorted([*entries, entry], key=lambda e: str(e[0]))
    if entries:
        cell["stats"] = entries
    else:
        cell.pop("stats", None)


def figures_at(cell: dict[str, Any], night_id: str) -> StatEntry | None:
    """The cell's compile statistics as last recorded on or before the night."""
    seen = [e for e in cell.get("stats", []) if e[0] <= night_id]
    return seen[-1] if seen else None


def _drop_empty(state: dict[str, Any]) -> None:
    """Cases (and cells) with no code left in any kept night or week."""
    for case_id in list(state["cases"]):
        cells = state["cases"][case_id]["cells"]
        for key in list(cells):
            if set(cells[key]["nights"] + cells[key]["weeks"]) <= {ABSENT}:
                del cells[key]
        if not cells:
            del state["cases"][case_id]


def _advance(
    base: dict[str, Any], code: str, night: dict[str, Any], began: str | None
) -> dict[str, Any]:
    """The streak after one more night with ``code``. A state first seen on the night the
    history began has no known start (``since`` None: it may be older)."""
    base = dict(base)
    iree = night.get("iree_compiler")
    unknown = base["state"] is None and night["id"] == began
    if code in FAILING and base["state"] != "failing":
        base.update(
            state="failing",
            since=None if unknown else night["id"],
            since_iree=None if unknown else iree,
        )
    elif code in PASSING:
        if base["state"] != "passing":
            base.update(
                state="passing",
                since=None if unknown else night["id"],
                since_iree=None if unknown else iree,
            )
        base.update(last_pass=night["id"], last_pass_iree=iree)
    return base


def streak(state: dict[str, Any], cell: dict[str, Any]) -> Streak:
    """The cell's streak after its base and every kept night."""
    base = _base(cell)
    for code, night in zip(cell["nights"], state["nights"]):
        base = _advance(base, code, night, state.get("began"))
    return Streak(
        base["state"], base["since"], base["since_iree"], base["last_pass"], base["last_pass_iree"]
    )


@dataclass(frozen=True)
class VersionRun:
    """Consecutive kept nights that tested one IREE version."""

    version: str
    first: int  # index of its first night in ``state["nights"]``
    last: int  # index of its last night


@dataclass(frozen=True)
class VersionStep:
    """The move from one IREE version to the next among the kept nights, and the cells
    whose verdict turned with it: each cell's last verdict on the old version against its
    first on the new one (nights it did not run are passed over)."""

    before: VersionRun
    after: VersionRun
    newly_failing: list[tuple[str, str]]  # (case id, cell key)
    newly_passing: list[tuple[str, str]]
    #: (case id, cell key, change): compile statistics, the same two nights compared
    stat_changes: list[tuple[str, str, StatChange]] = dataclasses.field(default_factory=list)


def version_runs(state: dict[str, Any]) -> list[VersionRun]:
    """The kept nights split where the IREE version changes, oldest first (a version that
    comes back after another is a new run: the history's axis is time)."""
    runs: list[VersionRun] = []
    for i, night in enumerate(state["nights"]):
        version = str(night.get("iree_compiler") or "?")
        if runs and runs[-1].version == version:
            runs[-1] = VersionRun(version, runs[-1].first, i)
        else:
            runs.append(VersionRun(version, i, i))
    return runs


def _seen(codes: str, run: VersionRun) -> list[tuple[int, str]]:
    """(night index, code) of the run's nights the cell ran."""
    return [(i, codes[i]) for i in range(run.first, run.last + 1) if codes[i] != ABSENT]


def _last_seen(codes: str, run: VersionRun) -> str:
    seen = _seen(codes, run)
    return seen[-1][1] if seen else ABSENT


def _first_seen(codes: str, run: VersionRun) -> str:
    seen = _seen(codes, run)
    return seen[0][1] if seen else ABSENT


def _step_stat_changes(
    state: dict[str, Any], cell: dict[str, Any], before: VersionRun, after: VersionRun
) -> list[StatChange]:
    """The figures of the cell's last night on the old version against its first on the new."""
    old_seen, new_seen = _seen(cell["nights"], before), _seen(cell["nights"], after)
    if not cell.get("stats") or not old_seen or not new_seen:
        return []
    old = figures_at(cell, state["nights"][old_seen[-1][0]]["id"])
    new = figures_at(cell, state["nights"][new_seen[0][0]]["id"])
    return stat_changes(old, new) if old is not None and new is not None and old != new else []


def version_steps(state: dict[str, Any]) -> list[VersionStep]:
    """What changed at each change of IREE version among the kept nights."""
    runs = version_runs(state)
    steps = []
    for before, after in zip(runs, runs[1:]):
        worse, better = [], []
        stats: list[tuple[str, str, StatChange]] = []
        for case_id in sorted(state["cases"]):
            for key, cell in sorted(state["cases"][case_id]["cells"].items()):
                old = _last_seen(cell["nights"], before)
                new = _first_seen(cell["nights"], after)
                if old in PASSING and new in FAILING:
                    worse.append((case_id, key))
                elif old in FAILING and new in PASSING:
                    better.append((case_id, key))
                stats += [(case_id, key, c) for c in _step_stat_changes(state, cell, before, after)]
        steps.append(VersionStep(before, after, worse, better, stats))
    return steps


def night_counts(state: dict[str, Any], index: int) -> Counter[tuple[str, str, str]]:
    """(suite, cell key, "pass"|"total") -> count for kept night ``index``."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for case in state["cases"].values():
        for key, cell in case["cells"].items():
            code = cell["nights"][index]
            if code != ABSENT:
                counts[(case["suite"], key, "total")] += 1
                counts[(case["suite"], key, "pass")] += code == "P"
    return counts


def _fold_oldest(state: dict[str, Any]) -> None:
    night = state["nights"][0]
    week = week_of(night["day"])
    weeks = state["weeks"]
    merge = bool(weeks) and weeks[-1]["week"] == week
    counts = night_counts(state, 0)
    if merge:
        summary = weeks[-1]
        summary["last"] = night["day"]
        summary["nights"] += 1
        if night["iree_compiler"] not in summary["iree_compiler"]:
            summary["iree_compiler"].append(night["iree_compiler"])
        state["trend_weeks"] = [p for p in state["trend_weeks"] if p["week"] != week]
    else:
        weeks.append(
            {
                "week": week,
                "first": night["day"],
                "last": night["day"],
                "nights": 1,
                "iree_compiler": [night["iree_compiler"]],
            }
        )
    for (suite, key, what), value in sorted(counts.items()):
        if what == "total":
            state["trend_weeks"].append(
                {
                    "week": week,
                    "suite": suite,
                    "cell": key,
                    "pass": counts[(suite, key, "pass")],
                    "total": value,
                }
            )
    for case in state["cases"].values():
        for cell in case["cells"].values():
            code, rest = cell["nights"][0], cell["nights"][1:]
            base = _advance(_base(cell), code, night, state.get("began"))
            cell["base"] = {k: v for k, v in base.items() if v is not None}
            if not cell["base"]:
                del cell["base"]
            if code == "k":
                cell["flaky_folded"] = cell.get("flaky_folded", 0) + 1
                cell["last_flaky"] = night["id"]
            if merge:
                cell["weeks"] = cell["weeks"][:-1] + worst(cell["weeks"][-1] + code)
            else:
                cell["weeks"] += code
            cell["nights"] = rest
            if night["id"] in cell.get("speed", {}):  # figures are kept for kept nights only
                del cell["speed"][night["id"]]
            if cell.get("stats") and len(state["nights"]) > 1:
                # the kept nights' entries and the one they start from
                kept_from = state["nights"][1]["id"]
                older = [e for e in cell["stats"] if e[0] < kept_from]
                cell["stats"] = older[-1:] + [e for e in cell["stats"] if e[0] >= kept_from]
    del state["nights"][0]


def fold(
    state: dict[str, Any], keep_nights: int = KEEP_NIGHTS, keep_weeks: int = KEEP_WEEKS
) -> None:
    """Folds the nights beyond ``keep_nights`` into weeks and drops weeks beyond ``keep_weeks``."""
    if keep_nights < 1 or keep_weeks < 0:
        raise HistoryError("keep at least one night and zero or more weeks")
    while len(state["nights"]) > keep_nights:
        _fold_oldest(state)
    while len(state["weeks"]) > keep_weeks:
        dropped = state["weeks"].pop(0)["week"]
        state["trend_weeks"] = [p for p in state["trend_weeks"] if p["week"] != dropped]
        for case in state["cases"].values():
            for cell in case["cells"].values():
                cell["weeks"] = cell["weeks"][1:]
    _drop_empty(state)


def flaky_record(state: dict[str, Any], cell: dict[str, Any]) -> tuple[int, int, str | None]:
    """(flaky nights, nights it ran (skips not counted), last flaky night), kept and folded."""
    kept = [n["id"] for code, n in zip(cell["nights"], state["nights"]) if code == "k"]
    ran = sum(code not in (ABSENT, "s") for code in cell["nights"])
    folded_ran = sum(
        w["nights"] for code, w in zip(cell["weeks"], state["weeks"]) if code not in (ABSENT, "s")
    )
    return (
        cell.get("flaky_folded", 0) + len(kept),
        ran + folded_ran,
        kept[-1] if kept else cell.get("last_flaky"),
    )
