"""fresh-install.yml and ci/fresh_install.py: the README's commands, the report against the
lock, and the one issue (against the fake GitHub API on 127.0.0.1)."""

from __future__ import annotations

import argparse
import json

import pytest

from ci import fresh_install as fi
from ci._common import CIError
from devtools.fake_github_api import TOKEN, FakeGitHub
from tests.support.ci_helpers import REPO

yaml = pytest.importorskip("yaml", reason="pyyaml is in the dev extra")

OWNER_REPO = "octo/repo"
RUN_URL = "https://github.com/octo/repo/actions/runs/5"


def workflow_steps() -> dict[str, dict]:
    wf = yaml.safe_load((REPO / ".github/workflows/fresh-install.yml").read_text(encoding="utf-8"))
    return {s["id"]: s for s in wf["jobs"]["fresh-install"]["steps"] if "id" in s}


def test_the_readme_commands_are_read_from_its_set_up_block():
    assert fi.readme_commands() == {
        "install-1": "python -m pip install -e .",
        "run-1": "pytest conformance -n auto --offline",
        "install-2": 'python -m pip install -e ".[dev,stablehlo-ref]" -e ./cache_tools',
        "run-2": "pytest tests -n 2",
    }


def test_the_workflow_runs_exactly_the_readme_commands():
    steps = workflow_steps()
    for step_id, command in fi.readme_commands().items():
        assert steps[step_id]["run"] == command, step_id
        # nothing else changes what the command does but a workflow_dispatch narrowing
        assert set(steps[step_id].get("env") or {}) <= {"PYTEST_ADDOPTS"}, step_id
    wf = yaml.safe_load((REPO / ".github/workflows/fresh-install.yml").read_text(encoding="utf-8"))
    job = wf["jobs"]["fresh-install"]
    assert job["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
    assert wf["env"]["PIP_NO_CACHE_DIR"] == "1" and "PYTHONPATH" not in (job.get("env") or {})
    assert not any(s.get("continue-on-error") for s in job["steps"])  # a failure fails the job
    on = wf.get("on") or wf[True]
    assert "schedule" in on and set(on["workflow_dispatch"]["inputs"]) == {
        "conformance-args",
        "tests-args",
    }
    assert wf["jobs"]["issue"]["permissions"] == {"contents": "read", "issues": "write"}


def test_a_readme_without_the_block_is_refused(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n## Set-up\n\nnothing here\n", encoding="utf-8")
    with pytest.raises(CIError, match="no ```sh block under '## Set-up'"):
        fi.readme_commands(readme)
    readme.write_text("## Set-up\n\n```sh\npip install .\n```\n", encoding="utf-8")
    with pytest.raises(CIError, match="two lines 'INSTALL && RUN'"):
        fi.readme_commands(readme)


def report(failed: bool = True, os_name: str = "ubuntu-latest") -> dict:
    return fi.build_report(
        {
            "install-1": "success",
            "run-1": "success",
            "install-2": "success",
            "run-2": "failure" if failed else "success",
        },  # fmt: skip
        {
            "tomlkit": "0.15.3",
            "numpy": "2.4.6",
            "pytest": "9.1.0",
            "brand-new": "1.0",
            "iree-conformance": "0.1.0",
        },  # fmt: skip
        {"tomlkit": "0.13.2", "numpy": "2.4.6", "pytest": "9.2.0"},
        os_name=os_name,
        python="3.12.1",
    )


def test_the_report_names_the_releases_newer_than_the_lock():
    r = report()
    assert r["failed"] == ["run-2"]
    assert r["newer"] == [{"name": "tomlkit", "installed": "0.15.3", "locked": "0.13.2"}]
    assert r["older"] == [{"name": "pytest", "installed": "9.1.0", "locked": "9.2.0"}]
    assert r["not_in_lock"] == [{"name": "brand-new", "installed": "1.0"}]
    text = fi.render_report(r)
    assert "ubuntu-latest, Python 3.12.1: FAILED" in text
    assert "| run-2 | `pytest tests -n 2` | **failure** |" in text
    assert (
        "**Newer than the lock** (ci/lock/requirements.txt, what the pull requests install): 1 -- the suspects"
        in text
    )
    assert "| `tomlkit` | **0.15.3** | 0.13.2 |" in text
    assert "All 5 releases installed" in text


def test_untrusted_names_are_escaped():
    r = fi.build_report({}, {"x|<script>": "1"}, {}, os_name="<b>os</b>", python="3")
    text = fi.render_report(r)
    assert "<script>" not in text and "<b>" not in text


def test_the_report_command_writes_json_and_the_summary(tmp_path, monkeypatch):
    lock_file = tmp_path / "requirements.txt"
    lock_file.write_text(
        "tomlkit==0.13.2 \\\n    --hash=sha256:" + "0" * 64 + "\n    # via -r requirements.in\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(fi, "installed_versions", lambda: {"tomlkit": "0.15.3"})
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    parser = argparse.ArgumentParser()
    fi.add_arguments(parser)
    args = parser.parse_args(
        ["report", "--lock", str(lock_file), "--os", "ubuntu-latest", "--summary",
         "--json", str(tmp_path / "out/report.json"),
         "--outcome", "install-1=success", "--outcome", "run-1=failure", "--outcome", "install-2="]
    )  # fmt: skip
    assert fi.run(args) == 0
    data = json.loads((tmp_path / "out/report.json").read_text(encoding="utf-8"))
    assert data["failed"] == ["run-1"]
    assert [s["outcome"] for s in data["steps"]] == ["success", "failure", "skipped", "skipped"]
    assert data["newer"] == [{"name": "tomlkit", "installed": "0.15.3", "locked": "0.13.2"}]
    assert "| `tomlkit` | **0.15.3** | 0.13.2 |" in summary.read_text(encoding="utf-8")
    with pytest.raises(CIError, match=r"--outcome 'run-3=failure': expected STEP=OUTCOME"):
        fi.parse_outcomes(["run-3=failure"])


# -- the issue ---------------------------------------------------------------------------------


@pytest.fixture()
def api(monkeypatch):
    fake = FakeGitHub(owner_repo=OWNER_REPO, pulls={1: "open"})
    fake.start()
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    yield fake
    fake.stop()


def write_reports(folder, *reports):
    folder.mkdir(parents=True, exist_ok=True)
    for r in reports:
        sub = folder / f"fresh-install-{r['os']}"
        sub.mkdir(exist_ok=True)
        (sub / f"report-{r['os']}.json").write_text(json.dumps(r), encoding="utf-8")
    return folder


def issue(api, folder) -> int:
    parser = argparse.ArgumentParser()
    fi.add_arguments(parser)
    args = parser.parse_args(
        ["issue", "--reports", str(folder), "--repo", OWNER_REPO, "--api-url", api.url,
         "--run-url", RUN_URL]
    )  # fmt: skip
    return fi.run(args)


def test_a_failure_opens_one_issue_then_updates_it_then_a_pass_closes_it(api, tmp_path, capsys):
    failing = write_reports(tmp_path / "n1", report(True), report(False, "windows-latest"))
    assert issue(api, failing) == 0
    assert len(api.issues) == 1
    opened = api.issues[0]
    assert opened["title"] == fi.ISSUE_TITLE and opened["state"] == "open"
    assert opened["number"] == 2  # after pull request 1: issues and pull requests share numbers
    assert "| ubuntu-latest | 3\\.12\\.1 |" not in opened["body"]  # md_text leaves dots alone
    assert (
        "| ubuntu-latest | 3.12.1 | run-2: `pytest tests -n 2` | `tomlkit` 0.15.3 (lock 0.13.2) |"
        in opened["body"]
    )
    assert "Passed on: windows-latest." in opened["body"] and RUN_URL in opened["body"]
    assert "issue #2: opened" in capsys.readouterr().out

    # the next night, still failing: the same issue, its body replaced, a comment added
    again = write_reports(tmp_path / "n2", report(True, "macos-latest"))
    assert issue(api, again) == 0
    assert len(api.issues) == 1
    assert "| macos-latest |" in api.issues[0]["body"]
    assert [c["body"] for c in api.comments[2]] == [f"Still failing: {RUN_URL}"]
    assert "issue #2: updated" in capsys.readouterr().out

    # all pass: a comment, and the issue closed
    passing = write_reports(tmp_path / "n3", report(False), report(False, "macos-latest"))
    assert issue(api, passing) == 0
    assert api.issues[0]["state"] == "closed"
    assert api.comments[2][-1]["body"] == f"The README's commands pass again: {RUN_URL}"
    # and the next failure opens a new one (the closed one is history)
    assert issue(api, failing) == 0
    assert [(i["number"], i["state"]) for i in api.issues] == [(2, "closed"), (3, "open")]


def test_a_pass_with_no_issue_writes_nothing(api, tmp_path, capsys):
    assert issue(api, write_reports(tmp_path / "r", report(False))) == 0
    assert api.issues == [] and "nothing to do" in capsys.readouterr().out
    assert not [r for r in api.requests if r["method"] != "GET"]


def test_someone_elses_issue_with_the_title_is_left_alone(api, tmp_path):
    api.issues.append(
        {
            "number": 9,
            "title": fi.ISSUE_TITLE,
            "body": "mine",
            "state": "open",
            "user": {"login": "a-person"},
        }  # fmt: skip
    )
    assert issue(api, write_reports(tmp_path / "r", report(True))) == 0
    assert [(i["number"], i["body"] == "mine") for i in api.issues] == [(9, True), (10, False)]


def test_a_repository_that_refuses_issues_gets_a_warning_not_a_failure(api, tmp_path, capsys):
    api.script("GET", f"/repos/{OWNER_REPO}/issues", 410, {"message": "Issues are disabled"})
    assert issue(api, write_reports(tmp_path / "r", report(True))) == 0
    captured = capsys.readouterr()  # ::warning:: on stdout under Actions, else on stderr
    assert "no issue opened or updated: the repository refused" in captured.out + captured.err
    assert api.issues == []


def test_a_malformed_report_is_refused(api, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "report-x.json").write_text(json.dumps({"steps": [{"id": 1}]}), encoding="utf-8")
    with pytest.raises(CIError, match=r"report-x.json: steps\[0\].id: expected a string"):
        issue(api, folder)
    with pytest.raises(CIError, match="no fresh-install reports"):
        issue(api, tmp_path / "none")
