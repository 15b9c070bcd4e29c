"""A failure whose signature is a known issue says so in the PR comment's new failures,
the HTML report's failure groups and check-model (real results files from tests/fixtures)."""

from __future__ import annotations

import io

from ci import diff_results, merge_results, pr_comment
from iree_conformance.common.diagnostics import normalize
from iree_conformance.expectations.known_issues import KnownIssue, KnownIssues
from iree_conformance.model.outcome import Outcome
from iree_conformance.report.html import inputs, render
from iree_conformance.report.model import first_line
from tests.support.ci_helpers import LINUX, RESULTS, derive, load

BEFORE = RESULTS / "linux-py3.11-before-manifest.json"  # the same run, its failures red


def _known_for_a_failure() -> tuple[KnownIssues, dict]:
    failing = next(
        o for o in load(BEFORE)["outcomes"] if o["verdict"] == "fail" and o["stage"] == "compile"
    )
    entry = KnownIssue("iree-org/iree#4242", "compile", normalize(first_line(failing)))
    return KnownIssues((entry,)), failing


def test_a_new_failure_of_a_known_signature_says_matches_in_the_pr_comment(tmp_path):
    line = "source.mlir:3:4: error: failed to legalize operation 'x.y' that was explicitly marked illegal"
    current = derive(
        tmp_path,
        "current.json",
        edits={
            "llvm-cpu:stablehlo/abs_negate_f16": {
                "status": "error",
                "stage": "compile",
                "verdict": "fail",
                "diagnostics": [line],
            },
            "llvm-cpu:stablehlo/add_f32": {
                "status": "error",
                "stage": "compile",
                "verdict": "fail",
                "diagnostics": ["error: other"],
            },
        },
    )
    known = KnownIssues((KnownIssue("iree-org/iree#4242", "compile", normalize(line)),))
    diff = diff_results.compare(merge_results.merge([current]), merge_results.merge([LINUX]), known)
    issues = {e["case_id"]: e.get("issue") for e in diff["new_failures"]}
    assert issues == {"stablehlo/abs_negate_f16": "iree-org/iree#4242", "stablehlo/add_f32": None}
    body = pr_comment.render(pr_comment.validate_diff(diff), None, None)
    assert "matches [iree-org/iree#4242](https://github.com/iree-org/iree/issues/4242)" in body
    assert body.count("matches [") == 1
    diff["new_failures"][1]["issue"] = "[x](javascript:alert(1))"  # not owner/repo#N: dropped
    assert "javascript" not in pr_comment.render(pr_comment.validate_diff(diff), None, None)


def test_the_html_failure_groups_link_the_known_issue(tmp_path, monkeypatch):
    known, _ = _known_for_a_failure()
    path = tmp_path / "known_issues.toml"
    path.write_text(
        f'[[known]]\nissue = "{known.entries[0].issue}"\nstage = "compile"\nline = """{known.entries[0].line}"""\n',
        encoding="utf-8",
    )
    (tmp_path / "conformance").mkdir()
    path.rename(tmp_path / "conformance" / "known_issues.toml")
    monkeypatch.chdir(tmp_path)  # the default file: ./conformance/known_issues.toml
    html = render.render_html(inputs.load([BEFORE]), render.Options(generate_ops=False)).html
    assert (
        'matches <a href="https://github.com/iree-org/iree/issues/4242">iree-org/iree#4242</a>'
        in html
    )


def test_check_model_prints_the_known_issue(tmp_path):
    from iree_conformance.cli.check_model import _known_issue_line

    (tmp_path / "known_issues.toml").write_text(
        '[[known]]\nissue = "iree-org/iree#7"\nstage = "compile"\nline = "error: boom"\n',
        encoding="utf-8",
    )
    out = io.StringIO()
    outcome = Outcome(
        "onnx-dir/m",
        "onnx_dir",
        "llvm-cpu",
        stage="compile",
        status="error",
        diagnostics=["m.mlir:1:1: error: boom 3"],
    )
    _known_issue_line(outcome, tmp_path, out)
    assert "matches iree-org/iree#7" in out.getvalue()
    out = io.StringIO()
    _known_issue_line(Outcome("onnx-dir/m", "onnx_dir", "llvm-cpu", status="pass"), tmp_path, out)
    assert out.getvalue() == ""
