from __future__ import annotations

import json
from pathlib import Path

from cache_tools.config import load_config
from cache_tools.entries import parse_entries
from cache_tools.errors import ApiError
from cache_tools.prune import execute_prune, plan_prune
from tests.support.ct_fake_github import FakeGitHub
from tests.support.ct_scenario import scenario

REPO = "octo/repo"


def prune(run_cli, server: FakeGitHub, config: Path, *extra: str):
    return run_cli(
        "prune", "--repo", REPO, "--api-url", server.url, "--config", str(config), "--json", *extra
    )


def test_dry_run_deletes_nothing(fake_github: FakeGitHub, config_file: Path, run_cli) -> None:
    fake_github.entries = scenario()
    fake_github.pulls = {12: "closed", 13: "open"}
    before = [e["id"] for e in fake_github.entries]
    res = prune(run_cli, fake_github, config_file)
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["dry_run"] is True
    assert data["planned_ids"] == [4, 6]  # closed PR 12; superseded on PR 13
    assert {e["id"]: e["reason"] for e in data["planned"]} == {
        4: "closed-pull-request",
        6: "superseded",
    }
    assert [e["id"] for e in data["kept_protected"]] == [1]
    assert fake_github.calls("DELETE") == [] and fake_github.deleted_ids == []
    assert [e["id"] for e in fake_github.entries] == before


def test_yes_deletes_exactly_the_planned_ids(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    fake_github.entries = scenario()
    fake_github.pulls = {12: "closed", 13: "open"}
    planned = json.loads(prune(run_cli, fake_github, config_file).out)["planned_ids"]
    res = prune(run_cli, fake_github, config_file, "--yes")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["deleted"] == planned == sorted(fake_github.deleted_ids)
    assert [c["path"].rsplit("/", 1)[1] for c in fake_github.calls("DELETE")] == [
        str(i) for i in planned
    ]
    assert 1 in {e["id"] for e in fake_github.entries}  # protected default-branch entry kept


def test_protected_class_only_when_named(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    fake_github.entries = scenario()
    res = prune(
        run_cli,
        fake_github,
        config_file,
        "--yes",
        "--include-protected",
        "llvm-mlir",
        "--class",
        "llvm-mlir",
        "--keep-closed-prs",
    )
    data = json.loads(res.out)
    assert data["deleted"] == [1] and fake_github.deleted_ids == [1]
    assert fake_github.calls("GET", f"/repos/{REPO}/pulls") == []  # --keep-closed-prs: no lookups


def test_keep_superseded_prunes_only_closed_pull_requests(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    """What cache-audit.yml runs when a pull request closes (ci/prune_caches.py)."""
    fake_github.entries = scenario()
    fake_github.pulls = {12: "closed", 13: "open"}
    res = prune(run_cli, fake_github, config_file, "--keep-superseded", "--yes")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert {e["id"]: e["reason"] for e in data["planned"]} == {4: "closed-pull-request"}
    assert data["deleted"] == [4] and fake_github.deleted_ids == [4]
    assert data["kept_protected"] == []  # superseded entries are not even candidates


def test_unknown_class_name_is_an_error(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    res = prune(run_cli, fake_github, config_file, "--include-protected", "llvm")
    assert res.code == 2 and "class 'llvm' is not defined" in res.err
    assert fake_github.requests == []


def test_table_output_says_dry_run(fake_github: FakeGitHub, config_file: Path, run_cli) -> None:
    fake_github.entries = scenario()
    res = run_cli(
        "prune", "--repo", REPO, "--api-url", fake_github.url, "--config", str(config_file)
    )
    assert "dry run: nothing deleted (add --yes to delete)" in res.out
    assert "kept 1 default-branch entries of protected classes" in res.out


def test_execute_continues_after_a_failure_and_stops_on_auth(config_file: Path) -> None:
    entries = parse_entries(scenario())
    plan = plan_prune(entries, load_config(str(config_file)), lambda n: "closed")
    assert plan.ids == [4, 5, 6]

    def flaky(cache_id: int) -> bool:
        if cache_id == 4:
            raise ApiError("boom", 500)
        return cache_id != 6

    out = execute_prune(plan, flaky)
    assert (out.deleted, out.already_gone, [f["id"] for f in out.failed]) == ([5], [6], [4])

    def denied(cache_id: int) -> bool:
        raise ApiError("forbidden", 403)

    assert [f["id"] for f in execute_prune(plan, denied).failed] == [4]


def test_closed_pr_is_deleted_without_reading_the_pull_request(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    # Issue #12.8: on a private repository, GET /pulls/N needs pull-requests: read; the
    # closed event's own pull request is deleted directly (--closed-pr N).
    fake_github.entries = scenario()
    for _ in range(4):
        fake_github.script(
            "GET",
            f"/repos/{REPO}/pulls/12",
            403,
            {},
            {"message": "Resource not accessible by integration"},
        )
        fake_github.script(
            "GET",
            f"/repos/{REPO}/pulls/13",
            403,
            {},
            {"message": "Resource not accessible by integration"},
        )
    blind = json.loads(prune(run_cli, fake_github, config_file, "--keep-superseded").out)
    assert blind["planned_ids"] == []  # state unknown: kept, and the report says why
    assert any("pull-requests: read" in e for e in blind["api_events"])
    before = len(fake_github.calls("GET", f"/repos/{REPO}/pulls/12"))
    res = prune(
        run_cli, fake_github, config_file, "--keep-superseded", "--closed-pr", "12", "--yes"
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert {e["id"]: e["reason"] for e in data["planned"]} == {4: "closed-pull-request"}
    assert data["deleted"] == [4] == fake_github.deleted_ids
    assert len(fake_github.calls("GET", f"/repos/{REPO}/pulls/12")) == before  # not asked


def test_closed_pr_also_works_with_keep_closed_prs(config_file: Path) -> None:
    entries = parse_entries(scenario())
    asked: list[int] = []
    plan = plan_prune(
        entries,
        load_config(str(config_file)),
        lambda n: asked.append(n) or None,
        superseded_entries=False,
        known_closed=[12],
    )
    assert [(i.entry.id, i.reason) for i in plan.delete] == [(4, "closed-pull-request")]
    assert 12 not in asked
