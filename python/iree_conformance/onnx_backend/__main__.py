"""``python -m iree_conformance.onnx_backend``: onnx's backend tests against IREE.

    python -m iree_conformance.onnx_backend [--target T] [--sample N | --cases a,b]
        [--no-expectations] [--scoreboard DIR] [--compare-with RESULTS.json] [-- PYTEST ARGS]

Runs ``backend_tests.py`` under pytest (the CPU tests: ``-k 'not _cuda'``, as the
scoreboard does). ``--scoreboard DIR`` writes the scoreboard's report.json and
trend.json there. ``--compare-with`` takes an ``onnx_ops`` ``--report-json`` file,
runs the same cases without manifests and compares the verdicts case by case (exit 1
on a difference that ``runner.KNOWN_DIFFERENCES`` does not explain).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from iree_conformance.common.errors import ConfigurationError, run_cli

PROG = "python -m iree_conformance.onnx_backend"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--target", default="llvm-cpu", help="target from targets.toml (default llvm-cpu)"
    )
    p.add_argument("--sample", type=int, metavar="N", help="the onnx_ops suite's fixed sample of N")
    p.add_argument("--cases", help="comma-separated test names (test_abs,test_add)")
    p.add_argument("--expectations", help="manifest folder (default ./conformance/expectations)")
    p.add_argument(
        "--no-expectations", action="store_true", help="apply no manifest (the scoreboard's view)"
    )
    p.add_argument(
        "--scoreboard", metavar="DIR", help="write the scoreboard's report.json and trend.json here"
    )
    p.add_argument(
        "--compare-with", metavar="RESULTS", help="an onnx_ops --report-json file: compare verdicts"
    )
    p.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    return p


def _check_target(name: str) -> None:
    """An unknown target is a configuration error (exit 2), and so is one that cannot
    compile or run here: onnx's runner would skip every test ("Backend doesn't support
    device CPU") and exit 0, a green run that tested nothing (issue 47)."""
    from iree_conformance.model.targets import unavailable_reason, uncompilable_reason
    from iree_conformance.onnx_backend.backend import resolve_target

    target = resolve_target(name)  # TargetError (exit 2) names the known targets
    reason = unavailable_reason(target) or uncompilable_reason(target)
    if reason:
        raise ConfigurationError(
            f"--target {name}: cannot run here ({reason}); every test would be skipped. "
            "Pick a target this machine has (llvm-cpu runs everywhere)"
        )


def _writable_folder(option: str, folder: Path) -> None:
    """Before the tests run: a folder the results can be written into (issue 47)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as e:
        raise ConfigurationError(
            f"{option} {folder}: cannot write there ({e.strerror or e}); give a folder you "
            "can write"
        ) from None


def main(argv: list[str] | None = None) -> int:
    import pytest

    from iree_conformance.onnx_backend import runner
    from iree_conformance.onnx_backend.scoreboard import ScoreboardPlugin

    args = _parser().parse_args(argv)
    _check_target(args.target)
    suite = None
    cases = args.cases
    if args.compare_with:
        suite = runner.suite_verdicts(Path(args.compare_with))
        if not suite:
            raise ConfigurationError(f"{args.compare_with}: no onnx_ops outcomes to compare with")
        cases = ",".join(sorted(suite))
    if args.expectations and not Path(args.expectations).is_dir():
        raise ConfigurationError(
            f"--expectations {args.expectations}: no such folder (conformance/expectations)"
        )
    if args.sample is not None and args.sample < 1:
        raise ConfigurationError(f"--sample {args.sample}: give a number of cases above 0")
    os.environ[runner.TARGET_ENV] = args.target
    for key, value in ((runner.SAMPLE_ENV, args.sample), (runner.CASES_ENV, cases)):
        if value:
            os.environ[key] = str(value)
    if args.no_expectations or suite is not None:
        os.environ[runner.EXPECTATIONS_ENV] = "none"
    elif args.expectations:
        os.environ[runner.EXPECTATIONS_ENV] = args.expectations
    if args.scoreboard:
        _writable_folder("--scoreboard", Path(args.scoreboard))
    results_dir = Path(args.scoreboard or tempfile.mkdtemp(prefix="iree-onnx-backend-"))
    test_file = Path(__file__).with_name("backend_tests.py")
    scoreboard = ScoreboardPlugin(results_dir)
    code = pytest.main(
        [str(test_file), "-k", "not _cuda", "-p", "no:cacheprovider", *args.pytest_args],
        plugins=[scoreboard],
    )
    if scoreboard.failed:
        raise ConfigurationError(scoreboard.failed)
    if suite is None:
        return int(code)
    report = json.loads((results_dir / "report.json").read_text(encoding="utf-8"))
    agreement = runner.compare_verdicts(suite, runner.runner_verdicts(report))
    print(agreement.render())
    return 1 if agreement.unexplained or not agreement.compared else 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
