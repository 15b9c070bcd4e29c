"""Reproducer folders without IREE: the spec's command lines, the verification's rules on
fake tool outputs (a fake iree-compile and iree-run-module), the folder's record, the
case-id and folder checks, known issues by signature."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.common.errors import ConfigurationError, ManifestError
from iree_conformance.expectations.known_issues import KnownIssue, KnownIssues, load_known_issues
from iree_conformance.repro import spec as spec_mod
from iree_conformance.repro import writer
from iree_conformance.repro.lookup import folder_for
from iree_conformance.repro.source import public_functions
from iree_conformance.repro.spec import ReproSpec

VERSIONS = {
    "iree-base-compiler": {"version": "0"},
    "iree-base-runtime": {"version": "0"},
    "python": "3",
}


def _spec(**kw) -> ReproSpec:
    base = dict(
        case_id="stablehlo/x",
        target="llvm-cpu",
        kind="fail-compile",
        stage="compile",
        first_line="source.mlir:5:10: error: 'linalg.generic' op inferred shape 4, but found 3",
        compile_flags=("--iree-hal-target-device=local", "--iree-input-type=stablehlo"),
        device="local-task",
        function="main",
        mlir=b"func.func @main() { return }\n",
    )
    base.update(kw)
    return ReproSpec(**base)


def _fake_tools(tmp: Path, compile_script: str, run_script: str) -> Path:
    """A folder with fake iree-compile and iree-run-module (Python scripts)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, body in (("iree-compile", compile_script), ("iree-run-module", run_script)):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\nimport sys, os\n{body}\n", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return bin_dir


COMPILE_OK = "out = sys.argv[sys.argv.index('-o') + 1]\nopen(out, 'wb').write(b'vmfb')"


def test_run_flags_carry_module_device_function_inputs_expected_and_thresholds():
    s = _spec(
        kind="fail-numerics",
        stage="compare",
        inputs=[np.zeros((2,), np.float32)],
        expected=[np.ones((2,), np.float32), np.array([1, 2], np.int32)],
        tolerances=[(1e-5, 1e-6), None],
    )
    text = spec_mod.run_flags_text(s).splitlines()
    assert text[:3] == ["--module=module.vmfb", "--device=local-task", "--function=main"]
    assert "--input=@input_0.npy" in text
    assert "--expected_output=@expected_0.npy" in text
    assert "--expected_output=2xi32=1 2" in text  # a .npy of int32 reads as si32 in IREE
    unsigned = np.array([[168, 115], [255, 1]], np.uint8)  # the module returns it as i8
    assert spec_mod.expected_value(unsigned, 0) == "2x2xi8=-88 115 -1 1"
    assert spec_mod.expected_value(np.array([7], np.uint32), 0) == "1xi32=7"
    assert "--expected_f32_threshold=1e-06" in text and "--expected_rtol=1e-05" in text


def test_float8_and_bf16_outputs_are_written_inline_as_iree_parses_them():
    """A .npy cannot type float8 (ml_dtypes' types read as opaque), so iree-run-module
    aborted reading expected_K.npy of a float8 output: they go inline, as bf16 does."""
    import ml_dtypes

    values = [1.5, float("nan"), 57344.0]
    for dtype, name in (
        (ml_dtypes.float8_e5m2fnuz, "f8E5M2FNUZ"),
        (ml_dtypes.float8_e5m2, "f8E5M2"),
        (ml_dtypes.float8_e4m3fn, "f8E4M3FN"),
        (ml_dtypes.float8_e4m3fnuz, "f8E4M3FNUZ"),
        (ml_dtypes.bfloat16, "bf16"),
    ):
        array = np.array(values, dtype=dtype).reshape(1, 3)
        text = spec_mod.expected_value(array, 0)
        head, _, body = text.partition("=")
        assert head == f"1x3x{name}", text
        assert body.split() == [repr(float(v)) for v in array.reshape(-1)]
    scalar = spec_mod.expected_value(np.array(2.0, dtype=ml_dtypes.float8_e4m3fn), 0)
    assert scalar == "f8E4M3FN=2.0"
    big = np.zeros(spec_mod.INLINE_INT_LIMIT + 1, dtype=ml_dtypes.float8_e5m2)
    assert spec_mod.expected_value(big, 3) == "@expected_3.npy"


