"""Re-runs the cases whose verdict changed against the last baseline with the flake finder.

Reads the diff of ci/diff_results.py, keeps the cases of one platform (the runner's own,
by default), writes them to a cases file per target, and runs
``iree-conformance flakes --repeat N`` on each target's cases, so that a verdict that
changed by chance is named as flaky before anyone chases it as a regression.

  python -m ci flaky-recheck nightly/diff.json --platform linux/x86_64 --repeat 3 \
      --json nightly/flakes.json -- -m "stablehlo or onnx_ops" --stablehlo-dir DIR

Exit status: 0 nothing varied (or nothing to recheck), 1 some case varied, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ci._common import current_arch, current_os

KINDS = ("new_failures", "new_passes", "changed")


def changed_cases(diff: dict[str, Any], platform: str) -> dict[str, list[str]]:
    """Case ids per target whose verdict changed on platform, sorted."""
    by_target: dict[str, set[str]] = {}
    for kind in KINDS:
        for entry in diff.get(kind, []):
            if entry.get("platform") == platform:
                by_target.setdefault(entry["target"], set()).add(entry["case_id"])
    return {t: sorted(ids) for t, ids in sorted(by_target.items())}


# `python -m ci` puts the arguments after `--` in this attribute of args: the pytest
# selection the flake finder re-runs.
AFTER_DASHDASH = "pytest_args"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser
    p.description = (__doc__ or "").split("\n\n")[0]
    p.epilog = (
        "Example:\n  python -m ci flaky-recheck nightly/diff.json --repeat 3 --json flakes.json "
        "-- -m onnx_ops --offline\n"
        "Arguments after -- go to pytest (the selection the flake finder re-runs)."
    )
    p.add_argument("diff", help="diff JSON written by ci/diff_results.py --output")
    p.add_argument("--platform", help="os/arch whose cases to recheck (default: this runner's)")
    p.add_argument("--repeat", type=int, default=3, help="runs per target (default 3)")
    p.add_argument(
        "--max-cases",
        type=int,
        default=200,
        help="recheck at most this many cases per target (default 200)",
    )
    p.add_argument("--json", help="write every target's findings here")
    p.add_argument(
        "--dry-run", action="store_true", help="print the commands instead of running them"
    )


def run(args: argparse.Namespace) -> int:
    try:
        diff = json.loads(Path(args.diff).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(
            f"error: {args.diff}: cannot read the diff ({e}); run python -m ci diff-results --output first",
            file=sys.stderr,
        )
        return 2
    platform = args.platform or f"{current_os()}/{current_arch()}"
    cases = changed_cases(diff, platform)
    if not cases:
        print(f"no verdict changed on {platform}: nothing to recheck")
        return 0
    extra = args.pytest_args
    findings: dict[str, Any] = {}
    worst = 0
    with tempfile.TemporaryDirectory(prefix="flaky-recheck-") as tmp:
        for target, ids in cases.items():
            listed = Path(tmp) / f"{target}.txt"
            listed.write_text(
                "\n".join(ids[: args.max_cases]) + "\n", encoding="utf-8", newline="\n"
            )
            out = Path(tmp) / f"{target}.json"
            command = [
                "iree-conformance",
                "flakes",
                "--repeat",
                str(args.repeat),
                "--json",
                str(out),
                "--",
                "--target",
                target,
                "--cases-file",
                str(listed),
                *extra,
            ]
            print(f"{target}: {len(ids)} changed case(s); " + " ".join(command), flush=True)
            if args.dry_run:
                continue
            rc = subprocess.run(command).returncode
            if rc == 2 or not out.exists():
                print(
                    f"error: the flake finder could not run for {target} (exit {rc})",
                    file=sys.stderr,
                )
                return 2
            findings[target] = json.loads(out.read_text(encoding="utf-8"))
            worst = max(worst, rc)
    if args.json and not args.dry_run:
        Path(args.json).write_text(
            json.dumps({"platform": platform, "targets": findings}, indent=1) + "\n",
            encoding="utf-8",
            newline="\n",
        )
    return worst
