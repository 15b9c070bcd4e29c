"""``iree-conformance report ... --html``: the CLI side of the HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iree_conformance.report import model as report_model
from iree_conformance.report.html import inputs, trend
from iree_conformance.report.markdown import ReportError
from iree_conformance.report.model import ReportModel


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


def current_model(loaded: list[inputs.Loaded], slowest: int) -> ReportModel:
    """The report model of the current run (the inputs' newest, merged; history left out)."""
    current, _ = inputs.split_current(loaded)
    return report_model.build(inputs.merge_loaded(current), slowest)


def write_html(
    args: argparse.Namespace, loaded: list[inputs.Loaded], model: ReportModel | None = None
) -> None:
    """Renders --html (and --trend-out); raises ReportError on a bad trend file."""
    from iree_conformance.report.html import render  # Jinja2: only when a page is asked for

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
    page = render.render_html(loaded, options, model)
    if args.html:
        size = render.write_html(Path(args.html), page)
        print(f"wrote {args.html} ({size / 1024:.1f} KiB)", file=sys.stderr)
    if args.trend_out:
        trend.write_trend(Path(args.trend_out), page.trend_points)
