"""The event payload act hands to a workflow ($GITHUB_EVENT_PATH, `github.event`).

act takes `github.ref` from the payload: `ref` for push and workflow_dispatch,
`refs/pull/N/merge` for pull_request, the repository's default branch for schedule.
A push to the default branch is what lets `cache-tools plan` save the heavy classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EVENTS = ("push", "pull_request", "schedule", "workflow_dispatch", "workflow_run")


def repository(full_name: str, default_branch: str) -> dict[str, Any]:
    owner, _, name = full_name.partition("/")
    return {
        "full_name": full_name,
        "name": name,
        "owner": {"login": owner},
        "default_branch": default_branch,
    }


def event_payload(
    event: str,
    *,
    repo: str,
    sha: str,
    default_branch: str = "main",
    branch: str | None = None,
    inputs: Mapping[str, str] | None = None,
    cron: str | None = None,
    pr_number: int = 1,
    pr_action: str = "opened",
    source_run: Mapping[str, Any] | None = None,
    fork: bool = False,
) -> dict[str, Any]:
    """A minimal payload of `event` with the fields the workflows read."""
    if event not in EVENTS:
        raise ValueError(f"event {event!r}: expected one of {', '.join(EVENTS)}")
    if inputs and event != "workflow_dispatch":
        raise ValueError(f"--input is for workflow_dispatch, not {event}")
    branch = branch or default_branch
    repo_obj = repository(repo, default_branch)
    if event == "push":
        return {
            "ref": f"refs/heads/{branch}",
            "before": "0" * 40,
            "after": sha,
            "head_commit": {"id": sha, "message": "local run"},
            "repository": repo_obj,
        }
    if event == "pull_request":
        return {
            "action": pr_action,
            "number": pr_number,
            "pull_request": {
                "number": pr_number,
                "state": "closed" if pr_action == "closed" else "open",
                "merged": False,
                "head": {"ref": branch, "sha": sha, "repo": {"full_name": repo}},
                "base": {"ref": default_branch, "sha": sha, "repo": {"full_name": repo}},
            },
            "repository": repo_obj,
        }
    if event == "schedule":
        return {"schedule": cron or "0 0 * * *", "repository": repo_obj}
    if event == "workflow_run":
        # The completed run of another workflow (source_run: its id and event); a fork's
        # pull request is not named in pull_requests, as on GitHub.
        if source_run is None:
            raise ValueError("workflow_run needs the run it follows (run ci.yml first)")
        head_repo = f"fork/{repo.partition('/')[2]}" if fork else repo
        pulls = (
            []
            if fork or source_run.get("event") != "pull_request"
            else [{"number": pr_number, "head": {"sha": sha}}]
        )
        return {
            "action": "completed",
            "workflow_run": {
                "id": source_run["id"],
                "name": "CI",
                "event": source_run.get("event"),
                "status": "completed",
                "conclusion": "success",
                "head_sha": sha,
                "head_branch": branch,
                "head_repository": {"full_name": head_repo},
                "html_url": source_run.get("html_url", ""),
                "pull_requests": pulls,
            },
            "repository": repo_obj,
        }
    return {
        "ref": f"refs/heads/{branch}",
        "inputs": dict(inputs or {}),
        "repository": repo_obj,
    }


def first_cron(workflow: Mapping[Any, Any]) -> str | None:
    # PyYAML reads the key `on` as True.
    triggers = workflow.get("on", workflow.get(True)) or {}
    if isinstance(triggers, Mapping):
        for item in triggers.get("schedule") or []:
            if isinstance(item, Mapping) and item.get("cron"):
                return str(item["cron"])
    return None


def triggers(workflow: Mapping[Any, Any]) -> list[str]:
    raw = workflow.get("on", workflow.get(True))
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [str(x) for x in raw]
    if isinstance(raw, Mapping):
        return [str(x) for x in raw]
    return []
