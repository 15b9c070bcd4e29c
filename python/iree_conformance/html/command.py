"""``iree-conformance report ... --html``: the CLI side of the HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..report import ReportError
from . import inputs, trend


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The report subcommand's HTML options."""
    p.add_argument("--html", metavar="PATH", help="also write a self-contained HTML report here")
    p.add_argument(
        "--trend",
        metavar="FILE",
        help="earlier trend points (from --trend-out) for the trend chart; a missing file is no history",
    )
    p.add_argument(
        "--trend-out",
        metavar="FILE",
        help="write the trend points (earlier ones plus these results) here",
    )
    p.add_argument(
        "--onnx-data-dir",
        metavar="DIR",
        help="generated ONNX operator tests, for the operator scoreboard (default: $IREE_CONFORMANCE_DATA or the user cache dir)",
    )
    p.add_argument(
        "--no-generate-ops",
        action="store_true",
        help="never run onnx's test generators to map tests to operators (fall back to names)",
    )


def current_document(loaded: list[inputs.Loaded]) -> dict[str, Any]:
    """What the Markdown report renders: the one results file, else the merged current run."""
    current, _ = inputs.split_current(loaded)
    if len(current) == 1 and current[0].data.get("kind") != "merged":
        return current[0].data
    merged = inputs.merge_loaded(current)
    metas = inputs.metadata_list(merged)
    return {"metadata": metas[-1] if metas else {}, "outcomes": merged["outcomes"]}


def write_html(args: argparse.Namespace, loaded: list[inputs.Loaded]) -> None:
    """Renders --html (and --trend-out); raises ReportError on a bad trend file."""
    from . import render  # Jinja2: only when a page is asked for

    try:
        old = trend.read_trend(Path(args.trend)) if args.trend else []
    except (ValueError, OSError) as e:
        raise ReportError(str(e)) from None
    options = render.Options(
        slowest=args.slowest,
        trend_points=old,
        generate_ops=not args.no_generate_ops,
        data_dir=Path(args.onnx_data_dir) if args.onnx_data_dir else None,
    )
    page = render.render_html(loaded, options)
    if args.html:
        size = render.write_html(Path(args.html), page)
        print(f"wrote {args.html} ({size / 1024:.1f} KiB)", file=sys.stderr)
    if args.trend_out:
        trend.write_trend(Path(args.trend_out), page.trend_points)
