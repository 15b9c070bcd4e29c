"""The ``iree-conformance`` command: devices, report, update-expectations, run-bundle."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import report as report_mod
from .html import command as html_command
from .html import inputs as html_inputs

DEFAULT_TARGETS = Path(__file__).resolve().parents[2] / "conformance" / "targets.toml"


def _targets_path(value: str | None) -> Path:
    """--targets, else ./conformance/targets.toml, else the one beside this checkout."""
    if value:
        return Path(value)
    here = Path.cwd() / "conformance" / "targets.toml"
    return here if here.exists() else DEFAULT_TARGETS


def cmd_devices(args: argparse.Namespace) -> int:
    from .devices import describe, render
    from .targets import TargetError, load_targets

    try:
        targets = load_targets(_targets_path(args.targets))
    except TargetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    info = describe(targets)
    print(json.dumps(info, indent=1) if args.json else render(info))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    try:
        loaded = html_inputs.load([Path(p) for p in args.results])
        if args.html or args.trend_out:
            html_command.write_html(args, loaded)
    except report_mod.ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    markdown = report_mod.render_markdown(html_command.current_document(loaded), slowest=args.slowest)
    if args.output:
        Path(args.output).write_text(markdown, encoding="utf-8", newline="\n")
    elif not args.html:
        sys.stdout.write(markdown)
    if not args.no_step_summary and report_mod.append_step_summary(markdown):
        print("appended to $GITHUB_STEP_SUMMARY", file=sys.stderr)
    return 0


def cmd_run_bundle(args: argparse.Namespace) -> int:
    from .bundle import BundleError, run_bundle

    if args.timing_runs < 0:
        print("error: --timing-runs must be 0 or more", file=sys.stderr)
        return 2
    try:
        counts = run_bundle(Path(args.bundle), args.driver, Path(args.report_json), device=args.device,
                            force=args.force, timing_runs=args.timing_runs)
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    return 1 if counts.get("fail", 0) or counts.get("xpass", 0) else 0


def cmd_update_expectations(args: argparse.Namespace) -> int:
    """Applies a results JSON to the manifests, as --update-expectations would have."""
    from .expectations import manifest_paths, write_updated_manifest
    from .outcome import Outcome
    from .tomlio import load_toml

    try:
        data = report_mod.load_results(Path(args.results))
    except report_mod.ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    os_name = args.os or data.get("metadata", {}).get("os", "linux")
    directory = Path(args.expectations_dir) if args.expectations_dir else Path.cwd() / "conformance" / "expectations"
    outcomes = [Outcome.from_json(o) for o in data["outcomes"]]
    for target in sorted({o.target for o in outcomes}):
        ran = [o for o in outcomes if o.target == target]
        base_path, overlay_path = manifest_paths(directory, target, os_name)
        if args.overlay:
            base = load_toml(base_path).get("xfail", {}) if base_path.exists() else {}
            path, changed = overlay_path, write_updated_manifest(overlay_path, target, ran, base=base)
        else:
            path, changed = base_path, write_updated_manifest(base_path, target, ran)
        print(f"{'updated' if changed else 'unchanged'} {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="iree-conformance", description="IREE conformance suite tools")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("devices", help="list HAL drivers, their devices and which targets can run here")
    p.add_argument("--targets", help="targets file (default: conformance/targets.toml)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_devices)
    p = sub.add_parser("report", help="render results JSON files (from --report-json, or merged) as Markdown and HTML")
    p.add_argument("results", nargs="+", help="results JSON files: one run (several OSes, targets, shards) and optionally older runs (the trend)")
    p.add_argument("--output", "-o", help="write the Markdown here instead of stdout (with --html: only here)")
    p.add_argument("--slowest", type=int, default=10, help="how many slowest cases to list")
    p.add_argument("--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY")
    html_command.add_arguments(p)
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("update-expectations", help="apply a results JSON to the expectations manifests (like --update-expectations)")
    p.add_argument("results", help="results JSON file")
    p.add_argument("--expectations-dir", help="manifest folder (default: ./conformance/expectations)")
    p.add_argument("--overlay", action="store_true", help="write the per-OS overlay with the differences only")
    p.add_argument("--os", help="OS of the overlay (default: the results' metadata.os)")
    p.set_defaults(func=cmd_update_expectations)
    p = sub.add_parser("run-bundle", help="run a bundle made by --compile-only --bundle (needs only iree-base-runtime and numpy)")
    p.add_argument("bundle", help="bundle folder")
    p.add_argument("--driver", required=True, help="HAL driver, e.g. cuda, local-task")
    p.add_argument("--device", help="device URI (default: the driver's default device)")
    p.add_argument("--report-json", default="bundle-results.json", help="results file to write")
    p.add_argument("--force", action="store_true", help="run a bundle made by another IREE runtime version")
    p.add_argument("--timing-runs", type=int, default=0, help="time each case's function N times after a warm-up (median)")
    p.set_defaults(func=cmd_run_bundle)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