def test_compile_flags_and_sources_dump_flags():
    s = _spec(sources_dir="dump")
    lines = spec_mod.compile_flags_text(s).splitlines()
    assert lines[:2] == list(s.compile_flags)
    assert "--iree-hal-dump-executable-sources-to=dump/sources" in lines
    assert "--dump-compilation-phases-to=dump/phases" in lines
    assert "--iree-hal-dump-executable-benchmarks-to=dump/benchmarks" in lines


def test_scripts_are_the_two_commands():
    sh = spec_mod.repro_sh(_spec()).splitlines()
    assert sh[-2:] == [
        "iree-compile @compile.flags input.mlir -o module.vmfb || exit $?",
        "iree-run-module --flagfile=run.flags",
    ]
    cmd = spec_mod.repro_cmd(
        _spec(import_line=["iree-import-onnx", "model.onnx", "-o", "input.mlir"])
    )
    assert "iree-import-onnx model.onnx -o input.mlir || exit /b 1" in cmd and cmd.endswith("\r\n")


def test_public_functions_skip_private_ones():
    text = 'func.func private @helper() {}\nfunc.func @main(%a: tensor<f32>) {}\n  func.func public @"odd.name"() {}\n'
    assert public_functions(text) == ["main", "odd.name"]


@pytest.mark.skipif(os.name == "nt", reason="the fake tools are #! scripts")
def test_compile_failure_with_the_same_first_line_is_reproduced(tmp_path):
    tools = _fake_tools(
        tmp_path,
        "print('input.mlir:5:10: error: \\'linalg.generic\\' op inferred shape 4, but found 3', file=sys.stderr); sys.exit(1)",
        "sys.exit(0)",
    )
    record = writer.write(_spec(), tmp_path / "out", VERSIONS, tools_path=str(tools))
    assert record["reproduced"] is True, record["verification"]
    assert record["verification"]["stage"] == "compile"
    names = {f["name"] for f in record["files"]}
    assert {
        "input.mlir",
        "compile.flags",
        "run.flags",
        "repro.sh",
        "repro.cmd",
        "ISSUE.md",
    } <= names
    on_disk = json.loads((tmp_path / "out" / "repro.json").read_text())
    assert on_disk["files"] == record["files"] and all(
        len(f["sha256"]) == 64 for f in record["files"]
    )
    assert not (tmp_path / "out" / "module.vmfb").exists()  # verified in a scratch copy


@pytest.mark.skipif(os.name == "nt", reason="the fake tools are #! scripts")
def test_another_first_line_is_not_reproduced_and_says_why(tmp_path):
    tools = _fake_tools(
        tmp_path, "print('error: something else', file=sys.stderr); sys.exit(1)", ""
    )
    record = writer.write(_spec(), tmp_path / "out", VERSIONS, tools_path=str(tools))
    assert record["reproduced"] is False
    assert "another first line" in record["verification"]["why"]
    assert "Not verified" in (tmp_path / "out" / "ISSUE.md").read_text()


@pytest.mark.skipif(os.name == "nt", reason="the fake tools are #! scripts")
def test_numerics_needs_ireess_own_mismatch_report_and_exit_1(tmp_path):
    s = _spec(
        kind="fail-numerics",
        stage="compare",
        expected=[np.ones(2, np.float32)],
        tolerances=[(1e-5, 1e-6)],
    )
    mismatch = "print('[FAILED] result[0]: element at index 0 (1) does not match the expected (2)'); sys.exit(1)"
    tools = _fake_tools(tmp_path, COMPILE_OK, mismatch)
    assert writer.write(s, tmp_path / "a", VERSIONS, tools_path=str(tools))["reproduced"] is True
    metadata_only = "print('[FAILED] result[0]: metadata is 2xi32; expected that the view matches 2xsi32'); sys.exit(1)"
    (tmp_path / "t2").mkdir()
    tools2 = _fake_tools(tmp_path / "t2", COMPILE_OK, metadata_only)
    record = writer.write(s, tmp_path / "b", VERSIONS, tools_path=str(tools2))
    assert record["reproduced"] is False  # a type's metadata is no value mismatch


