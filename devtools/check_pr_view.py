"""Check what a pull request shows after a local run under act (devtools/act_local.py).

  annotations  the run's annotations (act_local's summary, `annotations`) include each
               --expect LEVEL:FILE:LINE (FILE relative to the workspace, as GitHub links it)
  comment      the fake GitHub API's state (fake-github.json) holds exactly one
               conformance comment on the pull request (the hidden marker of
               ci/pr_comment.py), and with --edited it was edited after it was created

Exit status 1 when a check fails (each failure is named), 2 on unreadable input.

Examples:
  python -m devtools.check_pr_view annotations --summary .ci-cache/act-ci-pr.json \\
      --expect error:tests/fixtures/ci/annotations/stablehlo/wrong_sum.mlir:8
  python -m devtools.check_pr_view comment --state .ci-cache/act-local/fake-github.json --pr 1 --edited
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ci._common import CIError, load_json, run_main
from ci.pr_comment import MARKER


def check_annotations(summary: dict[str, Any], expected: list[str]) -> list[str]:
    found = summary.get("annotations") or []
    shown = {(a.get("level"), a.get("file"), a.get("line")) for a in found}
    problems = []
    for spec in expected:
        level, _, rest = spec.partition(":")
        file, _, line = rest.rpartition(":")
        if not (level and file and line.isdigit()):
            raise CIError(f"--expect {spec!r}: expected LEVEL:FILE:LINE")
        if (level, file, int(line)) not in shown:
            problems.append(f"no {level} annotation at {file}:{line}")
    for a in found:
        where = f"{a.get('file')}:{a.get('line')}: " if a.get("file") else ""
        print(f"{a.get('level')}: {where}{a.get('title') or str(a.get('message'))[:120]}")
    return problems


def check_comment(state: dict[str, Any], pr: int, edited: bool) -> list[str]:
    comments = (state.get("comments") or {}).get(str(pr)) or []
    ours = [c for c in comments if MARKER in str(c.get("body", ""))]
    if len(ours) != 1:
        return [f"pull request {pr} has {len(ours)} conformance comments, not 1"]
    comment = ours[0]
    print(
        f"comment {comment.get('id')}: created {comment.get('created_at')}, "
        f"updated {comment.get('updated_at')}"
    )
    print(str(comment.get("body", "")))
    if edited and not str(comment.get("updated_at", "")) > str(comment.get("created_at", "")):
        return [f"comment {comment.get('id')} was never edited"]
    return []


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="check_pr_view.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="what", required=True)
    ann = sub.add_parser("annotations", help="the run's annotations")
    ann.add_argument("--summary", required=True, help="devtools/act_local.py's summary JSON")
    ann.add_argument(
        "--expect", action="append", default=[], metavar="LEVEL:FILE:LINE", help="repeatable"
    )
    com = sub.add_parser("comment", help="the pull request's one comment")
    com.add_argument("--state", required=True, help="the fake API's fake-github.json")
    com.add_argument("--pr", type=int, default=1, help="pull request number (default 1)")
    com.add_argument("--edited", action="store_true", help="it was edited after creation")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.what == "annotations":
        problems = check_annotations(load_json(Path(args.summary)), args.expect)
    else:
        problems = check_comment(load_json(Path(args.state)), args.pr, args.edited)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
