"""ci/pr_comment.py against devtools/fake_github_api.py: one comment, created then edited in
place; a hostile results artifact is escaped or refused."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from ci import pr_comment
from devtools.fake_github_api import TOKEN, FakeGitHub
from tests.support.ci_helpers import clean_env, run_ci

REPO = "octo/repo"
SHA = "a" * 40
RUN_ID = 42


def diff_payload(**over) -> dict:
    data = {
        "compared_platforms": ["linux/x86_64"],
        "only_current": [],
        "only_baseline": [],
        "new_failures": [
            {
                "platform": "linux/x86_64",
                "target": "llvm-cpu",
                "case_id": "stablehlo/add_f32",
                "now": "fail@compare",
                "before": "pass",
                "reason": "output 0: actual nan, expected 0.0898",
            }
        ],
        "new_passes": [],
        "changed": [],
        "added": 0,
        "removed": 0,
        "pass_counts": [{"suite": "stablehlo", "target": "llvm-cpu", "now": 39, "before": 40}],
        "flaky": [],
    }
    data.update(over)
    return data


def artifact(tmp_path: Path, diff: dict | bytes, number: int | None = 1, name="merged") -> Path:
    path = tmp_path / f"{name}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("diff.json", diff if isinstance(diff, bytes) else json.dumps(diff))
        if number is not None:
            zf.writestr("pull-request.json", json.dumps({"number": number}))
    return path


def event(tmp_path: Path, pulls: list | None = None, evt: str = "pull_request") -> Path:
    path = tmp_path / "event.json"
    run = {
        "id": RUN_ID,
        "event": evt,
        "head_sha": SHA,
        "pull_requests": [{"number": 1}] if pulls is None else pulls,
    }
    path.write_text(json.dumps({"workflow_run": run}), encoding="utf-8")
    return path


@pytest.fixture()
def api():
    fake = FakeGitHub(owner_repo=REPO, pulls={1: "open"}, pull_heads={1: SHA})
    fake.start()
    yield fake
    fake.stop()


def serve(api: FakeGitHub, zip_path: Path, report: bool = True) -> None:
    arts = [{"id": 7, "name": "merged-results", "size_in_bytes": zip_path.stat().st_size}]
    if report:
        arts.append({"id": 8, "name": "conformance-report", "size_in_bytes": 100})
    api.run_artifacts[RUN_ID] = arts
    api.artifact_files[7] = str(zip_path)


def post(api: FakeGitHub, event_path: Path, check: bool = True):
    env = clean_env(GITHUB_TOKEN=TOKEN, GITHUB_SERVER_URL="https://github.com")
    return run_ci(
        "pr-comment",
        "--event-path",
        event_path,
        "--repo",
        REPO,
        "--api-url",
        api.url,
        env=env,
        check=check,
    )


def test_the_comment_is_created_then_edited_in_place(api, tmp_path):
    serve(api, artifact(tmp_path, diff_payload()))
    first = post(api, event(tmp_path))
    assert "created" in first.stdout
    [comment] = api.comments[1]
    body = comment["body"]
    assert body.startswith(pr_comment.MARKER)
    assert "1 new failure(s), 0 new pass(es), 0 flaky" in body
    assert "| stablehlo | llvm\\-cpu | 40 | 39 | -1 |" in body
    assert f"[run](https://github.com/{REPO}/actions/runs/{RUN_ID})" in body
    assert f"[HTML report](https://github.com/{REPO}/actions/runs/{RUN_ID}/artifacts/8)" in body
    # Another push: the same comment, new text; still one comment.
    serve(api, artifact(tmp_path, diff_payload(new_failures=[]), name="second"))
    second = post(api, event(tmp_path))
    assert "updated" in second.stdout
    assert [c["id"] for c in api.comments[1]] == [comment["id"]]
    assert "0 new failure(s)" in api.comments[1][0]["body"]
    assert [r["method"] for r in api.requests if "/comments" in r["path"]] == [
        "GET",
        "POST",
        "GET",
        "PATCH",
    ]


def test_someone_elses_comment_with_the_marker_is_not_taken_over(api, tmp_path):
    api.comments[1] = [{"id": 5, "body": pr_comment.MARKER, "user": {"login": "mallory"}}]
    serve(api, artifact(tmp_path, diff_payload()))
    post(api, event(tmp_path))
    assert [c["id"] for c in api.comments[1]] == [5, 6]


def test_a_fork_takes_the_number_from_the_artifact_and_checks_the_head(api, tmp_path):
    serve(api, artifact(tmp_path, diff_payload(), number=1))
    assert "created" in post(api, event(tmp_path, pulls=[])).stdout
    api.pull_heads[1] = "b" * 40  # a newer push: this run's results are stale
    result = post(api, event(tmp_path, pulls=[]))  # not an error: the newer run posts
    assert "not the run's" in result.stderr and "nothing posted" in result.stderr
    assert len(api.comments[1]) == 1 and not [r for r in api.requests if r["method"] == "PATCH"]


def test_a_push_run_gets_no_comment(api, tmp_path):
    result = post(api, event(tmp_path, evt="push"))
    assert "not a pull request" in result.stderr and not api.comments


def test_hostile_text_is_escaped(api, tmp_path):
    hostile = {
        "platform": "linux/x86_64",
        "target": "llvm-cpu | injected | cell",
        "case_id": "x` <img src=x onerror=alert(1)> ``` [link](https://evil.example) @octocat #1",
        "now": "fail@compare\n\n## Fake heading\n<script>alert(1)</script>",
        "before": "pass",
        "reason": "ping @org/team **bold** <!-- " + "A" * 10_000,
    }
    serve(api, artifact(tmp_path, diff_payload(new_failures=[hostile] * 100)))
    post(api, event(tmp_path))
    body = api.comments[1][0]["body"]
    assert len(body) <= pr_comment.MAX_BODY
    for raw in ("<img", "<script", "<!-- A", "@octocat", "@org", "](https://evil", "\n## Fake"):
        assert raw not in body, raw
    assert "@\u200boctocat" in body and "&lt;img" in body
    assert body.count(pr_comment.MARKER) == 1
    table = [line for line in body.splitlines() if line.startswith("| linux")]
    assert len(table) == pr_comment.MAX_ROWS  # the rest are counted, not listed
    assert all(line.count(" | ") == 5 for line in table)  # no injected cell
    assert "…and 75 more" in body


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (json.dumps({"new_failures": "all of them"}).encode(), "new_failures must be a list"),
        (json.dumps({"new_failures": [{"case_id": 3}]}).encode(), "case_id: expected a string"),
        (
            json.dumps({"pass_counts": [{"suite": "s", "target": "t", "now": -1}]}).encode(),
            "expected a count",
        ),
    ],
)
def test_malformed_data_is_refused(api, tmp_path, content, message):
    serve(api, artifact(tmp_path, content))
    result = post(api, event(tmp_path), check=False)
    assert result.returncode == 8 and message in result.stderr, result.stderr
    assert not api.comments.get(1)


def test_a_huge_artifact_is_refused_before_download(api, tmp_path):
    zip_path = artifact(tmp_path, diff_payload())
    serve(api, zip_path)
    api.run_artifacts[RUN_ID][0]["size_in_bytes"] = pr_comment.MAX_ARCHIVE_BYTES + 1
    result = post(api, event(tmp_path), check=False)
    assert result.returncode == 8 and "over" in result.stderr
    assert not [r for r in api.requests if r["path"].endswith("/zip")]


def test_a_member_that_inflates_past_the_limit_is_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("diff.json", b" " * (pr_comment.MAX_MEMBER_BYTES + 10))  # ~4 KB zipped
    assert len(buf.getvalue()) < 100_000
    with pytest.raises(pr_comment.CIError, match="over"):
        pr_comment.read_members(buf.getvalue())


def test_no_baseline_says_so(tmp_path):
    path = tmp_path / "diff.json"
    path.write_text(
        json.dumps(
            {
                "baseline": None,
                "pass_counts": [{"suite": "s", "target": "t", "now": 3, "before": None}],
                "flaky": [],
            }
        ),
        encoding="utf-8",
    )
    out = run_ci("pr-comment", "--diff", path).stdout
    assert "No results of `main` were found" in out and "| s | t |  | 3 |  |" in out


def test_not_judged_cases_are_counted_and_listed_apart():
    diff = pr_comment.validate_diff(
        {
            "baseline": {},
            "not_judged": [
                {"platform": "linux/x86_64", "target": "t", "case_id": "c", "reason": "no shape"}
            ],
        }
    )
    body = pr_comment.render(diff, None, None)
    assert "0 new failure(s), 0 new pass(es), 0 flaky, 1 not judged" in body
    assert "### Not judged: neither IREE's failure nor a pass (1)" in body and "no shape" in body


def test_a_users_programs_harness_steps_are_a_column_beside_its_verdict():
    row = {"platform": "linux/x86_64", "target": "t", "now": "fail@compare", "before": "pass"}
    diff = pr_comment.validate_diff(
        {
            "baseline": {},
            "new_failures": [
                {**row, "case_id": "torch/ext/m/a", "reason": "differs", "steps": "strict export"},
                {**row, "case_id": "stablehlo/b", "reason": "differs too"},
            ],
            "new_passes": [{**row, "case_id": "torch/ext/m/c", "steps": "eval()"}],
        }
    )
    body = pr_comment.render(diff, None, None)
    assert "| Platform | Target | Case | Now | Before | Harness steps | Reason |" in body
    assert "| strict export | differs |" in body and "| differs too |" in body
    assert "| Platform | Target | Case | Before | Harness steps |" in body
    plain = pr_comment.render(
        pr_comment.validate_diff(
            {
                "baseline": {},
                "new_failures": [{**row, "case_id": "stablehlo/b", "reason": "differs"}],
            }
        ),
        None,
        None,
    )
    assert "Harness steps" not in plain
    with pytest.raises(pr_comment.CIError, match=r"new_failures\[0\]\.steps"):
        pr_comment.validate_diff({"baseline": {}, "new_failures": [{**row, "steps": 3}]})


def test_the_fake_api_refuses_an_overlong_body(api):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        f"{api.url}/repos/{REPO}/issues/1/comments",
        data=json.dumps({"body": "x" * 65_537}).encode(),
        headers={"Authorization": f"Bearer {TOKEN}"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 422


def test_check_pr_view_reads_the_summary_and_the_fake_apis_state(tmp_path):
    summary = tmp_path / "summary.json"
    summary.write_text(
        json.dumps({"annotations": [{"level": "error", "file": "a/b.mlir", "line": 8}]}),
        encoding="utf-8",
    )
    ok = run_ci(
        "devtools/check_pr_view.py",
        "annotations",
        "--summary",
        summary,
        "--expect",
        "error:a/b.mlir:8",
    )
    assert "error: a/b.mlir:8" in ok.stdout
    missing = run_ci(
        "devtools/check_pr_view.py",
        "annotations",
        "--summary",
        summary,
        "--expect",
        "error:a/b.mlir:9",
        check=False,
    )
    assert missing.returncode == 1 and "no error annotation at a/b.mlir:9" in missing.stderr
    state = tmp_path / "fake-github.json"
    comment = {"id": 1, "body": pr_comment.MARKER + "\nhi", "created_at": "t1", "updated_at": "t1"}
    state.write_text(json.dumps({"comments": {"1": [comment]}}), encoding="utf-8")
    assert run_ci("devtools/check_pr_view.py", "comment", "--state", state).returncode == 0
    never = run_ci(
        "devtools/check_pr_view.py", "comment", "--state", state, "--edited", check=False
    )
    assert never.returncode == 1 and "never edited" in never.stderr
    state.write_text(json.dumps({"comments": {"1": [comment, comment]}}), encoding="utf-8")
    two = run_ci("devtools/check_pr_view.py", "comment", "--state", state, check=False)
    assert two.returncode == 1 and "2 conformance comments" in two.stderr


def test_the_comment_lists_cases_significantly_slower_than_main():
    from ci import pr_comment as pc

    diff = pc.validate_diff(
        {
            "speed": [
                {
                    "platform": "linux/x86_64",
                    "target": "llvm-cpu",
                    "case_id": "onnx-models/<b>resnet</b>",
                    "change": "slower by 25.0 % (p < 0.01; median 1.00 ms -> 1.25 ms)",
                }
            ]
        }
    )
    body = pc.render(diff, None, None)
    assert "### Significantly slower or larger than main (1)" in body
    assert "slower by 25\\.0 % \\(p &lt; 0\\.01" in body and "<b>" not in body  # escaped
    with pytest.raises(pc.CIError, match="speed"):
        pc.validate_diff({"speed": [{"platform": 1}]})
