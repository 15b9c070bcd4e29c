"""The nightly fresh install (fresh-install.yml): the README's two commands on the newest
releases, what they installed against the lock, and the one issue that says so.

  report   after the commands: the releases this interpreter got, which are newer than
           the pull-request workflows' lock (ci/lock/requirements.txt: the suspects when a
           command fails), and each command's outcome, into the step summary and a JSON
           report (uploaded per OS). Exit 0: the failed step has failed the job already.
  issue    after the matrix: from the reports, open or update the one issue titled
           ISSUE_TITLE (found among the open issues by that title, opened by the bot)
           when a command failed anywhere, with a comment each night it still fails; when
           all pass, comment on it and close it. Where the repository refuses (issues
           off, no permission: HTTP 403, 404, 410), a warning says so and it exits 0.

The README's commands are read from README.md's set-up block (``readme_commands``); a
test checks that the workflow's steps run exactly them.

Examples:
  python -m ci fresh-install report --outcome install-1=success --outcome run-1=failure \\
      --json fresh/report-linux.json --summary
  GITHUB_TOKEN=... python -m ci fresh-install issue --reports fresh --repo OWNER/NAME \\
      --run-url https://github.com/OWNER/NAME/actions/runs/1
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import json
import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cache_tools.errors import ApiError
from cache_tools.github_api import GitHubClient
from ci import lock
from ci._common import REPO_ROOT, CIError, append_summary, load_json, notice, set_outputs
from ci.fetch_baseline import DEFAULT_API, github_client
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.markdown_escape import md_code, md_text

ISSUE_TITLE = "Fresh install: the README's commands fail with today's releases"
BOT_LOGIN = "github-actions[bot]"
README = REPO_ROOT / "README.md"
STEPS = ("install-1", "run-1", "install-2", "run-2")
OUTCOMES = ("success", "failure", "cancelled", "skipped")
MAX_BODY = 65_536
REFUSED = (403, 404, 410)  # issues turned off, or the token may not write them

_FENCE = re.compile(r"^## Set-up\n.*?^```sh\n(?P<block>.*?)^```", re.S | re.M)


def readme_commands(readme: Path = README) -> dict[str, str]:
    """{step id: command} from the README's set-up block: each of its two command lines is
    ``INSTALL && RUN`` (install-N, run-N)."""
    m = _FENCE.search(readme.read_text(encoding="utf-8"))
    if not m:
        raise CIError(f"{readme}: no ```sh block under '## Set-up'")
    lines = [ln.strip() for ln in m.group("block").splitlines()]
    commands = [ln for ln in lines if ln and not ln.startswith("#")]
    if len(commands) != 2 or not all(c.count(" && ") == 1 for c in commands):
        raise CIError(f"{readme}: the set-up block should hold two lines 'INSTALL && RUN'")
    out = {}
    for number, command in enumerate(commands, 1):
        install, run = command.split(" && ")
        out[f"install-{number}"], out[f"run-{number}"] = install, run
    return out


# -- report ----------------------------------------------------------------------------------


def _version_key(text: str) -> Any:
    try:
        from packaging.version import Version  # installed with pytest, by command 1 on

        return (0, Version(text))
    except Exception:  # packaging missing, or a version it cannot read: by its numbers
        return (1, tuple(int(n) for n in re.findall(r"\d+", text)))


def _marker_applies(marker: str | None) -> bool | None:
    if marker is None:
        return True
    try:
        from packaging.markers import Marker
    except ImportError:
        return None  # cannot tell without packaging
    return Marker(marker).evaluate()


def locked_versions(lock_file: Path) -> dict[str, str]:
    """{name: version} of the lock's entries that apply to this interpreter and platform."""
    if not lock_file.is_file():
        raise CIError(f"{lock_file}: no lock (python -m ci lock makes it)")
    out: dict[str, str] = {}
    for e in lock.parse_lock(lock_file.read_text(encoding="utf-8"), str(lock_file)):
        if _marker_applies(e.marker):
            out[e.name] = e.version
    return out


