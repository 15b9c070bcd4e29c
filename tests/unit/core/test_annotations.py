"""GitHub annotations of unexpected results: where they point, their escaping, the limit."""

from __future__ import annotations

import io
from pathlib import Path

from iree_conformance.engine.verdicts import judge
from iree_conformance.expectations.lookup import Expectations, ManifestEntry
from iree_conformance.model.outcome import Outcome
from iree_conformance.report.annotations import (
    Annotation,
    annotate_results,
    annotations_for,
    emit,
    escape_data,
    escape_property,
    limited,
)

MANIFEST = """# Known IREE failures for target llvm-cpu.

[xfail]
"onnx-ops/test_abs" = { stage = "fail-compile", reason = "error: x" }
"stablehlo/add_f32" = { stage = "fail-numerics", reason = "output 0 differs" }
"stablehlo/zzz" = { stage = "fail-run", reason = "crashes" }
"""


def workspace(tmp_path: Path) -> Path:
    manifests = tmp_path / "conformance" / "expectations"
    manifests.mkdir(parents=True)
    (manifests / "llvm-cpu.toml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "bad.mlir").write_text("func\n" * 20, encoding="utf-8")
    return tmp_path


def judged(outcome: Outcome, root: Path) -> dict:
    """The Outcome judged against the workspace's manifest, as the results JSON has it."""
    from iree_conformance.expectations.lookup import load_expectations

    expectations = load_expectations(root / "conformance" / "expectations", "llvm-cpu", "linux")
    judge(expectations, outcome).record(outcome)
    return outcome.to_json()


def test_escaping_follows_the_runners_rules():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    command = Annotation("error", "t: x, y", "line 1\nline 2", "dir/a,b.mlir", 7).command()
    assert command == "::error file=dir/a%2Cb.mlir,line=7,title=t%3A x%2C y::line 1%0Aline 2"


def test_a_strict_xpass_points_at_the_manifest_line_to_delete(tmp_path):
    root = workspace(tmp_path)
    o = judged(Outcome("stablehlo/add_f32", "stablehlo", "llvm-cpu", "compare", "pass"), root)
    assert o["verdict"] == "xpass"
    [a] = annotations_for([o], root)
    assert (a.level, a.file, a.line) == ("error", "conformance/expectations/llvm-cpu.toml", 5)
    assert "XPASS(strict)" in a.title and "delete this line" in a.message


def test_a_new_failure_points_at_its_source_with_the_line_to_add(tmp_path):
    root = workspace(tmp_path)
    outcome = Outcome(
        "stablehlo-ext/bad:f",
        "stablehlo",
        "llvm-cpu",
        "compare",
        "fail",
        diagnostics=["check 0 (check.expect_eq at bad.mlir:12:3 in @f): actual 1, expected 2"],
        info={"source": {"path": str(root / "tests" / "bad.mlir"), "line": 12}},
    )
    o = judged(outcome, root)
    assert o["verdict"] == "fail"
    [a] = annotations_for([o], root)
    assert (a.level, a.file, a.line) == ("error", "tests/bad.mlir", 12)
    assert "add to conformance/expectations/llvm-cpu.toml" in a.message
    assert '"stablehlo-ext/bad:f" = { expect = "fail-numerics", reason = "check 0' in a.message


def test_a_source_outside_the_workspace_points_where_the_line_goes(tmp_path):
    root = workspace(tmp_path)
    outcome = Outcome(
        "onnx-ops/test_add",
        "onnx_ops",
        "llvm-cpu",
        "compile",
        "error",
        diagnostics=["error: failed to legalize"],
        info={"source": {"path": "/elsewhere/test_add/model.onnx", "line": 1}},
    )
    [a] = annotations_for([judged(outcome, root)], root)
    # Sorted after "onnx-ops/test_abs" and before "stablehlo/add_f32" (line 5).
    assert (a.file, a.line) == ("conformance/expectations/llvm-cpu.toml", 5)
    assert "/elsewhere/test_add/model.onnx" in a.message


def test_a_listed_case_with_another_kind_points_at_its_line(tmp_path):
    root = workspace(tmp_path)
    outcome = Outcome(
        "stablehlo/zzz", "stablehlo", "llvm-cpu", "compile", "error", diagnostics=["error: y"]
    )
    [a] = annotations_for([judged(outcome, root)], root)
    assert (a.file, a.line) == ("conformance/expectations/llvm-cpu.toml", 6)
    assert "Change this line to" in a.message and 'expect = "fail-compile"' in a.message
    assert "stage =" not in a.message


def test_flaky_on_retry_is_a_warning_and_declared_flaky_is_silent(tmp_path):
    root = workspace(tmp_path)
    retried = Outcome("stablehlo/a", "stablehlo", "llvm-cpu", "compare", "pass")
    retried.verdict, retried.attempts = "flaky", [{"kind": "fail-numerics", "status": "fail"}]
    declared = Outcome("stablehlo/b", "stablehlo", "llvm-cpu", "compare", "pass")
    declared.verdict, declared.expected = "flaky", "pass|fail-numerics"
    found = annotations_for([retried.to_json(), declared.to_json()], root)
    assert [(a.level, a.title) for a in found] == [("warning", "Flaky llvm-cpu:stablehlo/a")]
    assert 'expect = ["fail-numerics", "pass"]' in found[0].message


def test_passes_xfails_and_skips_give_nothing(tmp_path):
    root = workspace(tmp_path)
    results = [
        judged(Outcome("stablehlo/ok", "stablehlo", "llvm-cpu", "compare", "pass"), root),
        judged(Outcome("onnx-ops/test_abs", "onnx_ops", "llvm-cpu", "compile", "error"), root),
        judged(Outcome("stablehlo/s", "stablehlo", "llvm-cpu", status="skip"), root),
    ]
    assert [r["verdict"] for r in results] == ["pass", "xfail", "skip"]
    assert annotations_for(results, root) == []


def test_linked_failures_come_first_and_the_rest_are_counted_once(tmp_path):
    root = workspace(tmp_path)
    outcomes = []
    for i in range(12):  # no source: they point at the manifest
        outcomes.append(
            judged(Outcome(f"onnx-ops/test_{i:02d}", "onnx_ops", "llvm-cpu", "run", "error"), root)
        )
    linked = Outcome(
        "stablehlo-ext/bad:f",
        "stablehlo",
        "llvm-cpu",
        "compare",
        "fail",
        info={"source": {"path": str(root / "tests" / "bad.mlir"), "line": 3}},
    )
    outcomes.append(judged(linked, root))
    shown = limited(annotations_for(outcomes, root))
    errors = [a for a in shown if a.level == "error"]
    assert len(errors) == 10 and errors[0].file == "tests/bad.mlir"
    assert shown[-1].level == "notice" and "3 more error(s)" in shown[-1].message


def test_emit_prints_workflow_commands_only_on_actions(tmp_path):
    root = workspace(tmp_path)
    o = judged(Outcome("stablehlo/add_f32", "stablehlo", "llvm-cpu", "compare", "pass"), root)
    out = io.StringIO()
    assert (
        annotate_results(
            {"metadata": {"os": "linux"}, "outcomes": [o]},
            root,
            out=out,
            env={"GITHUB_ACTIONS": "true"},
        )
        == 1
    )
    assert out.getvalue().startswith(
        "::error file=conformance/expectations/llvm-cpu.toml,line=5,title=XPASS(strict) "
    )
    plain = io.StringIO()
    emit(annotations_for([o], root), plain, env={})
    assert plain.getvalue().startswith("error: conformance/expectations/llvm-cpu.toml:5: XPASS")


def test_a_new_failure_on_macos_goes_to_the_overlay(tmp_path):
    root = workspace(tmp_path)
    o = Outcome("stablehlo/new", "stablehlo", "llvm-cpu", "run", "error").to_json()
    o["verdict"] = "fail"
    [a] = annotations_for([o], root, os_name="macos")
    assert "add to conformance/expectations/llvm-cpu.macos.toml" in a.message
    assert a.file is None  # the overlay does not exist yet: nothing to link


def test_the_bundle_manifest_entry_keeps_no_line():
    expectations = Expectations("llvm-cpu")
    expectations.xfail["c"] = ManifestEntry(("fail-run",), "r", Path("/b/manifest.json"), None)
    outcome = Outcome("c", "s", "llvm-cpu", "compare", "pass")
    judge(expectations, outcome).record(outcome)
    assert outcome.info["manifest"] == {"path": "/b/manifest.json", "line": None}
    [a] = annotations_for([outcome.to_json()], "/elsewhere")
    assert a.file is None and a.line is None
