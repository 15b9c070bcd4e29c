"""The history site: static, self-contained pages made from a history state.

``index.html`` has the trend per suite, target and OS (folded weeks, then kept nights),
the cases that started failing within the history, the flaky ones, and a search box
(a few lines of inline JavaScript over the case index inlined as JSON; ``?q=NAME``
fills it). ``cases/<slug>.html`` is one page per case: per target and OS, when it
started failing and with which IREE version, when it last passed, its flaky record,
a strip of its verdicts and its compile statistics' changes. Nothing is loaded from elsewhere: no scripts, fonts or styles.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.resources
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iree_conformance.report.html import charts, history
from iree_conformance.report.html.render import _environment
from iree_conformance.report.speed import trend_charts

if TYPE_CHECKING:  # Jinja2 itself comes only through render (ARCHITECTURE.md)
    import jinja2

INDEX_TEMPLATE = "history_index.html.j2"
CASE_TEMPLATE = "history_case.html.j2"
CASE_DIR = "cases"
MAX_LISTED = 300
ABSENT_COLOR = "#eef0f3"


@dataclass(frozen=True)
class SiteStats:
    pages: int
    bytes: int


def slug(case_id: str) -> str:
    """A file name for the case's page: readable, and unique by a hash of the whole id."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", case_id).strip("._")[:80]
    return f"{readable}-{hashlib.sha1(case_id.encode('utf-8')).hexdigest()[:10]}"


def _template(name: str) -> jinja2.Template:
    text = importlib.resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return _environment().from_string(text)


