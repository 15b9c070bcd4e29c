"""The fake GitHub API's state for local runs, kept in the work dir between runs.

The cache entries (seeded so that audit and prune have something to show, then every
cache a run saves), the pull requests' states and comments, the issues, and each earlier run with the artifacts
act's artifact server stored for it, so that fetch_baseline.py in the next run of the
same workflow finds the last run's artifact.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from devtools.fake_github_api import FakeGitHub, entry

REPO = "local/iree-conformance"


def seed_entries() -> list[dict[str, Any]]:
    """Entries that give audit and prune something to show: a superseded store on main,
    a closed pull request's pip cache and an open one's (SEED_PULLS)."""
    now = datetime.datetime.now(datetime.timezone.utc)

    def ts(days: float) -> str:
        return (now - datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    mib = 1024 * 1024
    return [
        entry(
            1,
            "iree-artifacts-v1-Linux-X64-c5eed5eed5eed5eed-f" + "0" * 16,
            "refs/heads/main",
            9 * mib,
            ts(6),
            ts(5),
        ),
        entry(
            2,
            "iree-artifacts-v1-Linux-X64-c5eed5eed5eed5eed-f" + "1" * 16,
            "refs/heads/main",
            10 * mib,
            ts(2),
            ts(1),
        ),
        entry(
            3,
            "pip-v1-Linux-X64-c5eed5eed5eed0001-f" + "2" * 16,
            "refs/pull/7/merge",
            180 * mib,
            ts(4),
            ts(4),
        ),
        entry(
            4,
            "pip-v1-Linux-X64-c5eed5eed5eed0001-f" + "3" * 16,
            "refs/pull/8/merge",
            175 * mib,
            ts(1),
            ts(0.5),
        ),
    ]


SEED_PULLS = {7: "closed", 8: "open"}
# The pull request act_local's pull_request events are (actlocal/event.py, pr_number).
LOCAL_PR = 1


class ApiState:
    """What the fake API knows, kept in the work dir between runs: the cache entries, and
    each earlier run with its artifacts (so fetch_baseline.py finds the last run's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        self.entries: list[dict[str, Any]] = data.get("entries", seed_entries())
        self.workflow_runs: dict[str, list[dict[str, Any]]] = data.get("workflow_runs", {})
        self.run_artifacts: dict[int, list[dict[str, Any]]] = {
            int(k): v for k, v in data.get("run_artifacts", {}).items()
        }
        self.artifact_files: dict[int, str] = {
            int(k): v for k, v in data.get("artifact_files", {}).items()
        }
        # the pull request's comments (pr-comment.yml edits its one comment run after run)
        self.comments: dict[int, list[dict[str, Any]]] = {
            int(k): v for k, v in data.get("comments", {}).items()
        }
        # the repository's issues (fresh-install.yml opens, updates and closes its one issue)
        self.issues: list[dict[str, Any]] = data.get("issues", [])
        self.fake: FakeGitHub | None = None  # the server of this run, once made

    def api(self, token: str, head_sha: str = "") -> FakeGitHub:
        """The fake API with this state; pull request LOCAL_PR is open at head_sha."""
        self.fake = FakeGitHub(
            self.entries,
            owner_repo=REPO,
            token=token,
            pulls={**SEED_PULLS, LOCAL_PR: "open"},
            pull_heads={LOCAL_PR: head_sha} if head_sha else {},
            workflow_runs=self.workflow_runs,
            run_artifacts=self.run_artifacts,
            artifact_files=self.artifact_files,
            comments=self.comments,
            issues=self.issues,
        )
        return self.fake

    def last_run(self, workflow: str, event: str) -> dict[str, Any] | None:
        """The newest recorded run of workflow for event (what a workflow_run event names)."""
        return next((r for r in self.workflow_runs.get(workflow, []) if r["event"] == event), None)

    def record_run(
        self, workflow: str, run_id: int, event: str, branch: str, artifact_dir: Path
    ) -> None:
        """This run, newest first, with one artifact per zip act's artifact server stored."""
        runs = self.workflow_runs.setdefault(workflow, [])
        runs.insert(
            0,
            {
                "id": run_id,
                "event": event,
                "head_branch": branch,
                "status": "completed",
                "html_url": f"https://github.com/{REPO}/actions/runs/{run_id}",
            },
        )
        arts = []
        for zip_path in sorted(artifact_dir.rglob("*.zip")) if artifact_dir.is_dir() else []:
            artifact_id = max(self.artifact_files, default=0) + 1
            self.artifact_files[artifact_id] = str(zip_path)
            name = zip_path.relative_to(artifact_dir).parts[0]
            arts.append(
                {
                    "id": artifact_id,
                    "name": name,
                    "expired": False,
                    "size_in_bytes": zip_path.stat().st_size,
                }
            )
        self.run_artifacts[run_id] = arts

    def save(self, entries: list[dict[str, Any]]) -> None:
        data = {
            "entries": entries,
            "workflow_runs": self.workflow_runs,
            "run_artifacts": {str(k): v for k, v in self.run_artifacts.items()},
            "artifact_files": {str(k): v for k, v in self.artifact_files.items()},
            "comments": {
                str(k): v for k, v in (self.fake.comments if self.fake else self.comments).items()
            },
            "issues": self.fake.issues if self.fake else self.issues,
        }
        self.path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8", newline="\n")