@pytest.mark.skipif(os.name == "nt", reason="the fake tools are #! scripts")
def test_a_float8_mismatch_that_aborts_the_tool_says_why(tmp_path):
    """iree-run-module aborts with OUT_OF_RANGE reporting a float8 mismatch: not IREE's
    mismatch report, so not reproduced, and the folder says why and how to see the values."""
    import ml_dtypes

    s = _spec(
        kind="fail-numerics",
        stage="compare",
        expected=[np.array([1.5, 57344.0], dtype=ml_dtypes.float8_e5m2fnuz)],
        tolerances=[None],
        notes=[spec_mod.FLOAT8_MISMATCH_NOTE],
    )
    aborts = "sys.stderr.write('OUT_OF_RANGE\\n'); sys.stderr.flush(); os.kill(os.getpid(), 6)"
    tools = _fake_tools(tmp_path, COMPILE_OK, aborts)
    record = writer.write(s, tmp_path / "out", VERSIONS, tools_path=str(tools))
    assert record["reproduced"] is False
    assert "float8" in record["verification"]["why"]
    assert "OUT_OF_RANGE" in record["verification"]["why"]
    assert spec_mod.has_float8(s.expected) and not spec_mod.has_float8([np.zeros(2)])
    run_flags = (tmp_path / "out" / "run.flags").read_text()
    assert "--expected_output=2xf8E5M2FNUZ=1.5 57344.0" in run_flags


@pytest.mark.skipif(os.name == "nt", reason="the fake tools are #! scripts")
def test_a_crash_needs_a_signal_at_the_same_stage(tmp_path):
    tools = _fake_tools(tmp_path, "os.kill(os.getpid(), 6)", "")
    s = _spec(kind="crash", first_line="the worker process died during compile (SIGABRT)")
    assert writer.write(s, tmp_path / "out", VERSIONS, tools_path=str(tools))["reproduced"] is True


def test_tools_missing_from_path_is_said_and_the_folder_kept(tmp_path):
    record = writer.write(_spec(), tmp_path / "out", VERSIONS, tools_path=str(tmp_path / "nothing"))
    assert record["reproduced"] is None and record["verification"]["tools_missing"]
    assert (
        "iree-compile" in record["verification"]["why"]
        and "not on PATH" in record["verification"]["why"]
    )
    assert (tmp_path / "out" / "input.mlir").is_file()


def test_an_existing_folder_is_refused_without_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(writer.FolderExists, match="--force"):
        writer.write(_spec(), out, VERSIONS, verify_it=False)
    assert (out / "keep.txt").read_text() == "mine"
    (out / "repro.json").write_text("{}")  # a reproducer folder: --force replaces it
    writer.write(_spec(), out, VERSIONS, verify_it=False, force=True)
    assert not (out / "keep.txt").exists() and json.loads((out / "repro.json").read_text())


@pytest.mark.parametrize(
    "case_id", ["../escape", "onnx-ops/../../x", "/abs", "a//b", "a/./b", "c:\\x", "a\x00b"]
)
def test_case_ids_that_would_escape_the_folder_are_refused(tmp_path, case_id):
    with pytest.raises(ConfigurationError, match="cannot name a folder|outside"):
        folder_for(tmp_path, "llvm-cpu", case_id)


def test_a_case_id_becomes_folders_under_its_target(tmp_path):
    assert (
        folder_for(tmp_path, "llvm-cpu", "onnx-ops/test_abs")
        == tmp_path / "llvm-cpu" / "onnx-ops" / "test_abs"
    )


def test_issue_md_fences_untrusted_lines_and_names_the_known_issue(tmp_path):
    s = _spec(diagnostics=["```", "<script>x</script>"], context={"issue": "iree-org/iree#12410"})
    writer.write(s, tmp_path / "out", VERSIONS, verify_it=False)
    text = (tmp_path / "out" / "ISSUE.md").read_text()
    assert "````\n```\n<script>x</script>\n````" in text
    assert "Matches iree-org/iree#12410" in text
    for field in (
        "### What happened?",
        "### Steps to reproduce your issue",
        "### What component(s)",
        "### Version information",
        "### Additional context",
    ):
        assert field in text


def test_known_issues_match_by_stage_and_normalized_first_line(tmp_path):
    path = tmp_path / "known_issues.toml"
    path.write_text(
        '[[known]]\nissue = "iree-org/iree#7"\nstage = "compile"\nline = "error: failed to legalize operation \'x.y\'"\n'
    )
    known = load_known_issues(path)
    assert (
        known.match(
            "compile", "a.mlir:3:4: error: failed to legalize operation 'x.y' that was marked"
        ).issue
        == "iree-org/iree#7"
    )
    assert known.match("run", "error: failed to legalize operation 'x.y'") is None
    assert known.match("compile", "error: something else") is None


