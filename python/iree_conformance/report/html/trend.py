"""Nightly history: pass counts per suite and UTC day, for the trend chart.

Points come from the results files given (each file's day is the UTC date of its start)
and from a trend file written by an earlier report (``--trend-out``), so a nightly run
that downloads the previous nightly's artifact carries the whole history forward. A
point from a results file replaces a trend-file point of the same day and suite.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from iree_conformance.report.html.inputs import Loaded, merge_loaded
from iree_conformance.report.merging import suite_of

KIND = "trend"
SCHEMA = 1
MAX_DAYS = 120


def points_of(loaded: list[Loaded]) -> list[dict[str, Any]]:
    """[{day, suite, pass, total}] from results files, files of one day merged."""
    by_day: dict[str, list[Loaded]] = {}
    for x in loaded:
        if x.started:
            by_day.setdefault(x.started.date().isoformat(), []).append(x)
    points = []
    for day, files in sorted(by_day.items()):
        passed, total = Counter[str](), Counter[str]()
        for o in merge_loaded(files)["outcomes"]:
            total[suite_of(o)] += 1
            passed[suite_of(o)] += o.get("verdict") == "pass"
        points += [
            {"day": day, "suite": s, "pass": passed[s], "total": total[s]} for s in sorted(total)
        ]
    return points


def read_trend(path: Path) -> list[dict[str, Any]]:
    """Points of a trend file; [] when it does not exist (no history yet)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    if (
        not isinstance(data, dict)
        or data.get("kind") != KIND
        or not isinstance(data.get("points"), list)
    ):
        raise ValueError(
            f"{path}: not a trend file (written by iree-conformance report --trend-out)"
        )
    return [p for p in data["points"] if {"day", "suite", "pass", "total"} <= set(p)]


def combine(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Points by (day, suite), ``new`` winning; only the last MAX_DAYS days kept."""
    table = {(p["day"], p["suite"]): p for p in [*old, *new]}
    days = sorted({day for day, _ in table})[-MAX_DAYS:]
    return [table[k] for k in sorted(table) if k[0] in days]


def write_trend(path: Path, points: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"schema": SCHEMA, "kind": KIND, "points": points}, indent=1) + "\n",
        encoding="utf-8",
        newline="\n",
    )