def installed_versions() -> dict[str, str]:
    found = {}
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"]
        except KeyError:  # a broken installation without a name: nothing to report
            continue
        if name:
            found[lock.canonical(name)] = dist.version
    return dict(sorted(found.items()))


def build_report(
    outcomes: Mapping[str, str],
    installed: Mapping[str, str],
    locked: Mapping[str, str],
    *,
    os_name: str,
    python: str,
    lock_name: str = "ci/lock/requirements.txt",
) -> dict[str, Any]:
    # the project itself, and the installer every venv comes with (not a requirement)
    own = {"iree-conformance", "iree-conformance-cache-tools", "pip"}
    newer, older, not_locked = [], [], []
    for name, version in installed.items():
        if name in own:
            continue
        if name not in locked:
            not_locked.append({"name": name, "installed": version})
        elif _version_key(version) > _version_key(locked[name]):
            newer.append({"name": name, "installed": version, "locked": locked[name]})
        elif version != locked[name]:
            older.append({"name": name, "installed": version, "locked": locked[name]})
    commands = readme_commands()
    steps = [
        {"id": s, "command": commands[s], "outcome": outcomes.get(s, "skipped")} for s in STEPS
    ]
    return {
        "os": os_name,
        "python": python,
        "lock": lock_name,
        "steps": steps,
        "failed": [s["id"] for s in steps if s["outcome"] == "failure"],
        "newer": newer,
        "older": older,
        "not_in_lock": not_locked,
        "installed": dict(installed),
    }


def render_report(report: Mapping[str, Any]) -> str:
    verdict = "FAILED" if report["failed"] else "passed"
    lines = [
        f"## Fresh install on {md_text(report['os'])}, Python {md_text(report['python'])}: "
        f"{verdict}",
        "",
        "The README's two commands with today's newest releases and no pip cache.",
        "",
        "| step | command | outcome |",
        "|---|---|---|",
    ]
    for s in report["steps"]:
        mark = "**failure**" if s["outcome"] == "failure" else md_text(s["outcome"])
        lines.append(f"| {md_text(s['id'])} | {md_code(s['command'])} | {mark} |")
    lines += [
        "",
        f"**Newer than the lock** ({md_text(report.get('lock', 'the lock'))}, what the pull "
        f"requests install): {len(report['newer'])}"
        + (" -- the suspects for the failure:" if report["failed"] and report["newer"] else ""),
        "",
    ]
    if report["newer"]:
        lines += ["| distribution | installed | lock |", "|---|---|---|"]
        lines += [
            f"| {md_code(n['name'])} | **{md_text(n['installed'])}** | {md_text(n['locked'])} |"
            for n in report["newer"]
        ]
    if report["not_in_lock"]:
        names = ", ".join(
            f"{md_code(n['name'])} {md_text(n['installed'])}" for n in report["not_in_lock"]
        )
        lines += ["", f"Not in the lock: {names}"]
    lines += [
        "",
        f"<details><summary>All {len(report['installed'])} releases installed</summary>",
        "",
        "| distribution | version |",
        "|---|---|",
        *(f"| {md_code(n)} | {md_text(v)} |" for n, v in report["installed"].items()),
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)


def parse_outcomes(values: list[str]) -> dict[str, str]:
    out = {}
    for value in values:
        step, sep, outcome = value.partition("=")
        if not sep or step not in STEPS or outcome not in (*OUTCOMES, ""):
            raise CIError(
                f"--outcome {value!r}: expected STEP=OUTCOME, STEP one of {', '.join(STEPS)}, "
                f"OUTCOME one of {', '.join(OUTCOMES)}"
            )
        out[step] = outcome or "skipped"
    return out