def _periods(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Folded weeks, then kept nights, oldest first: {label, kind}."""
    weeks = [{"label": w["week"], "kind": "week"} for w in state["weeks"]]
    return weeks + [{"label": n["day"], "kind": "night"} for n in state["nights"]]


def _trend(state: dict[str, Any]) -> list[dict[str, Any]]:
    """One chart per suite x target x OS: pass and total per period."""
    periods = _periods(state)
    series: dict[tuple[str, str], dict[str, list[int | None]]] = {}

    def slot(suite: str, cell: str) -> dict[str, list[int | None]]:
        return series.setdefault(
            (suite, cell), {"pass": [None] * len(periods), "total": [None] * len(periods)}
        )

    weeks = {w["week"]: i for i, w in enumerate(state["weeks"])}
    for p in state["trend_weeks"]:
        if p["week"] in weeks:
            s = slot(p["suite"], p["cell"])
            s["pass"][weeks[p["week"]]], s["total"][weeks[p["week"]]] = p["pass"], p["total"]
    offset = len(state["weeks"])
    for i in range(len(state["nights"])):
        for (suite, cell, what), value in history.night_counts(state, i).items():
            slot(suite, cell)[what][offset + i] = value
    labels = [p["label"] for p in periods]
    return [
        {
            "suite": suite,
            "cell": cell,
            "points": sum(v is not None for v in values["pass"]),
            "chart": charts.line_chart(labels, values),
        }
        for (suite, cell), values in sorted(series.items())
    ]


def _cell_view(
    state: dict[str, Any], key: str, cell: dict[str, Any], periods: list[dict[str, Any]]
) -> dict[str, Any]:
    codes = cell["weeks"] + cell["nights"]
    flaky, ran, last_flaky = history.flaky_record(state, cell)
    return {
        "key": key,
        "streak": history.streak(state, cell),
        "strip": _strip(periods, codes),
        "nights": cell["nights"],
        "flaky": flaky,
        "ran": ran,
        "last_flaky": last_flaky,
        "reason": cell.get("reason", ""),
        "reason_night": cell.get("reason_night"),
        "stats": _stats_rows(state, cell),
        "speed": trend_charts(
            [
                (_day(n["id"]), cell["speed"][n["id"]])
                for n in state["nights"]
                if n["id"] in cell.get("speed", {})
            ]
        ),
    }


def _stats_rows(state: dict[str, Any], cell: dict[str, Any]) -> list[dict[str, Any]]:
    """The cell's compile statistics over time: each recorded entry, with what changed."""
    iree = {n["id"]: n.get("iree_compiler") for n in state["nights"]}
    rows, previous = [], None
    for entry in cell.get("stats", []):
        if previous is None:
            change = "first figures kept"
        elif previous[3] != entry[3]:
            change = f"compiled as a {entry[3]} now (figures of another scope)"
        else:
            change = "; ".join(c.describe() for c in history.stat_changes(previous, entry))
        rows.append(
            {
                "night": _day(entry[0]),
                "iree": iree.get(entry[0]) or "(a folded night)",
                "dispatches": entry[1],
                "module_bytes": entry[2],
                "scope": entry[3],
                "change": change,
            }
        )
        previous = entry
    return rows


def _strip(periods: list[dict[str, Any]], codes: str) -> list[dict[str, Any]]:
    """Runs of one verdict over periods of one kind (weeks, nights): x and width in
    periods, a tooltip naming the first and last; runs keep a page small."""
    runs: list[dict[str, Any]] = []
    for i, (p, c) in enumerate(zip(periods, codes)):
        week = p["kind"] == "week"
        if runs and runs[-1]["code"] == c and runs[-1]["week"] == week:
            runs[-1].update(width=runs[-1]["width"] + 1, last=p["label"])
            continue
        runs.append(
            {"code": c, "week": week, "x": i, "width": 1, "first": p["label"], "last": p["label"]}
        )
    for r in runs:
        verdict = history.VERDICT_OF.get(r["code"], r["code"])
        span = r["first"] if r["width"] == 1 else f"{r['first']} to {r['last']} ({r['width']})"
        r["title"] = f"{span}: {verdict}" + (" (worst of each week)" if r["week"] else "")
        r["color"] = ABSENT_COLOR if r["code"] == history.ABSENT else charts.color(verdict)
    return runs


def _day(night_id: str | None) -> str:
    return (
        f"{night_id[:10]} {night_id[11:16]} UTC"
        if night_id and len(night_id) >= 16
        else (night_id or "")
    )


def build_site(
    state: dict[str, Any], out_dir: Path, title: str = "IREE conformance history"
) -> SiteStats:
    """Writes index.html and one page per case under ``out_dir``; returns what it wrote."""
    out_dir = Path(out_dir)
    pages_dir = out_dir / CASE_DIR
    pages_dir.mkdir(parents=True, exist_ok=True)
    for old in pages_dir.glob("*.html"):  # cases that left the history
        old.unlink()
    env = {
        "title": title,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "nights": state["nights"],
        "weeks": state["weeks"],
        "day": _day,
        "verdict_of": history.VERDICT_OF,
        "colors": {v: charts.color(v) for v in history.CODES},
    }
    periods = _periods(state)
    case_page = _template(CASE_TEMPLATE)
    index, failing, flaky = [], [], []
    written = 0
    for case_id in sorted(state["cases"]):
        case = state["cases"][case_id]
        name = slug(case_id)
        cells = [_cell_view(state, k, c, periods) for k, c in sorted(case["cells"].items())]
        states = sorted({c["streak"].state or "not run" for c in cells})
        index.append([case_id, f"{CASE_DIR}/{name}.html", ", ".join(states)])
        for c in cells:
            href = f"{CASE_DIR}/{name}.html"
            if c["streak"].state == "failing" and c["streak"].since:
                failing.append({"case": case_id, "href": href, "cell": c})
            if c["flaky"]:
                flaky.append({"case": case_id, "href": href, "cell": c})
        html = case_page.render(**env, case_id=case_id, suite=case["suite"], cells=cells)
        written += _write(pages_dir / f"{name}.html", html)
    failing.sort(key=lambda x: (x["cell"]["streak"].since, x["case"]), reverse=True)
    flaky.sort(key=lambda x: (-x["cell"]["flaky"], x["case"]))
    html = _template(INDEX_TEMPLATE).render(
        **env,
        case_count=len(index),
        index=index,
        trend=_trend(state),
        failing=failing[:MAX_LISTED],
        failing_count=len(failing),
        flaky=flaky[:MAX_LISTED],
        flaky_count=len(flaky),
        version_runs=history.version_runs(state),
        version_steps=[
            {
                "step": step,
                "worse": [(c, k, f"{CASE_DIR}/{slug(c)}.html") for c, k in step.newly_failing][
                    :MAX_LISTED
                ],
                "better": [(c, k, f"{CASE_DIR}/{slug(c)}.html") for c, k in step.newly_passing][
                    :MAX_LISTED
                ],
                "stats": [
                    (c, k, f"{CASE_DIR}/{slug(c)}.html", change.describe())
                    for c, k, change in step.stat_changes
                ][:MAX_LISTED],
            }
            for step in history.version_steps(state)
        ],
    )
    written += _write(out_dir / "index.html", html)
    return SiteStats(len(index) + 1, written)


def _write(path: Path, html: str) -> int:
    data = html.encode("utf-8")
    path.write_bytes(data)
    return len(data)
