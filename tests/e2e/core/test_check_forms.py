"""Every check form checks where it runs: pass_* functions pass, fail_* functions fail.

The files under tests/fixtures/core/stablehlo_files/checks cover each kind of IREE's
check dialect with its tolerance attributes, openxla's custom_call form,
util.unfoldable_constant, checks in CFG blocks, scf.for and stablehlo.while bodies and
called functions, and a commented-out function.
"""

from pathlib import Path

import pytest

from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import build_job, run_case
from iree_conformance.suites.stablehlo import external_cases

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "core" / "stablehlo_files"


@pytest.fixture(scope="module")
def check_cases():
    return {c.case_id: c for c in external_cases(FILES / "checks")}


@pytest.fixture(scope="module")
def outcomes(check_cases, worker, llvm_cpu):
    return {
        case_id: run_case(Attempt(case, llvm_cpu), worker)[0]
        for case_id, case in check_cases.items()
    }


def test_every_function_of_every_form_is_a_case(check_cases):
    functions = {case_id.split(":")[-1] for case_id in check_cases}
    assert "i8" not in functions  # commented out
    assert not [
        c for c in check_cases if ":run" in c
    ]  # a check test's own RUN line is no extra case
    for kind in (
        "true",
        "false",
        "all_true",
        "eq",
        "eq_const",
        "almost_eq",
        "almost_eq_const",
        "almost_eq_const_atol",
    ):
        assert {f"pass_{kind}", f"fail_{kind}"} <= functions
    for form in ("cfg", "scf_for", "stablehlo_while", "called"):
        assert {f"pass_{form}", f"fail_{form}"} <= functions
    assert {
        "pass_custom_call",
        "fail_custom_call_close",
        "fail_custom_call_eq",
        "fail_custom_call_almost_eq",
    } <= functions


def test_passing_functions_pass(outcomes):
    for case_id, outcome in outcomes.items():
        if case_id.split(":")[-1].startswith("pass_"):
            assert outcome.status == "pass", (case_id, outcome.stage, outcome.diagnostics)


def test_a_wrong_expected_value_fails_in_every_form(outcomes):
    for case_id, outcome in outcomes.items():
        if case_id.split(":")[-1].startswith("fail_"):
            assert (outcome.status, outcome.stage) == ("fail", "compare"), (
                case_id,
                outcome.stage,
                outcome.diagnostics,
            )


def test_a_failure_names_the_check_op_and_its_line(outcomes):
    diagnostics = outcomes["stablehlo-ext/control_flow:fail_called"].diagnostics
    # The check stands in @check_square; the first call passes, the second fails.
    lines = (FILES / "checks" / "control_flow.mlir").read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(lines) if "check.expect_almost_eq(%y, %e)" in text)
    assert diagnostics[0].startswith(
        f"check 1 (check.expect_almost_eq at control_flow.mlir:{line}:3 in @check_square): "
    ), diagnostics
    assert "actual 0.25, expected 0.3;" in diagnostics[0]  # plain numbers, not numpy reprs
    # The annotation's location: the file and line of the check op that failed.
    source = outcomes["stablehlo-ext/control_flow:fail_called"].info["source"]
    assert source == {"path": str(FILES / "checks" / "control_flow.mlir"), "line": line}


def test_loop_checks_run_on_every_iteration(check_cases, worker, llvm_cpu):
    result = worker.execute(
        build_job(Attempt(check_cases["stablehlo-ext/control_flow:pass_scf_for"], llvm_cpu), [[]])
    )
    (records,) = result.check_records
    assert [int(values[0]) for _, values in records] == [1, 2, 4, 8]
    result = worker.execute(
        build_job(
            Attempt(check_cases["stablehlo-ext/control_flow:pass_stablehlo_while"], llvm_cpu), [[]]
        )
    )
    assert len(result.check_records[0]) == 4  # three loop iterations and the check after the loop