@pytest.mark.parametrize(
    "body, message",
    [
        ('[[known]]\nissue = "iree#7"\nstage = "compile"\nline = "x"\n', "owner/repo#N"),
        ('[[known]]\nissue = "iree-org/iree#7"\nstage = "compile"\n', "line must be"),
        (
            '[[known]]\nissue = "iree-org/iree#7"\nstage = "compile"\nline = "x"\nurl = "y"\n',
            "unknown keys",
        ),
        ("[other]\n", "unknown table"),
    ],
)
def test_a_malformed_known_issues_file_names_file_and_entry(tmp_path, body, message):
    path = tmp_path / "known_issues.toml"
    path.write_text(body)
    with pytest.raises(ManifestError, match=message):
        load_known_issues(path)


def test_the_shipped_known_issues_file_loads():
    path = Path(__file__).resolve().parents[3] / "conformance" / "known_issues.toml"
    entries = load_known_issues(path).entries
    assert entries and all(e.issue.startswith("iree-org/iree#") for e in entries)


def test_report_failure_groups_show_the_known_issue():
    from iree_conformance.report.markdown import markdown_of

    outcome = {
        "case_id": "stablehlo/x",
        "suite": "stablehlo",
        "target": "llvm-cpu",
        "status": "error",
        "stage": "compile",
        "verdict": "fail",
        "diagnostics": ["a.mlir:1:2: error: boom 3"],
        "os": "linux",
        "arch": "x86_64",
        "python": "3.11",
    }
    known = KnownIssues((KnownIssue("iree-org/iree#99", "compile", "error: boom N"),))
    from iree_conformance.report.merging import merge_documents
    from iree_conformance.report.model import build

    model = build(
        merge_documents([("r", {"schema": 1, "metadata": {}, "outcomes": [outcome]})]), known=known
    )
    assert model.failure_groups[0].issue == "iree-org/iree#99"
    assert "matches iree-org/iree#99" in markdown_of(model)


def test_a_manifest_entry_names_its_issue(tmp_path):
    from iree_conformance.expectations.lookup import ExpectationsError, load_expectations

    (tmp_path / "llvm-cpu.toml").write_text(
        '[xfail]\n"a/b" = { expect = "fail-compile", reason = "r", issue = "iree-org/iree#5" }\n'
    )
    assert load_expectations(tmp_path, "llvm-cpu", "linux").xfail["a/b"].issue == "iree-org/iree#5"
    (tmp_path / "llvm-cpu.toml").write_text(
        '[xfail]\n"a/b" = { expect = "fail-compile", reason = "r", issue = "#5" }\n'
    )
    with pytest.raises(ExpectationsError, match="owner/repo#N"):
        load_expectations(tmp_path, "llvm-cpu", "linux")


def test_a_large_model_says_why_its_weights_are_inline():
    from iree_conformance.repro.source import large_weights_note

    note = large_weights_note(300 * 2**20)
    assert (
        "300 MiB" in note
        and "--externalize-params" in note
        and "--parameters=model=params.irpa" in note
    )


def test_run_flags_name_the_parameter_file_of_a_large_model():
    s = _spec(kind="fail-run", stage="run", parameters="model=params.irpa")
    text = spec_mod.run_flags_text(s).splitlines()
    assert text[0] == "--parameters=model=params.irpa"
    assert "--module=module.vmfb" in text
    assert not any(
        line.startswith("--parameters") for line in spec_mod.run_flags_text(_spec()).splitlines()
    )


def test_a_variant_case_id_gets_a_folder_too(tmp_path):
    # pytest --repro-dir writes a folder for every red case id, ":dynamic" included.
    assert (
        folder_for(tmp_path, "llvm-cpu", "onnx-dir/sub/x.onnx:dynamic")
        == tmp_path / "llvm-cpu" / "onnx-dir" / "sub" / "x.onnx@dynamic"
    )


def test_issue_context_names_the_bisection_as_found_for_any_frontend():
    from iree_conformance.repro.issue_text import context_lines

    found = "first diverging op #0 stablehlo.sort at line 3 (result 1): 4/12 elements differ"
    spec = _spec(kind="fail-numerics", stage="compare", context={"diverging_node": found})
    assert f"Numerics bisection (`--bisect-numerics`): {found}" in context_lines(spec, None)