def run_report(args: argparse.Namespace) -> int:
    report = build_report(
        parse_outcomes(args.outcome),
        installed_versions(),
        locked_versions(Path(args.lock)),
        os_name=args.os or platform.system(),
        python=platform.python_version(),
        lock_name=Path(args.lock).as_posix(),
    )
    markdown = render_report(report)
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(report, indent=2) + "\n")
    if not (args.summary and append_summary(markdown)):
        print(markdown)
    if report["failed"]:
        notice(
            f"fresh install on {report['os']}: {', '.join(report['failed'])} failed; newer than "
            f"the lock: {', '.join(n['name'] + ' ' + n['installed'] for n in report['newer']) or 'none'}",
            "error",
        )
    return 0


# -- issue -----------------------------------------------------------------------------------


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise CIError(f"{where}: expected a string")
    return value


def load_reports(folder: Path) -> list[dict[str, Any]]:
    """The matrix's reports (report-*.json, any depth), each checked field by field."""
    paths = sorted(folder.rglob("*.json")) if folder.is_dir() else []
    if not paths:
        raise CIError(f"{folder}: no fresh-install reports (report-*.json)")
    reports = []
    for path in paths:
        data = load_json(path)
        if not isinstance(data, Mapping) or not isinstance(data.get("steps"), list):
            raise CIError(f"{path}: not a fresh-install report")
        steps = [
            {k: _str(s.get(k), f"{path}: steps[{i}].{k}") for k in ("id", "command", "outcome")}
            for i, s in enumerate(data["steps"])
            if isinstance(s, Mapping)
        ]
        newer = [
            {k: _str(n.get(k), f"{path}: newer[{i}].{k}") for k in ("name", "installed", "locked")}
            for i, n in enumerate(data.get("newer") or [])
            if isinstance(n, Mapping)
        ]
        reports.append(
            {
                "os": _str(data.get("os"), f"{path}: os"),
                "python": _str(data.get("python"), f"{path}: python"),
                "steps": steps,
                "failed": [s["id"] for s in steps if s["outcome"] == "failure"],
                "newer": newer,
            }
        )
    return reports


def issue_body(reports: list[dict[str, Any]], run_url: str | None) -> str:
    failing = [r for r in reports if r["failed"]]
    lines = [
        "The README's commands failed on a fresh machine with today's newest releases "
        "(the nightly fresh-install workflow, no pip cache).",
        "",
        "| OS | Python | failed | newer than the lock (the suspects) |",
        "|---|---|---|---|",
    ]
    for r in failing:
        failed = "<br>".join(
            f"{md_text(s['id'])}: {md_code(s['command'])}"
            for s in r["steps"]
            if s["outcome"] == "failure"
        )
        newer = ", ".join(
            f"{md_code(n['name'])} {md_text(n['installed'])} (lock {md_text(n['locked'])})"
            for n in r["newer"]
        )
        lines.append(
            f"| {md_text(r['os'])} | {md_text(r['python'])} | {failed} | {newer or 'none'} |"
        )
    passing = [md_text(r["os"]) for r in reports if not r["failed"]]
    if passing:
        lines += ["", f"Passed on: {', '.join(passing)}."]
    if run_url:
        lines += ["", f"The run, with each OS's step summary: {run_url}"]
    lines += [
        "",
        "This issue is updated by each nightly run while it fails and closed by the first "
        "that passes (ci/fresh_install.py). A release newer than the lock that breaks a "
        "command is one the pull requests have not met yet: fix the code, or cap the "
        "requirement in pyproject.toml with the reason beside it.",
    ]
    body = "\n".join(lines) + "\n"
    return body if len(body) <= MAX_BODY else body[: MAX_BODY - 40] + "\n\n(cut; see the run)\n"


