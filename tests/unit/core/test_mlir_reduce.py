"""The MLIR op reduction without a compile: the predicate is "this op is still there and
the module verifies" (the MLIR bindings' parse verifies), so each rule is seen alone."""

from __future__ import annotations

import pytest

pytest.importorskip("iree.compiler", reason="the MLIR op reduction uses IREE's MLIR bindings")

from iree.compiler import ir  # noqa: E402

from iree_conformance.frontends.mlir_reduce import (  # noqa: E402
    MlirReductionError,
    count_ops,
    reduce_mlir,
)

MODULE = """module {
  func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = call @helper(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
  func.func private @helper(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %c = stablehlo.constant dense<2.0> : tensor<2x3xf32>
    %0 = stablehlo.add %arg0, %c : tensor<2x3xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<2x3xf32>
    %2 = stablehlo.cosine %1 : tensor<2x3xf32>
    %3 = stablehlo.tanh %2 : tensor<2x3xf32>
    %4 = stablehlo.subtract %3, %c : tensor<2x3xf32>
    return %4 : tensor<2x3xf32>
  }
}
"""


def _verifies(text: str) -> bool:
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    try:
        ir.Module.parse(text, ctx)
    except ir.MLIRError:
        return False
    return True


def holds(op: str):
    asked: list[str] = []

    def fails(text: str) -> bool:
        asked.append(text)
        return op in text and _verifies(text)

    return fails, asked


def test_the_failing_op_alone_with_its_operands_as_arguments_and_its_result_returned():
    fails, _ = holds("stablehlo.cosine")
    found = reduce_mlir(MODULE, fails, first_line="source.mlir:10:10: error: boom")
    assert found.ops_before == 7 and found.ops_after == 1 and found.complete
    assert found.op_names == ["stablehlo.cosine"]
    # cut to @helper (what fails), made public; its operand an argument, its result returned
    assert "@main" not in found.text and "func.func @helper(%arg0: tensor<2x3xf32>)" in found.text
    assert "return %0 : tensor<2x3xf32>" in found.text and _verifies(found.text)
    assert "reduced 7 ops to 1 (stablehlo.cosine)" in found.summary()


def test_a_constant_an_op_reads_stays_a_constant():
    fails, _ = holds("stablehlo.subtract")
    found = reduce_mlir(MODULE, fails, first_line="source.mlir:12:10: error: boom")
    assert found.op_names == ["stablehlo.constant", "stablehlo.subtract"]
    assert count_ops(found.text) == 2


def test_without_a_location_every_function_is_reduced_and_unused_private_ones_dropped():
    fails, asked = holds("stablehlo.tanh")
    found = reduce_mlir(MODULE, fails, first_line="error: no location")
    # @helper's signature cannot change while @main calls it: the call stays
    assert found.op_names == ["func.call", "stablehlo.tanh"] and _verifies(found.text)
    assert len(asked) == found.tested and len(set(asked)) == len(asked)  # none asked twice


def test_a_program_that_does_not_fail_printed_again_is_refused():
    with pytest.raises(MlirReductionError, match="does not fail the same way"):
        reduce_mlir(MODULE, lambda text: False)


def test_text_that_does_not_parse_is_refused_with_the_parser_line():
    with pytest.raises(MlirReductionError, match="does not parse"):
        reduce_mlir("module { func.func @f( }", lambda text: True)


def test_the_budget_keeps_the_smallest_found():
    fails, _ = holds("stablehlo.cosine")
    found = reduce_mlir(MODULE, fails, budget_s=1e-9)
    assert not found.complete and "the budget of" in found.summary()


def test_private_globals_nothing_reads_any_more_are_dropped():
    text = """module {
  util.global private @w = dense<1.0> : tensor<4xf32>
  util.global private @w$1 = dense<2.0> : tensor<4xf32>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.global.load @w : tensor<4xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<4xf32>
    %2 = util.global.load @w$1 : tensor<4xf32>
    %3 = stablehlo.cosine %2 : tensor<4xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<4xf32>
    return %4 : tensor<4xf32>
  }
}
"""
    fails, _ = holds("stablehlo.cosine")
    found = reduce_mlir(text, fails)
    assert found.op_names == ["stablehlo.cosine"]
    assert "@w " not in found.text and "@w$1" not in found.text and _verifies(found.text)


def test_ops_inside_regions_are_reduced_too():
    text = """module {
  func.func @main(%arg0: tensor<i1>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.abs %arg1 : tensor<4xf32>
    %1 = "stablehlo.if"(%arg0) ({
      %2 = stablehlo.tanh %0 : tensor<4xf32>
      %3 = stablehlo.cosine %2 : tensor<4xf32>
      %4 = stablehlo.add %3, %0 : tensor<4xf32>
      stablehlo.return %4 : tensor<4xf32>
    }, {
      %5 = stablehlo.negate %0 : tensor<4xf32>
      stablehlo.return %5 : tensor<4xf32>
    }) : (tensor<i1>) -> tensor<4xf32>
    %6 = stablehlo.exponential %1 : tensor<4xf32>
    return %6 : tensor<4xf32>
  }
}
"""
    fails, _ = holds("stablehlo.cosine")
    found = reduce_mlir(text, fails)
    assert found.ops_before == 7
    assert found.op_names == ["stablehlo.if", "stablehlo.cosine"], found.text
    assert _verifies(found.text)
