"""Run `cache-tools prune` in the mode the triggering event allows.

The rule (cache-audit.yml):

  schedule, policy "on"      delete (--yes): superseded entries and closed-PR caches
  schedule, policy not "on"  dry run: the report shows what would be deleted
  pull_request (closed)      delete (--yes --keep-superseded --closed-pr N): closed pull
                             requests' caches only: the closed one (N, from --pull-number,
                             without an API read of it) and any left over
  workflow_dispatch, other   dry run

`cache-tools prune` prunes closed pull requests' caches by default (--keep-closed-prs
would skip them) and superseded entries unless --keep-superseded is given.

The policy is the repository variable CACHE_PRUNE_POLICY (Settings > Secrets and
variables > Actions > Variables); anything but "on" keeps scheduled runs dry.
Extra arguments after -- go to cache-tools unchanged.

Examples:
  python -m ci prune-caches --event schedule --policy on --print-only
  python -m ci prune-caches --event pull_request --pull-number 42 --print-only
  python -m ci prune-caches --event workflow_dispatch -- --class zoo-models
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from ci._common import CIError, append_summary

APPLY_EVENTS = ("pull_request",)


def should_delete(event: str, policy: str) -> bool:
    if event == "schedule":
        return policy.strip().lower() == "on"
    return event in APPLY_EVENTS


def prune_command(
    event: str, policy: str, repo: str | None, extra: list[str], pull_number: int | None = None
) -> list[str]:
    cmd = ["cache-tools", "prune"]
    if repo:
        cmd += ["--repo", repo]
    if event == "pull_request":
        # A closed pull request deletes its caches whatever the policy, and nothing else:
        # superseded entries wait for the scheduled prune (and CACHE_PRUNE_POLICY).
        cmd.append("--keep-superseded")
        if pull_number:
            # Its own entries go without reading the pull request over the API (which a
            # private repository allows only with pull-requests: read).
            cmd += ["--closed-pr", str(pull_number)]
    if should_delete(event, policy):
        cmd.append("--yes")
    return cmd + extra


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--event",
        default=os.environ.get("GITHUB_EVENT_NAME", ""),
        help="triggering event (default $GITHUB_EVENT_NAME)",
    )
    parser.add_argument(
        "--policy", default="off", help='prune policy; "on" lets scheduled runs delete'
    )
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY"), help="OWNER/NAME")
    parser.add_argument(
        "--pull-number",
        type=int,
        default=None,
        help="the closed pull request's number (pull_request event); its caches "
        "are deleted without reading it over the API",
    )
    parser.add_argument("--print-only", action="store_true", help="print the command, run nothing")
    parser.add_argument(
        "--summary", action="store_true", help="append the prune report to $GITHUB_STEP_SUMMARY"
    )
    parser.add_argument("extra", nargs="*", help="arguments for cache-tools prune (after --)")


def run(args: argparse.Namespace) -> int:
    cmd = prune_command(args.event, args.policy, args.repo, args.extra, args.pull_number)
    mode = "delete" if "--yes" in cmd else "dry run"
    print(f"event={args.event or '?'} policy={args.policy}: {mode}")
    print("+ " + subprocess.list2cmdline(cmd), flush=True)
    if args.print_only:
        return 0
    exe = shutil.which("cache-tools")
    if exe is None:
        raise CIError("cache-tools is not on PATH (python -m ci install --bootstrap installs it)")
    result = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if args.summary:
        report = (result.stdout + result.stderr).strip() or "(no output)"
        append_summary(f"## Cache prune ({mode}, event {args.event or '?'})\n\n```\n{report}\n```")
    return result.returncode
