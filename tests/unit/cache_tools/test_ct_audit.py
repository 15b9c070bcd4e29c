from __future__ import annotations

import json
from pathlib import Path

from tests.support.ct_fake_github import TOKEN, FakeGitHub, entry
from tests.support.ct_scenario import GIB, NOW, scenario

REPO = "octo/repo"


def audit(run_cli, server: FakeGitHub, config: Path, *extra: str, env: dict | None = None):
    return run_cli(
        "audit",
        "--repo",
        REPO,
        "--api-url",
        server.url,
        "--config",
        str(config),
        "--now",
        NOW,
        *extra,
        env=env,
    )


def test_audit_report(fake_github: FakeGitHub, config_file: Path, run_cli, tmp_path: Path) -> None:
    fake_github.entries = scenario()
    summary = tmp_path / "summary.md"
    res = audit(
        run_cli, fake_github, config_file, "--json", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert res.code == 0, res.err
    r = json.loads(res.out)
    sizes = [e["size_in_bytes"] for e in fake_github.entries]
    assert r["listed_bytes"] == sum(sizes) == r["usage_bytes"]
    assert r["listed_entries"] == len(sizes)
    assert sum(c["bytes"] for c in r["per_class"]) == sum(sizes)
    assert sum(k["bytes"] for k in r["per_ref_kind"]) == sum(sizes)
    per_class = {c["class"]: c for c in r["per_class"]}
    assert per_class["llvm-mlir"]["bytes"] == 6 * GIB and per_class["(other)"]["entries"] == 1
    kinds = {k["ref_kind"]: k for k in r["per_ref_kind"]}
    assert kinds["default-branch"]["bytes"] == 7 * GIB and kinds["pull-request"]["entries"] == 3
    assert r["limit_bytes"] == 10 * GIB and r["limit_source"] == "api"
    assert {e["id"] for e in r["superseded"]} == {1, 6}
    assert [e["id"] for e in r["near_expiry"]] == [4, 1]  # expire in 6 h and 12 h
    assert r["eviction_order"][0]["id"] == 4  # least recently accessed
    accessed = [e["last_accessed_at"] for e in r["eviction_order"]]
    assert accessed == sorted(accessed)
    assert {e["id"] for e in r["large_entries"]} == {1, 2}
    assert [t["class"] for t in r["thrash"]] == ["iree-artifacts"]
    assert "Actions cache audit" in summary.read_text()


def test_audit_totals_across_pages(fake_github: FakeGitHub, config_file: Path, run_cli) -> None:
    fake_github.entries = [
        entry(
            i,
            f"pip-wheels-v1-Linux-X64-f{i:04x}",
            f"refs/pull/{i}/merge",
            1000 + i,
            "2025-03-09T00:00:00Z",
        )
        for i in range(1, 231)
    ]
    r = json.loads(audit(run_cli, fake_github, config_file, "--json").out)
    assert r["listed_entries"] == 230
    assert r["listed_bytes"] == sum(1000 + i for i in range(1, 231))
    assert len(fake_github.calls("GET", f"/repos/{REPO}/actions/caches")) == 3


def test_audit_table_and_limits_fallback(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    fake_github.entries = scenario()
    fake_github.storage_limit_gb = None
    fake_github.retention_days = None
    res = audit(run_cli, fake_github, config_file)
    assert res.code == 0, res.err
    assert "limit from default" in res.out and "retention:   7 days (default)" in res.out
    assert "superseded (2," in res.out and "thrash: class 'iree-artifacts'" in res.out
    assert "predicted eviction order" in res.out


def test_fail_over_threshold(fake_github: FakeGitHub, config_file: Path, run_cli) -> None:
    fake_github.entries = scenario()  # about 7.9 GiB of 10 GiB
    tripped = audit(run_cli, fake_github, config_file, "--fail-over", "50")
    assert tripped.code == 6 and "over --fail-over 50%" in tripped.err
    assert audit(run_cli, fake_github, config_file, "--fail-over", "95").code == 0


def test_token_never_appears_in_output(
    fake_github: FakeGitHub, config_file: Path, run_cli, tmp_path: Path, caplog
) -> None:
    fake_github.entries = scenario()
    fake_github.script(
        "GET", f"/repos/{REPO}/actions/caches", 500, body={"message": f"echo {TOKEN}"}
    )
    fake_github.script("GET", f"/repos/{REPO}/actions/cache/usage", 429, {"retry-after": "1"})
    summary = tmp_path / "s.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    for extra in ((), ("--json",)):
        res = audit(run_cli, fake_github, config_file, *extra, env=env)
        assert res.code == 0, res.err
        assert TOKEN not in res.out and TOKEN not in res.err
    bad = run_cli(
        "audit",
        "--repo",
        REPO,
        "--api-url",
        fake_github.url,
        "--now",
        NOW,
        env={"GITHUB_TOKEN": TOKEN + "x"},
    )
    assert bad.code == 7 and "401" in bad.err and TOKEN not in bad.err
    # An error message from the server that echoes the token is redacted too.
    fake_github.script(
        "GET", f"/repos/{REPO}/actions/caches", 422, body={"message": f"bad {TOKEN}"}
    )
    echoed = audit(run_cli, fake_github, config_file)
    assert echoed.code == 7 and TOKEN not in echoed.err and "***" in echoed.err
    assert TOKEN not in caplog.text and TOKEN not in summary.read_text()
    # every request did carry it, in the header only
    assert all(
        r["authorization"] in (f"Bearer {TOKEN}", f"Bearer {TOKEN}x") for r in fake_github.requests
    )


def test_audit_needs_a_token_and_a_repo(run_cli, config_file: Path) -> None:
    res = run_cli("audit", "--repo", REPO, "--api-url", "http://127.0.0.1:9", token=False)
    assert res.code == 7 and "no GitHub token" in res.err
    res = run_cli("audit", "--api-url", "http://127.0.0.1:9")
    assert res.code == 2 and "--repo OWNER/NAME" in res.err


def test_malformed_entry_is_a_clear_error(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    bad = entry(1, "k", "refs/heads/main", 1, "2025-03-01T00:00:00Z")
    bad["size_in_bytes"] = "big"
    fake_github.entries = [bad]
    res = audit(run_cli, fake_github, config_file)
    assert res.code == 7 and "field 'size_in_bytes'" in res.err
    fake_github.entries = [entry(1, "k", "refs/heads/main", 1, "yesterday")]
    res = audit(run_cli, fake_github, config_file)
    assert res.code == 7 and "not an ISO 8601 time" in res.err
