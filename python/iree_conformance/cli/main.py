"""The ``iree-conformance`` command: devices, report, history, update-expectations, run-bundle,
check-model, export-jax."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from iree_conformance.cli import bench as bench_command
from iree_conformance.cli import compare as compare_command
from iree_conformance.common.errors import (
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    ConfigurationError,
    ConformanceError,
    exit_help,
)
from iree_conformance.report import markdown as report_mod
from iree_conformance.report.html import command as html_command
from iree_conformance.report.html import history_command
from iree_conformance.report.html import inputs as html_inputs
from iree_conformance.repro.command import run as repro_run

DEFAULT_TARGETS = Path(__file__).resolve().parents[3] / "conformance" / "targets.toml"


def _targets_path(value: str | None) -> Path:
    """--targets, else ./conformance/targets.toml, else the one beside this checkout
    (which an installed, non-editable package does not have)."""
    from iree_conformance.model.targets import TargetError

    if value:
        return Path(value)
    here = Path.cwd() / "conformance" / "targets.toml"
    for candidate in (here, DEFAULT_TARGETS):
        if candidate.exists():
            return candidate
    raise TargetError(
        f"no targets file: neither {here} nor {DEFAULT_TARGETS} exists; pass --targets PATH "
        "(conformance/targets.toml of an iree-conformance checkout) or run from the checkout"
    )


def cmd_devices(args: argparse.Namespace) -> int:
    from iree_conformance.model.devices import describe, render
    from iree_conformance.model.targets import load_targets

    targets = load_targets(_targets_path(args.targets))
    info = describe(targets)
    print(json.dumps(info, indent=1) if args.json else render(info))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    loaded = html_inputs.load([Path(p) for p in args.results])
    # One report model of the current run; the HTML and the Markdown both render it.
    model = html_command.current_model(loaded, args.slowest)
    if args.html or args.trend_out:
        html_command.write_html(args, loaded, model)
    markdown = report_mod.markdown_of(model)
    if args.output:
        Path(args.output).write_text(markdown, encoding="utf-8", newline="\n")
    elif not args.html:
        sys.stdout.write(markdown)
    if not args.no_step_summary and report_mod.append_step_summary(markdown):
        print("appended to $GITHUB_STEP_SUMMARY", file=sys.stderr)
    return 0


def cmd_run_bundle(args: argparse.Namespace) -> int:
    from iree_conformance.bundles.bundle import run_bundle

    if args.timing_runs < 0:
        raise ConfigurationError("--timing-runs must be 0 or more")
    counts = run_bundle(
        Path(args.bundle),
        args.driver,
        Path(args.report_json),
        device=args.device,
        force=args.force,
        timing_runs=args.timing_runs,
    )
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    return 1 if counts.get("fail", 0) or counts.get("xpass", 0) else 0


def cmd_check_model(args: argparse.Namespace) -> int:
    from iree_conformance.cli.check_model import run

    return run(args, _targets_path(args.targets))


def cmd_reduce(args: argparse.Namespace) -> int:
    from iree_conformance.cli.reduce import run

    return run(args, _targets_path(args.targets))


def cmd_update_expectations(args: argparse.Namespace) -> int:
    """Applies a results JSON to the manifests, as --update-expectations would have."""
    from iree_conformance.expectations.manifest import migrate_manifests, update_manifests
    from iree_conformance.model.outcome import Outcome
    from iree_conformance.model.targets import load_targets

    directory = (
        Path(args.expectations_dir)
        if args.expectations_dir
        else Path.cwd() / "conformance" / "expectations"
    )
    if args.migrate:
        if args.results:
            raise ConfigurationError("--migrate takes no results file")
        for path, changed in migrate_manifests(directory):
            print(f"{'migrated' if changed else 'unchanged'} {path}")
        return 0
    if not args.results:
        raise ConfigurationError("update-expectations needs a results JSON file (or --migrate)")
    data = report_mod.load_results(Path(args.results))
    os_name = args.os or data.get("metadata", {}).get("os", "linux")
    outcomes = [Outcome.from_json(o) for o in data["outcomes"]]
    fingerprint = data.get("metadata", {}).get("cpu_fingerprint")
    hosts = {
        name: fingerprint
        for name, t in load_targets(_targets_path(None)).items()
        if t.host_specific
    }
    for path, changed in update_manifests(
        directory, outcomes, os_name, overlay=args.overlay, hosts=hosts
    ):
        print(f"{'updated' if changed else 'unchanged'} {path}")
    return 0


def cmd_flakes(args: argparse.Namespace) -> int:
    """Runs a selection --repeat times and lists the cases whose result varied."""
    from iree_conformance.expectations.flakes import as_outcomes, find_flakes, render, to_json
    from iree_conformance.expectations.manifest import update_manifests

    conformance_dir = (
        Path(args.conformance_dir) if args.conformance_dir else Path.cwd() / "conformance"
    )
    if not (conformance_dir / "targets.toml").exists():
        raise ConfigurationError(
            f"{conformance_dir} holds no targets.toml; pass --conformance-dir (the folder `pytest conformance` runs)"
        )
    pytest_args = [a for a in args.pytest_args if a != "--"]
    results = find_flakes(
        conformance_dir,
        pytest_args,
        args.repeat,
        args.keep_store,
        lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(render(results, args.repeat))
    if args.json:
        Path(args.json).write_text(
            json.dumps(to_json(results, args.repeat), indent=1) + "\n",
            encoding="utf-8",
            newline="\n",
        )
    flaky = as_outcomes(results)
    if args.update_expectations and flaky:
        directory = (
            Path(args.expectations_dir)
            if args.expectations_dir
            else conformance_dir / "expectations"
        )
        from iree_conformance.common.platform_info import host_os

        for path, changed in update_manifests(directory, flaky, host_os()):
            print(f"{'updated' if changed else 'unchanged'} {path}")
    return 1 if flaky else 0


def cmd_compare_upstream(args: argparse.Namespace) -> int:
    """Lines our ONNX operator verdicts up with an iree-test-suites config."""
    from iree_conformance.expectations import upstream

    try:
        view = upstream.upstream_view(upstream.load_config(args.config))
        if args.results:
            merged: dict = {"outcomes": []}
            for path in args.results:
                # ours_from_results reads what it needs with .get: no key is required.
                data = report_mod.load_results(Path(path), ())
                metadata_os = data.get("metadata", {}).get("os")
                merged["outcomes"] += [{"os": metadata_os, **o} for o in data["outcomes"]]
            ours = upstream.ours_from_results(merged, args.target, ", ".join(args.results), args.os)
        else:
            ours = upstream.ours_from_manifest(
                _operator_case_ids(args.onnx_data_dir),
                Path(args.manifest or f"conformance/expectations/{args.target}.toml"),
            )
        tests = upstream.load_test_list(args.upstream_tests) if args.upstream_tests else None
        notes = upstream.load_notes(
            Path(args.notes) if args.notes else Path("conformance/expectations/iree-ci-notes.toml")
        )
    except OSError as e:
        raise ConfigurationError(str(e)) from None
    if not ours.kinds:
        raise ConfigurationError(
            f"no ONNX operator results for target {args.target} in {ours.source}"
        )
    data = upstream.report(ours, view, upstream.agree(ours, view, tests), notes)
    if args.json:
        Path(args.json).write_text(
            json.dumps(data, indent=1) + "\n", encoding="utf-8", newline="\n"
        )
    markdown = upstream.render(data)
    print(markdown)
    if args.step_summary and report_mod.append_step_summary(markdown + "\n"):
        print("appended to $GITHUB_STEP_SUMMARY", file=sys.stderr)
    return 1 if data["unexplained"] and args.fail_on_unexplained else 0


def cmd_export_jax(args: argparse.Namespace) -> int:
    from iree_conformance.frontends.jax_export import command

    bundled = Path(args.conformance) / "jax" if args.conformance else _conformance_dir() / "jax"
    return command.run(
        Path(args.dir),
        [Path(d) for d in args.jax_dir],
        bundled,
        Path(args.store_dir) if args.store_dir else None,
        args.no_cache,
    )


def _conformance_dir() -> Path:
    """./conformance, else the one beside this checkout."""
    return _targets_path(None).parent


def _operator_case_ids(data_dir: str | None) -> list[str]:
    """Every runnable ONNX operator case id (materializes the tests once, ~12 s)."""
    from iree_conformance.frontends.onnx import node_tests
    from iree_conformance.suites.onnx_ops import data_dir as default_data_dir

    root = node_tests.materialize(default_data_dir(data_dir))
    return [c.case_id for c in node_tests.load_cases(root) if not c.unsupported_reason]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iree-conformance", description="IREE conformance suite tools"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "devices", help="list HAL drivers, their devices and which targets can run here"
    )
    p.add_argument("--targets", help="targets file (default: conformance/targets.toml)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_devices)
    p = sub.add_parser(
        "report",
        help="render results JSON files (from --report-json, or merged) as Markdown and HTML",
    )
    p.add_argument(
        "results",
        nargs="+",
        help="results JSON files: one run (several OSes, targets, shards) and optionally older runs (the trend)",
    )
    p.add_argument(
        "--output", "-o", help="write the Markdown here instead of stdout (with --html: only here)"
    )
    p.add_argument("--slowest", type=int, default=10, help="how many slowest cases to list")
    p.add_argument(
        "--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY"
    )
    html_command.add_arguments(p)
    p.set_defaults(func=cmd_report)
    history_command.add_parser(sub)
    compare_command.add_parser(sub)
    bench_command.add_parser(sub)
    p = sub.add_parser(
        "update-expectations",
        help="apply a results JSON to the expectations manifests (like --update-expectations)",
    )
    p.add_argument("results", nargs="?", help="results JSON file")
    p.add_argument(
        "--expectations-dir", help="manifest folder (default: ./conformance/expectations)"
    )
    p.add_argument(
        "--migrate",
        action="store_true",
        help="rename every [xfail] entry's old key stage to expect in the manifests, changing nothing else",
    )
    p.add_argument(
        "--overlay", action="store_true", help="write the per-OS overlay with the differences only"
    )
    p.add_argument("--os", help="OS of the overlay (default: the results' metadata.os)")
    p.set_defaults(func=cmd_update_expectations)
    p = sub.add_parser(
        "flakes",
        help="run a selection several times (fresh workers, shuffled order) and list cases whose result varied",
        description=exit_help(
            {0: "no case varied", 1: "some did"}, EXIT_CONFIGURATION, EXIT_MANIFEST
        ),
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=4,
        help="how many runs (default 4; alternately fresh workers and shuffled shared workers)",
    )
    p.add_argument(
        "--keep-store",
        action="store_true",
        help="use the usual artifact store instead of an empty one per run (faster; misses compiler flakes)",
    )
    p.add_argument("--conformance-dir", help="the conformance folder (default ./conformance)")
    p.add_argument("--json", help="also write the findings as JSON here")
    p.add_argument(
        "--update-expectations",
        action="store_true",
        help="record each varied case in its target's base manifest as flaky (its kinds as a stage list)",
    )
    p.add_argument(
        "--expectations-dir", help="manifest folder (default: <conformance-dir>/expectations)"
    )
    p.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        help="pytest selection after --, e.g. -- -m stablehlo -k scatter_ --offline",
    )
    p.set_defaults(func=cmd_flakes)
    p = sub.add_parser(
        "compare-upstream",
        help="agreement of our ONNX operator verdicts with IREE's own CI (an iree-test-suites config)",
    )
    p.add_argument(
        "config",
        help="iree-test-suites config JSON (file or http(s) URL), e.g. onnx_ops_cpu_llvm_sync.json",
    )
    p.add_argument(
        "--results",
        action="append",
        help="our results JSON, or a merged one (repeatable; default: our manifest's view: listed cases fail, others pass)",
    )
    p.add_argument(
        "--os",
        help="keep the results of this OS only (linux, macos, windows), e.g. from a merged file",
    )
    p.add_argument("--target", default="llvm-cpu", help="our target to compare (default llvm-cpu)")
    p.add_argument(
        "--manifest",
        help="manifest to use without --results (default conformance/expectations/<target>.toml)",
    )
    p.add_argument("--onnx-data-dir", help="generated ONNX test data (without --results)")
    p.add_argument(
        "--upstream-tests",
        help="IREE CI's tests, one path or test name per line (file or URL, e.g. its import_successes.txt); default: assume it has every case of ours",
    )
    p.add_argument(
        "--notes",
        help="explanations of disagreements (default conformance/expectations/iree-ci-notes.toml)",
    )
    p.add_argument("--json", help="also write the comparison as JSON here")
    p.add_argument(
        "--step-summary", action="store_true", help="append the Markdown to $GITHUB_STEP_SUMMARY"
    )
    p.add_argument(
        "--fail-on-unexplained",
        action="store_true",
        help="exit 1 when a disagreement has no explanation",
    )
    p.set_defaults(func=cmd_compare_upstream)
    p = sub.add_parser(
        "run-bundle",
        help="run a bundle made by --compile-only --bundle (needs only iree-base-runtime and numpy)",
    )
    p.add_argument("bundle", help="bundle folder")
    p.add_argument("--driver", required=True, help="HAL driver, e.g. cuda, local-task")
    p.add_argument("--device", help="device URI (default: the driver's default device)")
    p.add_argument("--report-json", default="bundle-results.json", help="results file to write")
    p.add_argument(
        "--force", action="store_true", help="run a bundle made by another IREE runtime version"
    )
    p.add_argument(
        "--timing-runs",
        type=int,
        default=0,
        help="time each case's function N times after a warm-up (median)",
    )
    p.set_defaults(func=cmd_run_bundle)
    from iree_conformance.cli.check_model import EXIT_HELP as check_model_exit_help
    from iree_conformance.cli.check_model import add_arguments as check_model_arguments

    p = sub.add_parser(
        "check-model",
        help="run one ONNX model through the suite: its inputs, every stage and its time, the verdict, the time against onnxruntime",
        description=check_model_exit_help,
    )
    check_model_arguments(p)
    p.set_defaults(func=cmd_check_model)
    p = sub.add_parser(
        "export-jax",
        help="write each JAX case as a self-checking StableHLO file (exported @main plus "
        "@check_xla holding the inputs and XLA's outputs), for --stablehlo-dir and bundles",
    )
    p.add_argument("dir", help="folder to write <file stem>/<case>.mlir files to")
    p.add_argument(
        "--jax-dir",
        action="append",
        default=[],
        help="export the cases of this folder instead of the bundled conformance/jax (repeatable)",
    )
    p.add_argument("--conformance", help="the conformance/ folder (default: ./conformance)")
    p.add_argument(
        "--store-dir", help="artifact store folder (default: as pytest conformance uses)"
    )
    p.add_argument("--no-cache", action="store_true", help="export afresh, without the store")
    p.set_defaults(func=cmd_export_jax)
    from iree_conformance.cli import versions as versions_command

    versions_command.add_parser(sub)
    from iree_conformance.cli import bisect as bisect_command

    bisect_command.add_parser(sub)
    from iree_conformance.cli import reduce as reduce_command

    reduce_command.add_parser(sub, cmd_reduce)

    from iree_conformance.repro import command as repro_command

    repro_command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs one subcommand. Every expected failure is a ConformanceError, caught here once:
    ``error: <message>`` on stderr and the error's exit status (errors.py lists them)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    after: list[str] | None = None
    if argv[:1] in (["versions"], ["bisect"]) and "--" in argv:  # pytest's arguments follow --
        argv, after = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = build_parser().parse_args(argv)
    if after is not None:
        args.pytest_args = after
    try:
        if args.func in (
            cmd_devices,
            cmd_run_bundle,
            cmd_check_model,
            cmd_reduce,
            repro_run,
        ):  # the ones that load IREE's binaries
            from iree_conformance.common.platform_info import unsupported_host_reason

            unsupported = unsupported_host_reason()
            if unsupported:
                raise ConfigurationError(f"iree-conformance cannot run here: {unsupported}")
        if args.func is repro_run:
            return repro_run(args, _targets_path(args.targets))
        return args.func(args)
    except ConformanceError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.return_code
    except KeyboardInterrupt:  # Ctrl-C: one line, the shells' status, no traceback
        print("interrupted", file=sys.stderr)
        return 128 + 2
    except BrokenPipeError:  # `| head` closed the pipe: no traceback, the shells' status
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail too
        return 128 + 13  # as if killed by SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
