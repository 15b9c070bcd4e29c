"""Post or update the one conformance comment of a pull request (pr-comment.yml).

Runs in a ``workflow_run`` workflow after ci.yml, with the base repository's code only:
it never checks out or runs the pull request's code. What it reads from the pull
request's run is data: the ``merged-results`` artifact of that run (its ``diff.json``,
written by ci/diff_results.py, and ``pull-request.json``, the number), downloaded through
the REST API (cache-tools' client, cache_tools/github_api.py) with size limits (the archive, each member, the members read) and validated
field by field; any other shape is refused. Every text that came from the run (case ids,
reasons, targets) is escaped for Markdown and HTML and has its @mentions broken before it
goes into the comment, which is cut to GitHub's 65,536 characters.

The comment lists new failures, new passes, flaky cases, the cases significantly slower
or larger than main's (docs/speed.md) with how many timing runs each side had (a time
change needs two a side: docs/ci-pull-requests.md) and the pass counts per suite and
target against main's baseline, with links to the HTML report artifact and the run.
It carries a hidden marker: each run edits that comment in place (found among the pull
request's comments by the marker and its author), so there is never a second one.

The pull request is the event's ``workflow_run.pull_requests`` (same-repository
branches) or, for a fork, the number in the artifact; either way it must be open with
its head at the run's ``head_sha``, or nothing is posted (a notice says why; exit 0).

Examples:
  GITHUB_TOKEN=... python -m ci pr-comment --event-path event.json --repo OWNER/NAME
  python -m ci pr-comment --diff merged/diff.json --render-only      # print the body
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cache_tools.github_api import GitHubClient
from ci._common import CIError, load_json, notice, set_outputs
from ci.diff_results import speed_lines
from ci.fetch_baseline import DEFAULT_API, api_errors, download, get_json, github_client
from iree_conformance.expectations.known_issues import issue_url, valid_issue
from iree_conformance.model import results

MARKER = "<!-- iree-conformance:pr-comment -->"
BOT_LOGIN = "github-actions[bot]"
ARTIFACT = "merged-results"
REPORT_ARTIFACT = "conformance-report"
MAX_ARCHIVE_BYTES = 8 * 1024 * 1024  # the merged-results zip (a smoke matrix: ~100 KB)
MAX_MEMBER_BYTES = 4 * 1024 * 1024  # diff.json, pull-request.json, uncompressed
MAX_BODY = 65_536  # GitHub's limit on a comment body, in characters
MAX_ROWS = 25  # rows per list; the rest are counted
MAX_CELL = 160  # characters of one table cell
MEMBERS = ("diff.json", "pull-request.json")


# -- escaping ----------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def cell(value: Any, limit: int = MAX_CELL) -> str:
    """Untrusted text as one inert table cell: one line, bounded, HTML and Markdown
    escaped, @mentions and #references broken (a zero-width space after @ and #)."""
    text = " ".join(_CONTROL.sub(" ", str(value if value is not None else "")).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return text.replace("@", "@\u200b").replace("\\#", "#\u200b")


# -- validation --------------------------------------------------------------------------

_ENTRY_FIELDS = ("platform", "target", "case_id", "now", "before", "reason", "steps")


def _strings(entry: Any, fields: tuple[str, ...], where: str) -> dict[str, str]:
    if not isinstance(entry, Mapping):
        raise CIError(f"{where}: expected an object")
    out = {}
    for field in fields:
        value = entry.get(field, "")
        if not isinstance(value, str):
            raise CIError(f"{where}.{field}: expected a string")
        out[field] = value
    return out


def _count(value: Any, where: str, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CIError(f"{where}: expected a count")
    return value


def validate_diff(data: Any) -> dict[str, Any]:
    """diff.json (ci/diff_results.py) reduced to the fields the comment shows, each
    checked for its type; anything else is refused with the field's name."""
    if not isinstance(data, Mapping):
        raise CIError("diff.json: expected an object")
    has_baseline = not ("baseline" in data and data["baseline"] is None)
    out: dict[str, Any] = {"baseline": has_baseline}
    for name in ("new_failures", "new_passes", "changed"):
        items = data.get(name, []) if has_baseline else []
        if not isinstance(items, list):
            raise CIError(f"diff.json: {name} must be a list")
        out[name] = [
            _strings(e, _ENTRY_FIELDS, f"diff.json: {name}[{i}]") for i, e in enumerate(items)
        ]
        for kept, given in zip(out[name], items):  # a known issue: only "owner/repo#N" is kept
            if isinstance(given, Mapping) and valid_issue(given.get("issue")):
                kept["issue"] = given["issue"]
    speed = data.get("speed", []) if has_baseline else []
    if not isinstance(speed, list):
        raise CIError("diff.json: speed must be a list")
    out["speed"] = [
        _strings(e, ("platform", "target", "case_id", "change"), f"diff.json: speed[{i}]")
        for i, e in enumerate(speed)
    ]
    out["speed_runs"] = _speed_runs(data.get("speed_runs") if has_baseline else None)
    flaky = data.get("flaky", [])
    if not isinstance(flaky, list):
        raise CIError("diff.json: flaky must be a list")
    out["flaky"] = [
        _strings(e, ("platform", "target", "case_id", "reason"), f"diff.json: flaky[{i}]")
        for i, e in enumerate(flaky)
    ]
    unjudged = data.get("not_judged", [])
    if not isinstance(unjudged, list):
        raise CIError("diff.json: not_judged must be a list")
    out["not_judged"] = [
        _strings(e, ("platform", "target", "case_id", "reason"), f"diff.json: not_judged[{i}]")
        for i, e in enumerate(unjudged)
    ]
    counts = data.get("pass_counts", [])
    if not isinstance(counts, list):
        raise CIError("diff.json: pass_counts must be a list")
    out["pass_counts"] = []
    for i, row in enumerate(counts):
        where = f"diff.json: pass_counts[{i}]"
        names = _strings(row, ("suite", "target"), where)
        out["pass_counts"].append(
            {
                **names,
                "now": _count(row.get("now"), where + ".now"),
                "before": _count(row.get("before"), where + ".before", allow_none=True),
            }
        )
    plats = data.get("compared_platforms", [])
    if not isinstance(plats, list) or not all(isinstance(p, str) for p in plats):
        raise CIError("diff.json: compared_platforms must be a list of strings")
    out["compared_platforms"] = list(plats)
    return out


SPEED_RUNS_FIELDS = (
    "timed",
    "time_not_judged",
    "baseline_min",
    "baseline_max",
    "current_min",
    "current_max",
)


def _speed_runs(value: Any) -> dict[str, int] | None:
    """diff.json's speed_runs (absent from an older diff_results.py: None), each a count."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise CIError("diff.json: speed_runs must be an object")
    return {
        name: int(_count(value.get(name, 0), f"diff.json: speed_runs.{name}") or 0)
        for name in SPEED_RUNS_FIELDS
    }


def pr_number_of(data: Any) -> int:
    """pull-request.json's number: a positive integer, nothing else."""
    number = data.get("number") if isinstance(data, Mapping) else None
    if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
        raise CIError("pull-request.json: 'number' must be a positive integer")
    return number


# -- the comment -------------------------------------------------------------------------


def _rows(entries: list[dict[str, str]], columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for title, _ in columns) + " |"]
    lines.append("|" + "---|" * len(columns))
    for e in entries[:MAX_ROWS]:
        cells = [cell(e.get(key, "")) for _, key in columns]
        if e.get("issue") and columns[-1][1] == "reason":  # validated: owner/repo#N
            cells[-1] = f"matches [{e['issue']}]({issue_url(e['issue'])}): {cells[-1]}"
        lines.append("| " + " | ".join(cells) + " |")
    if len(entries) > MAX_ROWS:
        lines += ["", f"…and {len(entries) - MAX_ROWS} more (see the run's step summary)."]
    return lines


def render(diff: dict[str, Any], run_url: str | None, report_url: str | None) -> str:
    """The comment's Markdown (validated data in; every untrusted text through cell())."""
    nf, np_, flaky = diff["new_failures"], diff["new_passes"], diff["flaky"]
    head = f"{len(nf)} new failure(s), {len(np_)} new pass(es), {len(flaky)} flaky"
    if diff["not_judged"]:
        head += f", {len(diff['not_judged'])} not judged"
    lines = [MARKER, f"## Conformance: {head}", ""]
    if diff["baseline"]:
        plats = ", ".join(cell(p) for p in diff["compared_platforms"]) or "no common platform"
        lines.append(f"Against the last results of `main` (compared on {plats}).")
    else:
        lines.append("No results of `main` were found, so there is nothing to compare with yet.")
    links = [
        f"[HTML report]({report_url})" if report_url else "",
        f"[run]({run_url})" if run_url else "",
    ]
    if any(links):
        lines += ["", " · ".join(link for link in links if link)]
    counts = diff["pass_counts"]
    if counts:
        lines += ["", "### Passing cases per suite and target", ""]
        lines.append("| Suite | Target | main | this PR | change |")
        lines.append("|---|---|---:|---:|---:|")
        for row in counts[: MAX_ROWS * 4]:
            before = row["before"]
            change = "" if before is None else f"{row['now'] - before:+d}"
            lines.append(
                f"| {cell(row['suite'])} | {cell(row['target'])} | "
                f"{'' if before is None else before} | {row['now']} | {change} |"
            )
    case_cols = [("Platform", "platform"), ("Target", "target"), ("Case", "case_id")]
    for title, entries, extra in (
        ("New failures", nf, [("Now", "now"), ("Before", "before"), ("Reason", "reason")]),
        ("New passes", np_, [("Before", "before")]),
        ("Changed failures", diff["changed"], [("Now", "now"), ("Before", "before")]),
        ("Flaky", flaky, [("Reason", "reason")]),
        ("Not judged: neither IREE's failure nor a pass", diff["not_judged"], [("Why", "reason")]),
    ):
        if entries:
            if any(e.get("steps") for e in entries):  # users' programs (model/preparation.py)
                at = len(extra) - (extra[-1][1] == "reason")  # the reason stays last
                extra = [*extra[:at], ("Harness steps", "steps"), *extra[at:]]
            lines += ["", f"### {title} ({len(entries)})", ""]
            lines += _rows(entries, case_cols + extra)
    about_speed = speed_lines(diff.get("speed_runs"))
    if diff["speed"]:
        lines += ["", f"### Significantly slower or larger than main ({len(diff['speed'])})", ""]
        lines += [*about_speed, ""] if about_speed else []
        lines += _rows(diff["speed"], case_cols + [("Change", "change")])
    elif about_speed:
        lines += ["", *about_speed]
    body = "\n".join(lines) + "\n"
    if len(body) > MAX_BODY:
        cut = "\n\n…(cut at GitHub's comment limit; see the run)\n"
        body = body[: MAX_BODY - len(cut)].rsplit("\n", 1)[0] + cut
    return body


# -- the API -----------------------------------------------------------------------------


def send_json(api: GitHubClient, method: str, path: str, body: dict[str, Any]) -> Any:
    """A write of the issue-comment endpoints (POST creates, PATCH edits); its JSON answer."""
    with api_errors():
        return api.request(method, path, body=body, ok=(200, 201)).data


def read_members(archive_bytes: bytes) -> dict[str, Any]:
    """diff.json and pull-request.json of the artifact, parsed, each within the limit."""
    if len(archive_bytes) > MAX_ARCHIVE_BYTES:
        raise CIError(
            f"the results artifact is {len(archive_bytes)} bytes, over {MAX_ARCHIVE_BYTES}"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(archive_bytes))
    except zipfile.BadZipFile:
        raise CIError("the results artifact is not a zip archive") from None
    found: dict[str, Any] = {}
    with archive:
        for info in archive.infolist():
            name = info.filename.replace("\\", "/").rsplit("/", 1)[-1]
            if name not in MEMBERS or info.is_dir():
                continue
            if info.file_size > MAX_MEMBER_BYTES:
                raise CIError(f"{info.filename}: {info.file_size} bytes, over {MAX_MEMBER_BYTES}")
            with archive.open(info) as fh:
                raw = fh.read(MAX_MEMBER_BYTES + 1)  # the header's size may lie
            if len(raw) > MAX_MEMBER_BYTES:
                raise CIError(f"{info.filename}: over {MAX_MEMBER_BYTES} bytes")
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise CIError(f"{info.filename}: not valid JSON ({exc})") from None
            # Deep nesting and huge integers are one CIError too, not a traceback.
            found[name] = results.parse_json(text, info.filename, CIError)
    return found


def artifacts_of(api: GitHubClient, repo: str, run_id: int) -> dict[str, Mapping[str, Any]]:
    data = get_json(api, f"/repos/{repo}/actions/runs/{run_id}/artifacts", {"per_page": 100})
    arts = data.get("artifacts") if isinstance(data, Mapping) else None
    if not isinstance(arts, list):
        raise CIError(f"run {run_id}: the artifacts list is not a list")
    return {str(a.get("name")): a for a in arts if isinstance(a, Mapping) and not a.get("expired")}


def find_comment(api: GitHubClient, repo: str, number: int, bot: str) -> dict[str, Any] | None:
    """This workflow's earlier comment: the marker, written by the bot."""
    for page in range(1, 51):
        batch = get_json(
            api, f"/repos/{repo}/issues/{number}/comments", {"per_page": 100, "page": page}
        )
        if not isinstance(batch, list):
            raise CIError(f"pull request {number}: the comments list is not a list")
        for comment in batch:
            user = comment.get("user") or {}
            if MARKER in str(comment.get("body", "")) and user.get("login") == bot:
                return comment
        if len(batch) < 100:
            return None
    return None


def stale_reason(api: GitHubClient, repo: str, number: int, head_sha: str) -> str | None:
    """Why this run's results must not be posted (the pull request is closed, or a newer
    push has its own run), or None."""
    pull = get_json(api, f"/repos/{repo}/pulls/{number}")
    if not isinstance(pull, Mapping) or pull.get("state") != "open":
        return f"pull request {number} is not open"
    head = (pull.get("head") or {}).get("sha")
    if head != head_sha:
        return f"pull request {number}'s head is {head}, not the run's {head_sha}: a newer push has its own run"
    return None


def upsert(api: GitHubClient, repo: str, number: int, body: str, bot: str) -> tuple[str, int]:
    old = find_comment(api, repo, number, bot)
    if old is not None:
        send_json(api, "PATCH", f"/repos/{repo}/issues/comments/{int(old['id'])}", {"body": body})
        return "updated", int(old["id"])
    new = send_json(api, "POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
    return "created", int(new["id"])


# -- the command -------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--event-path",
        default=os.environ.get("GITHUB_EVENT_PATH"),
        help="the workflow_run event payload (default $GITHUB_EVENT_PATH)",
    )
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY"), help="OWNER/NAME")
    parser.add_argument(
        "--api-url", default=os.environ.get("GITHUB_API_URL") or DEFAULT_API, help="REST API root"
    )
    parser.add_argument(
        "--server-url",
        default=os.environ.get("GITHUB_SERVER_URL") or "https://github.com",
        help="for the report link (default $GITHUB_SERVER_URL)",
    )
    parser.add_argument(
        "--bot-login", default=BOT_LOGIN, help=f"the comment's author (default {BOT_LOGIN})"
    )
    parser.add_argument("--diff", metavar="FILE", help="render this diff.json instead (no API)")
    parser.add_argument("--render-only", action="store_true", help="print the body, post nothing")
    parser.add_argument("--output", metavar="FILE", help="also write the body here")


def run(args: argparse.Namespace) -> int:
    if args.diff:
        body = render(validate_diff(load_json(Path(args.diff))), None, None)
        return _finish(body, args, None)
    if not args.event_path:
        raise CIError("--event-path is required (or set GITHUB_EVENT_PATH)")
    if not args.repo or not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo):
        raise CIError("--repo OWNER/NAME is required (or set GITHUB_REPOSITORY)")
    event = load_json(Path(args.event_path))
    run = event.get("workflow_run") if isinstance(event, Mapping) else None
    if not isinstance(run, Mapping):
        raise CIError(f"{args.event_path}: not a workflow_run event")
    if run.get("event") != "pull_request":
        notice(f"the run was a {run.get('event')!r} event, not a pull request: no comment")
        return 0
    run_id, head_sha = run.get("id"), run.get("head_sha")
    if not isinstance(run_id, int) or not isinstance(head_sha, str) or not head_sha:
        raise CIError(f"{args.event_path}: workflow_run lacks id or head_sha")
    api = github_client(args.api_url)
    artifacts = artifacts_of(api, args.repo, run_id)
    art = artifacts.get(ARTIFACT)
    if art is None:
        notice(f"run {run_id} has no {ARTIFACT} artifact: no comment", "warning")
        return 0
    size = art.get("size_in_bytes")
    if not isinstance(size, int) or size > MAX_ARCHIVE_BYTES:
        raise CIError(f"artifact {ARTIFACT}: size {size!r} is over {MAX_ARCHIVE_BYTES} bytes")
    zip_url = f"{api.api_url}/repos/{args.repo}/actions/artifacts/{int(art['id'])}/zip"
    members = read_members(download(api, zip_url, MAX_ARCHIVE_BYTES))
    if "diff.json" not in members:
        raise CIError(f"artifact {ARTIFACT} has no diff.json")
    diff = validate_diff(members["diff.json"])
    pulls = [p for p in run.get("pull_requests") or [] if isinstance(p, Mapping)]
    if pulls and isinstance(pulls[0].get("number"), int):
        number = int(pulls[0]["number"])
    elif "pull-request.json" in members:  # a fork: the event names no pull request
        number = pr_number_of(members["pull-request.json"])
    else:
        raise CIError("neither the event nor the artifact names the pull request")
    stale = stale_reason(api, args.repo, number, head_sha)
    if stale:
        notice(f"{stale}; nothing posted")
        return 0
    server = args.server_url.rstrip("/")
    run_url = f"{server}/{args.repo}/actions/runs/{run_id}"
    report = artifacts.get(REPORT_ARTIFACT)
    report_url = f"{run_url}/artifacts/{int(report['id'])}" if report else None
    body = render(diff, run_url, report_url)
    if args.render_only:
        return _finish(body, args, None)
    action, comment_id = upsert(api, args.repo, number, body, args.bot_login)
    print(f"comment {comment_id} on pull request {number}: {action}")
    return _finish(body, args, {"action": action, "comment-id": comment_id, "pull-request": number})


def _finish(body: str, args: argparse.Namespace, outputs: dict[str, Any] | None) -> int:
    if args.output:
        Path(args.output).write_text(body, encoding="utf-8", newline="\n")
    if outputs is None:
        sys.stdout.write(body)
    else:
        set_outputs(outputs)
    return 0
