"""Check ops really check: a wrong expected value fails."""

import numpy as np
import pytest

from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import run_case
from iree_conformance.frontends.stablehlo.checks import list_test_functions
from iree_conformance.suites.stablehlo import CorpusError, external_cases

CUSTOM_CALL = """module @jit_main {
  func.func public @main() -> (tensor<3xf32> {jax.result_info = ""}) {
    %0 = call @inputs() : () -> tensor<3xf32>
    %1 = stablehlo.constant dense<[2.0, 4.0, EXPECTED]> : tensor<3xf32>
    %2 = stablehlo.add %0, %0 : tensor<3xf32>
    stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    %3 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %4 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    stablehlo.custom_call @check.expect_eq(%3, %4) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
    return %2 : tensor<3xf32>
  }
  func.func private @inputs() -> tensor<3xf32> {
    %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    return %c : tensor<3xf32>
  }
}
"""

IREE_CHECKS = """func.func @good() {
  %a = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
  %b = stablehlo.add %a, %a : tensor<3xi32>
  check.expect_eq_const(%b, dense<[2, 4, 6]> : tensor<3xi32>) : tensor<3xi32>
  %f = arith.constant dense<[1.5]> : tensor<1xf32>
  check.expect_almost_eq_const(%f, dense<[1.5000001]> : tensor<1xf32>) : tensor<1xf32>
  return
}
func.func @bad() {
  %a = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
  check.expect_eq_const(%a, dense<[1, 2, 4]> : tensor<3xi32>) : tensor<3xi32>
  return
}
func.func private @helper() {
  return
}
"""


def run_all(root, worker, target):
    return {c.case_id: run_case(Attempt(c, target), worker)[0] for c in external_cases(root)}


def test_list_test_functions():
    assert list_test_functions(CUSTOM_CALL.replace("EXPECTED", "6.0")) == ["main"]
    assert list_test_functions(IREE_CHECKS) == ["good", "bad"]
    assert list_test_functions("func.func @main() { return }") == []


def test_custom_call_checks_pass_and_fail(tmp_path, worker, llvm_cpu):
    (tmp_path / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "wrong.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "7.0"))
    results = run_all(tmp_path, worker, llvm_cpu)
    assert results["stablehlo-ext/ok"].status == "pass", results["stablehlo-ext/ok"].diagnostics
    wrong = results["stablehlo-ext/sub/wrong"]
    assert wrong.status == "fail" and wrong.metrics["first_mismatch_index"] == [2]


def test_iree_check_dialect_functions_are_cases(tmp_path, worker, llvm_cpu):
    (tmp_path / "checks.mlir").write_text(IREE_CHECKS)
    results = run_all(tmp_path, worker, llvm_cpu)
    assert set(results) == {"stablehlo-ext/checks:good", "stablehlo-ext/checks:bad"}
    assert results["stablehlo-ext/checks:good"].status == "pass", results[
        "stablehlo-ext/checks:good"
    ].diagnostics
    assert results["stablehlo-ext/checks:bad"].status == "fail"


def test_corpus_without_tests_is_an_error_case(tmp_path):
    (tmp_path / "plain.mlir").write_text("func.func @main() { return }")
    cases = {c.case_id: c for c in external_cases(tmp_path)}
    assert cases["stablehlo-ext/plain"].skip_reason.endswith(
        "not a test: no check op (check.expect_* or stablehlo.custom_call @check.expect_*) and no RUN line"
    )
    assert "holds no test (it holds plain.mlir)" in cases["stablehlo-ext/.:folder"].problem
    with pytest.raises(CorpusError, match="not a directory"):
        external_cases(tmp_path / "missing")


def test_checks_are_recorded_as_they_run(tmp_path, worker, llvm_cpu):
    (tmp_path / "ok.mlir").write_text(CUSTOM_CALL.replace("EXPECTED", "6.0"))
    case = external_cases(tmp_path)[0]
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import build_job

    result = worker.execute(build_job(Attempt(case, llvm_cpu), [[]]))
    assert [s["kind"] for s in result.check_sites] == ["close", "exact"]
    (records,) = result.check_records
    assert [site for site, _ in records] == [0, 1]
    np.testing.assert_array_equal(records[0][1][0], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(records[1][1][0], records[1][1][1])
