"""Fills the Jinja2 template with the report's numbers; one self-contained HTML page."""

from __future__ import annotations

import datetime
import importlib.resources
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from iree_conformance.common.stats import format_duration
from iree_conformance.expectations.known_issues import issue_url
from iree_conformance.report import model as report_model
from iree_conformance.report.html import charts, operators, summary, trend
from iree_conformance.report.html.inputs import Loaded, merge_loaded, metadata_list, split_current
from iree_conformance.report.model import ReportModel
from iree_conformance.report.speed import format_bytes, speed_rows

TEMPLATE = "report.html.j2"
MATRIX_ID = "matrix"  # the matrix table's id (the browser check looks for it)


@dataclass
class Options:
    """What to put on the page besides the defaults."""

    slowest: int = 20
    max_groups: int = 60
    examples: int = 5
    max_listed: int = 50
    data_dir: Path | None = None
    generate_ops: bool = True
    trend_points: list[dict[str, Any]] = field(default_factory=list)
    title: str = "IREE conformance report"


@dataclass
class Page:
    """The rendered page and the trend points it drew (for --trend-out)."""

    html: str
    trend_points: list[dict[str, Any]]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined
    )
    env.filters["pct"] = lambda r: f"{100 * r:.1f} %"
    return env


def _template() -> jinja2.Template:
    text = importlib.resources.files(__package__).joinpath(TEMPLATE).read_text(encoding="utf-8")
    return _environment().from_string(text)


def _scoreboard(
    outcomes: list[dict[str, Any]], options: Options, loaded: list[Loaded]
) -> operators.Scoreboard | None:
    names = {
        o["case_id"][len(operators.PREFIX) :]
        for o in outcomes
        if o.get("suite") == operators.SUITE
        and str(o.get("case_id", "")).startswith(operators.PREFIX)
    }
    if not names:
        return None
    versions = sorted({m["onnx"] for x in loaded for m in metadata_list(x.data) if m.get("onnx")})
    data_dir = options.data_dir if options.data_dir else operators.default_data_dir()
    opmap = operators.resolve(names, data_dir, versions, options.generate_ops)
    return operators.scoreboard(outcomes, opmap)


def _trend_charts(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    days = sorted({p["day"] for p in points})
    if len(days) < 2:
        return []
    out = []
    for suite in sorted({p["suite"] for p in points}):
        by_day = {p["day"]: p for p in points if p["suite"] == suite}
        series = {
            name: [by_day[d][key] if d in by_day else None for d in days]
            for name, key in (("pass", "pass"), ("total", "total"))
        }
        out.append({"suite": suite, "chart": charts.line_chart(days, series)})
    return out


def context(
    loaded: list[Loaded], options: Options, model: ReportModel | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The template's variables, and the trend points. ``model`` is the report model of
    the current run (built here from ``loaded`` when not given)."""
    current, history = split_current(loaded)
    if model is None:
        model = report_model.build(merge_loaded(current), options.slowest)
    points = trend.combine(options.trend_points, trend.points_of(loaded))
    columns = model.columns
    groups = model.failure_groups
    ctx = {
        "title": options.title,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "header": summary.header(model.runs),
        "run_count": len(model.runs),
        "outcome_count": len(model.outcomes),
        "repeats_dropped": model.repeats_dropped,
        "sources": [x.source for x in current],
        "history_sources": [x.source for x in history],
        "matrix_id": MATRIX_ID,
        "model": model,
        "columns": columns,
        "colors": {v: charts.color(v) for v in columns},
        "matrix": [
            {"row": r, "bar": charts.stacked_bar(r.counts, columns, 160)} for r in model.counts
        ],
        "totals": model.totals,
        "funnels": model.funnels,
        "mostly_not_judged": report_model.mostly_not_judged(model.outcomes),
        "first_line": report_model.first_line,
        "funnel_steps": list(report_model.FUNNEL_STEPS),
        "scoreboard": _scoreboard(model.outcomes, options, current),
        "rate_color": charts.rate_color,
        "failing_lines": operators.failing_lines,
        "issue_url": issue_url,
        "platform_of": summary.platform_of,
        "groups": groups[: options.max_groups],
        "group_count": len(groups),
        "failure_count": model.failure_count,
        "unexpected_in_groups": sum(g.unexpected for g in groups),
        "examples": options.examples,
        "max_listed": options.max_listed,
        "slowest": model.slowest,
        "speed": speed_rows(model.timing),
        "format_duration": format_duration,
        "format_bytes": format_bytes,
        "trend": _trend_charts(points),
        "trend_days": len({p["day"] for p in points}),
    }
    return ctx, points


def render_html(
    loaded: list[Loaded], options: Options | None = None, model: ReportModel | None = None
) -> Page:
    """The page for the given inputs (current run merged, older inputs as history)."""
    ctx, points = context(loaded, options or Options(), model)
    return Page(_template().render(**ctx), points)


def write_html(path: Path, page: Page) -> int:
    """Writes the page; returns its size in bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = page.html.encode("utf-8")
    path.write_bytes(data)
    return len(data)


def render_versions(columns: list[Any], rows: list[Any]) -> str:
    """The page of ``iree-conformance versions --html``: a column per version, a row per
    changed case (report/version_compare.py makes the columns and rows)."""
    from iree_conformance.report import version_compare

    data = version_compare.to_json(columns, rows)
    versions = [
        {**v, "passed": sum(1 for r in rows if (c := r.cells.get(v["label"])) and c.kind == "pass")}
        for v in data["versions"]
    ]
    links = [
        {"old": a.label, "new": b.label, "url": url}
        for a, b in zip(columns, columns[1:])
        if (url := version_compare.compare_link(a.info.get("revision"), b.info.get("revision")))
    ]
    changed = [r for r in rows if r.change]
    text = (
        importlib.resources.files(__package__)
        .joinpath("versions.html.j2")
        .read_text(encoding="utf-8")
    )
    return (
        _environment()
        .from_string(text)
        .render(
            versions=versions,
            links=links,
            changed=changed,
            worse=sum(1 for r in changed if r.worse),
            stats_compared=sum(1 for r in rows if r.stats_compared),
            stat_changes=[(r, old, new, c) for r in rows for old, new, c in r.stat_changes],
        )
    )
