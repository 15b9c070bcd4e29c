"""Download an artifact from the latest completed run of a workflow on a branch.

Used for two baselines: the merged results of the last default-branch `ci.yml` run (the
PR diff) and of the last `nightly.yml` run (the nightly diff and the shard durations).

Walks the workflow's completed runs on --branch, newest first, skipping --exclude-run
(the current run), and downloads the first unexpired artifact named --artifact into
--dest. Talks to the REST API through cache-tools' client (cache_tools/github_api.py,
so cache-tools and requests must be installed) with the token in GITHUB_TOKEN or GH_TOKEN
(the job needs `actions: read`). The artifact download redirects to blob storage; the
token is not sent there.

Outputs (when $GITHUB_OUTPUT is set): found (true|false), run-id, run-url, path.
No baseline is not an error unless --required: the first run of a workflow has none.

Example:
  GITHUB_TOKEN=... python -m ci fetch-baseline --repo OWNER/NAME --workflow ci.yml \\
      --artifact merged-results --branch main --dest baseline
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import urllib.parse
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from cache_tools.credentials import token_from_env
from cache_tools.errors import ApiError
from cache_tools.github_api import DEFAULT_API_URL as DEFAULT_API
from cache_tools.github_api import GitHubClient
from ci._common import CIError, notice, set_outputs

MAX_ARCHIVE_BYTES = 512 * 1024 * 1024


def github_client(api_url: str) -> GitHubClient:
    """cache-tools' REST client (the project's one) with the token of GITHUB_TOKEN or
    GH_TOKEN, or none. Its errors never show the token (as is, percent- or base64-encoded:
    a server may echo it) nor credentials in ``--api-url``."""
    with api_errors():
        return GitHubClient(
            token_from_env(required=False), api_url, timeout=60.0, user_agent="iree-conformance-ci"
        )


@contextlib.contextmanager
def api_errors() -> Iterator[None]:
    """The client's ApiError as a CIError: the ci/ scripts' one-line message and exit status."""
    try:
        yield
    except ApiError as exc:
        raise CIError(str(exc)) from None


def get_json(api: GitHubClient, path: str, params: dict[str, Any] | None = None) -> Any:
    with api_errors():
        return api.request("GET", path, params=params).data


def download(api: GitHubClient, url: str, limit: int = MAX_ARCHIVE_BYTES) -> bytes:
    """An artifact's zip: the API redirects to storage, which gets no token."""
    with api_errors():
        return api.download(url, limit=limit)


def find_artifact(
    api: GitHubClient,
    repo: str,
    workflow: str,
    branch: str,
    artifact: str,
    exclude_run: str | None,
    max_runs: int,
    event: str | None,
) -> tuple[dict, dict] | None:
    params: dict[str, Any] = {
        "branch": branch,
        "status": "completed",
        "per_page": min(max_runs, 100),
    }
    if event:
        params["event"] = event
    runs = get_json(
        api, f"/repos/{repo}/actions/workflows/{urllib.parse.quote(workflow)}/runs", params
    )
    for run in runs.get("workflow_runs", [])[:max_runs]:
        if exclude_run and str(run.get("id")) == str(exclude_run):
            continue
        listing = get_json(
            api,
            f"/repos/{repo}/actions/runs/{run['id']}/artifacts",
            {"name": artifact, "per_page": 10},
        )
        for art in listing.get("artifacts", []):
            if art.get("name") == artifact and not art.get("expired"):
                return run, art
    return None


def extract(data: bytes, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise CIError("the artifact download is not a zip archive") from None
    with archive:
        for info in archive.infolist():
            name = PurePosixPath(info.filename.replace("\\", "/"))
            if name.is_absolute() or ".." in name.parts or (name.parts and ":" in name.parts[0]):
                raise CIError(f"refusing unsafe path in artifact: {info.filename!r}")
            if info.is_dir():
                continue
            target = dest.joinpath(*name.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            written.append(target)
    return written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        default=os.environ.get("GITHUB_REPOSITORY"),
        help="OWNER/NAME (default $GITHUB_REPOSITORY)",
    )
    parser.add_argument("--workflow", required=True, help="workflow file name, e.g. ci.yml")
    parser.add_argument("--artifact", required=True, help="artifact name")
    parser.add_argument("--branch", default="main", help="branch whose runs count (default main)")
    parser.add_argument("--event", help="only runs of this event (e.g. push, schedule)")
    parser.add_argument("--dest", required=True, help="folder to extract into")
    parser.add_argument(
        "--exclude-run",
        default=os.environ.get("GITHUB_RUN_ID"),
        help="skip this run id (default $GITHUB_RUN_ID)",
    )
    parser.add_argument(
        "--max-runs", type=int, default=20, help="runs to look through (default 20)"
    )
    parser.add_argument(
        "--api-url", default=os.environ.get("GITHUB_API_URL") or DEFAULT_API, help="REST API root"
    )
    parser.add_argument("--required", action="store_true", help="exit 1 when no artifact is found")


def run(args: argparse.Namespace) -> int:
    if not args.repo or "/" not in args.repo:
        raise CIError("--repo OWNER/NAME is required (or set GITHUB_REPOSITORY)")
    api = github_client(args.api_url)
    found = find_artifact(
        api,
        args.repo,
        args.workflow,
        args.branch,
        args.artifact,
        args.exclude_run,
        args.max_runs,
        args.event,
    )
    if found is None:
        message = f"no artifact {args.artifact!r} in the last {args.max_runs} completed {args.workflow} runs on {args.branch}"
        set_outputs({"found": False, "run-id": "", "run-url": "", "path": ""})
        if args.required:
            raise CIError(message)
        notice(message)
        return 0
    run, art = found
    files = extract(download(api, art["archive_download_url"]), Path(args.dest))
    set_outputs(
        {
            "found": True,
            "run-id": run["id"],
            "run-url": run.get("html_url", ""),
            "path": str(Path(args.dest)),
        }
    )
    print(
        f"baseline: run {run['id']} ({run.get('html_url', '')}), {len(files)} file(s) in {args.dest}"
    )
    return 0
