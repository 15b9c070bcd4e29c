"""lit RUN/FileCheck files, files that are no test, and folders without tests."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import run_case
from iree_conformance.frontends.stablehlo.iree_output import format_results
from iree_conformance.frontends.stablehlo.lit_runs import InputError, parse_input, parse_run_lines
from iree_conformance.model.targets import load_targets
from iree_conformance.suites.stablehlo import external_cases
from tests.support.core_helpers import TARGETS_TOML

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "core" / "stablehlo_files"


@pytest.fixture(scope="module")
def targets():
    return load_targets(TARGETS_TOML)


@pytest.fixture(scope="module")
def lit_outcomes(worker, targets):
    return {
        c.case_id: run_case(Attempt(c, targets["llvm-cpu"]), worker)[0]
        for c in external_cases(FILES / "lit")
    }


def test_run_lines_are_parsed():
    (first, second) = parse_run_lines((FILES / "lit" / "model_pass.mlir").read_text())
    assert (first.line, first.backend, first.input_type, first.problem) == (
        1,
        "llvm-cpu",
        "stablehlo",
        None,
    )
    assert first.inputs == ["1x5xf32=[0,1,0,3,4]", "2x3xi32=1,2,3,4,5,6"]
    assert (second.line, second.backend, second.function, second.filecheck_args) == (
        2,
        "llvm-cpu",
        "main",
        ["--check-prefix=ZEROS"],
    )


def test_inputs_in_iree_syntax():
    np.testing.assert_array_equal(
        parse_input("2x2xf32=1,2,3,4"), np.array([[1, 2], [3, 4]], np.float32)
    )
    np.testing.assert_array_equal(
        parse_input("2x2xi32=[1 2][3 4]"), np.array([[1, 2], [3, 4]], np.int32)
    )
    np.testing.assert_array_equal(parse_input("3xi8"), np.zeros(3, np.int8))
    assert parse_input("f32=1.5").shape == () and parse_input("2xf32=7").tolist() == [7.0, 7.0]
    with pytest.raises(InputError, match="3 values for shape"):
        parse_input("2x2xf32=1,2,3")
    with pytest.raises(InputError, match="element type 'q7'"):
        parse_input("2xq7=1,2")


def test_output_matches_iree_run_module(tmp_path):
    """Our printer against the real tool on the same compiled module."""
    source = (FILES / "lit" / "model_pass.mlir").read_text()
    vmfb = tmp_path / "m.vmfb"
    flags = [
        "--iree-input-type=stablehlo",
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
    ]
    (tmp_path / "m.mlir").write_text(source)
    subprocess.run(
        ["iree-compile", *flags, str(tmp_path / "m.mlir"), "-o", str(vmfb)],
        check=True,
        capture_output=True,
    )
    inputs = ["--input=1x5xf32=[0,1.5,-2,3e10,4]", "--input=2x3xi32=1,2,3,4,5,-6"]
    tool = subprocess.run(
        ["iree-run-module", f"--module={vmfb}", "--device=local-task", *inputs],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    import iree.runtime as rt

    config = rt.Config("local-task")
    module = rt.VmModule.copy_buffer(config.vm_instance, vmfb.read_bytes())
    context = rt.SystemContext(vm_modules=[module], config=config)
    values = [parse_input(i.split("=", 1)[1]) for i in inputs]
    outputs = [np.asarray(r.to_host()) for r in context.modules.module["main"](*values)]
    outputs.append(np.array([True, False]))  # i1 prints as two hex digits: checked by hand
    ours = format_results("main", outputs)
    assert ours.startswith(tool), (ours, tool)
    assert ours.endswith("2xi1=01 00\n")


def test_lit_files_pass_and_fail_with_the_filecheck_diagnostic(lit_outcomes):
    for case_id in ("stablehlo-ext/model_pass:run1", "stablehlo-ext/model_pass:run2"):
        assert lit_outcomes[case_id].status == "pass", (case_id, lit_outcomes[case_id].diagnostics)
    wrong = lit_outcomes["stablehlo-ext/model_fail:run2"]
    assert (wrong.status, wrong.stage) == ("fail", "compare")
    text = "\n".join(wrong.diagnostics)
    assert "RUN line 2: FileCheck found no match" in text
    assert "2x3xi32=[2 4 6][8 10 13]" in text  # the expected line
    assert "2x3xi32=[2 4 6][8 10 12]" in text  # the actual output


def test_run_lines_for_other_backends_or_tools_are_reported(lit_outcomes, targets, worker):
    reasons = {
        k: o.reason for k, o in lit_outcomes.items() if k.startswith("stablehlo-ext/other_backends")
    }
    assert set(reasons) == {f"stablehlo-ext/other_backends:run{n}" for n in (3, 4, 5, 6)}
    assert all(
        lit_outcomes[k].status == "skip" and "other_backends.mlir: RUN line" in reasons[k]
        for k in reasons
    )
    assert (
        "compiles for vulkan; target llvm-cpu compiles for llvm-cpu"
        in reasons["stablehlo-ext/other_backends:run3"]
    )
    assert "compiles for frobnicator" in reasons["stablehlo-ext/other_backends:run4"]
    assert "comes from a file" in reasons["stablehlo-ext/other_backends:run5"]
    assert "runs 'iree-opt'" in reasons["stablehlo-ext/other_backends:run6"]
    vulkan_case = next(
        c for c in external_cases(FILES / "lit") if c.case_id.endswith("other_backends:run3")
    )
    assert vulkan_case.skip_reason_for(targets["vulkan"]) is None


def test_non_test_files_and_folders_without_tests(tmp_path, worker, targets):
    shutil.copytree(FILES / "mixed", tmp_path / "mixed")
    (tmp_path / "empty").mkdir()
    (tmp_path / "only_notes").mkdir()
    shutil.copy(FILES / "mixed" / "notes.mlir", tmp_path / "only_notes" / "notes.mlir")
    cases = {c.case_id: c for c in external_cases(tmp_path)}
    assert cases["stablehlo-ext/mixed/notes"].skip_reason.endswith(
        "notes.mlir: not a test: no check op (check.expect_* or stablehlo.custom_call @check.expect_*) and no RUN line"
    )
    outcomes = {k: run_case(Attempt(c, targets["llvm-cpu"]), worker)[0] for k, c in cases.items()}
    assert outcomes["stablehlo-ext/mixed/good:pass_mixed"].status == "pass"
    for folder, holds in (("empty", "it is empty"), ("only_notes", "it holds notes.mlir")):
        outcome = outcomes[f"stablehlo-ext/{folder}:folder"]
        assert (
            outcome.status == "error"
            and f"{tmp_path / folder} holds no test ({holds})" in outcome.diagnostics[0]
        )
    assert "stablehlo-ext/mixed:folder" not in outcomes and "stablehlo-ext/.:folder" not in outcomes


def test_lit_cases_are_left_out_of_bundles_with_a_note(tmp_path, targets, capsys):
    from iree_conformance.bundles.bundle import BundleWriter

    case = next(c for c in external_cases(FILES / "lit") if c.case_id.endswith("model_pass:run1"))
    writer = BundleWriter(tmp_path)
    writer.add(case, targets["llvm-cpu"], {"vmfb": b"x"}, None)
    assert not list((tmp_path / "cases").iterdir()) and not list((tmp_path / "modules").iterdir())
    assert "model_pass:run1 not bundled: FileCheck runs in the suite" in capsys.readouterr().err


def test_a_check_file_that_does_not_parse_fails_at_import_naming_it(tmp_path, worker, targets):
    (tmp_path / "bad.mlir").write_text(
        "func.func @f() {\n  check.expect_true(%nope) : i32\n  return\n}\n"
    )
    (case,) = external_cases(tmp_path)
    outcome = run_case(Attempt(case, targets["llvm-cpu"]), worker)[0]
    assert (case.case_id, outcome.status, outcome.stage) == ("stablehlo-ext/bad", "error", "import")
    assert "bad.mlir:2:" in outcome.diagnostics[0], outcome.diagnostics
