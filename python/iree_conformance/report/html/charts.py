"""Geometry for the inline SVG charts: numbers only; the template draws the shapes."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

#: Fill colour of each verdict; unknown verdicts are grey.
COLORS = {
    "pass": "#2e9d4f",
    "xfail": "#d9a21b",
    "flaky": "#8e5bd6",
    "fail": "#d6453d",
    "xpass": "#e8772e",
    "skip": "#a7adb5",
    "not judged": "#7d8fa3",
}
OTHER_COLOR = "#5c6470"


def color(verdict: str) -> str:
    return COLORS.get(verdict, OTHER_COLOR)


@dataclass(frozen=True)
class Segment:
    """One verdict's share of a stacked bar."""

    x: float
    width: float
    verdict: str
    count: int
    color: str


def stacked_bar(counts: Counter, columns: list[str], width: float) -> list[Segment]:
    """Segments of a bar ``width`` wide, one per verdict with a non-zero count."""
    total = sum(counts.values())
    segments, x = [], 0.0
    for verdict in columns:
        n = counts.get(verdict, 0)
        if n and total:
            w = width * n / total
            segments.append(Segment(round(x, 2), round(w, 2), verdict, n, color(verdict)))
            x += w
    return segments


def rate_color(rate: float) -> str:
    """Red (0) through amber to green (1), as an hsl() colour."""
    return f"hsl({round(120 * max(0.0, min(1.0, rate)))}, 55%, 72%)"


@dataclass(frozen=True)
class LineChart:
    """A small line chart: polylines in SVG coordinates, axis labels and point markers."""

    width: int
    height: int
    lines: list[dict[str, Any]]
    x_labels: list[tuple[float, str]]
    y_labels: list[tuple[float, str]]


def line_chart(
    days: list[str],
    series: dict[str, list[int | None]],
    width: int = 420,
    height: int = 160,
    pad: int = 36,
) -> LineChart:
    """Series of values per day (None: no value that day) scaled into width x height."""
    values = [v for vs in series.values() for v in vs if v is not None]
    top = max(values, default=1) or 1
    step = (width - 2 * pad) / max(len(days) - 1, 1)

    def xy(i: int, v: int) -> tuple[float, float]:
        return round(pad + i * step, 1), round(height - pad - (height - 2 * pad) * v / top, 1)

    lines = []
    for name, vs in series.items():
        pts = [xy(i, v) for i, v in enumerate(vs) if v is not None]
        lines.append(
            {
                "name": name,
                "points": " ".join(f"{x},{y}" for x, y in pts),
                "markers": pts,
                "last": vs[-1] if vs else None,
            }
        )
    every = max(1, len(days) // 6)
    x_labels = [
        (xy(i, 0)[0], d[5:]) for i, d in enumerate(days) if i % every == 0 or i == len(days) - 1
    ]
    y_labels = [(xy(0, v)[1], str(v)) for v in sorted({0, top // 2, top})]
    return LineChart(width, height, lines, x_labels, y_labels)