def find_issue(api: GitHubClient, repo: str, bot: str) -> dict[str, Any] | None:
    """The open issue of ISSUE_TITLE the bot opened (pull requests are issues too: not those)."""
    for page in range(1, 51):
        batch = api.request(
            "GET",
            f"/repos/{repo}/issues",
            params={"state": "open", "creator": bot, "per_page": 100, "page": page},
        ).data
        if not isinstance(batch, list):
            raise CIError(f"{repo}: the issues list is not a list")
        for issue in batch:
            if (
                isinstance(issue, Mapping)
                and issue.get("title") == ISSUE_TITLE
                and "pull_request" not in issue
                and isinstance(issue.get("number"), int)
            ):
                return dict(issue)
        if len(batch) < 100:
            return None
    return None


def upsert_issue(
    api: GitHubClient, repo: str, reports: list[dict[str, Any]], run_url: str | None, bot: str
) -> tuple[str, int | None]:
    """(what was done, the issue's number)."""
    issue = find_issue(api, repo, bot)
    failing = any(r["failed"] for r in reports)
    if failing:
        body = issue_body(reports, run_url)
        if issue is None:
            made = api.request(
                "POST", f"/repos/{repo}/issues", body={"title": ISSUE_TITLE, "body": body},
                ok=(201,),
            ).data  # fmt: skip
            return "opened", int(made["number"])
        number = int(issue["number"])
        api.request("PATCH", f"/repos/{repo}/issues/{number}", body={"body": body})
        api.request(
            "POST", f"/repos/{repo}/issues/{number}/comments",
            body={"body": "Still failing" + (f": {run_url}" if run_url else ".")}, ok=(201,),
        )  # fmt: skip
        return "updated", number
    if issue is None:
        return "nothing to do", None
    number = int(issue["number"])
    api.request(
        "POST", f"/repos/{repo}/issues/{number}/comments",
        body={"body": "The README's commands pass again" + (f": {run_url}" if run_url else ".")},
        ok=(201,),
    )  # fmt: skip
    api.request("PATCH", f"/repos/{repo}/issues/{number}", body={"state": "closed"})
    return "closed", number


def run_issue(args: argparse.Namespace) -> int:
    if not args.repo or not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo):
        raise CIError("--repo OWNER/NAME is required (or set GITHUB_REPOSITORY)")
    reports = load_reports(Path(args.reports))
    api = github_client(args.api_url)
    try:
        action, number = upsert_issue(api, args.repo, reports, args.run_url, args.bot_login)
    except ApiError as exc:
        if exc.status in REFUSED:
            notice(f"no issue opened or updated: the repository refused ({exc})", "warning")
            return 0
        raise CIError(str(exc)) from None
    where = f" #{number}" if number is not None else ""
    print(f"fresh-install issue{where}: {action}")
    set_outputs({"action": action, "issue": number or ""})
    append_summary(f"Fresh-install issue{where}: {action}.\n")
    return 0


# -- the command -------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    report = sub.add_parser("report", help="the releases installed, against the lock")
    report.add_argument(
        "--outcome", action="append", default=[], metavar="STEP=OUTCOME",
        help=f"a step's outcome (steps: {', '.join(STEPS)})",
    )  # fmt: skip
    report.add_argument(
        "--lock", default="ci/lock/requirements.txt", help="the lock to compare with"
    )
    report.add_argument("--os", default=None, help="the OS name to show (default: this one's)")
    report.add_argument("--json", default=None, metavar="PATH", help="write the report here")
    report.add_argument("--summary", action="store_true", help="into the step summary")
    issue = sub.add_parser("issue", help="open, update or close the fresh-install issue")
    issue.add_argument("--reports", required=True, metavar="DIR", help="the matrix's reports")
    issue.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY"))
    issue.add_argument("--api-url", default=os.environ.get("GITHUB_API_URL", DEFAULT_API))
    issue.add_argument("--run-url", default=None, help="the run's page, linked from the issue")
    issue.add_argument("--bot-login", default=BOT_LOGIN, help="who opens the issue")


def run(args: argparse.Namespace) -> int:
    return run_report(args) if args.action == "report" else run_issue(args)
