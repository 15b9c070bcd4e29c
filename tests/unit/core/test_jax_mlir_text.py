"""The check function's text: signless types for IREE's ops, exact constants (no JAX needed)."""

import ml_dtypes
import numpy as np
import pytest

from iree_conformance.frontends.jax_export.mlir_text import (
    CheckTolerance,
    UnsupportedValue,
    check_function,
    dense,
    self_checking_module,
    tensor_type,
)
from iree_conformance.frontends.stablehlo.checks import instrument_checks, parse_module

TOL = CheckTolerance(rtol=1e-4, atol=1e-5)
MAIN = """module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<3xui32>, %arg1: tensor<2xf32>) -> (tensor<3xui32>, tensor<2xcomplex<f32>>, tensor<2xi1>, tensor<bf16>) {
    %0 = stablehlo.convert %arg1 : (tensor<2xf32>) -> tensor<2xcomplex<f32>>
    %cst = stablehlo.constant dense<0.0> : tensor<2xf32>
    %1 = stablehlo.compare GT, %arg1, %cst, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %2 = stablehlo.constant dense<1.5> : tensor<bf16>
    return %arg0, %0, %1, %2 : tensor<3xui32>, tensor<2xcomplex<f32>>, tensor<2xi1>, tensor<bf16>
  }
}
"""


def test_types_and_constants():
    assert tensor_type(np.zeros((2, 3), np.float32)) == "tensor<2x3xf32>"
    assert tensor_type(np.zeros((), np.uint8)) == "tensor<ui8>"
    assert tensor_type(np.zeros(2, ml_dtypes.bfloat16)) == "tensor<2xbf16>"
    assert dense(np.array([1.0, 2.0], np.float32)) == 'dense<"0x0000803F00000040">'
    assert dense(np.array([[True], [False]])) == "dense<[[true], [false]]>"
    assert dense(np.zeros((0, 2), np.float32)) == "dense<>"
    with pytest.raises(UnsupportedValue, match="element type object"):
        tensor_type(np.array(["x"], object))


def test_a_self_checking_module_parses_and_every_result_is_checked():
    inputs = [np.array([1, 2, 4_000_000_000], np.uint32), np.array([0.5, -1.0], np.float32)]
    outputs = [
        inputs[0],
        inputs[1].astype(np.complex64),
        inputs[1] > 0,
        np.array(1.5, ml_dtypes.bfloat16),
    ]
    text = self_checking_module(MAIN, check_function(inputs, outputs, TOL), ["a header"])
    assert text.startswith("// a header\nmodule @jit_f")
    # Unsigned values never meet util.unfoldable_constant or a check op unconverted.
    assert "stablehlo.constant dense<" in text and "tensor<3xui32>\n" in text
    assert "stablehlo.bitcast_convert %result#0 : (tensor<3xui32>) -> tensor<3xi32>" in text
    parse_module(text)  # IREE's verifier accepts the signless types and the ops
    _, meta = instrument_checks(text)
    assert meta["tests"] == ["check_xla"]
    kinds = [(s["kind"], s["op"]) for s in meta["sites"]]
    # ui32 exact, complex as real and imaginary parts, bool exact, bf16 with the tolerance
    assert kinds == [
        ("exact", "check.expect_eq_const"),
        ("close", "check.expect_almost_eq_const"),
        ("close", "check.expect_almost_eq_const"),
        ("exact", "check.expect_eq_const"),
        ("close", "check.expect_almost_eq_const"),
    ]
    assert meta["sites"][1]["rtol"] == pytest.approx(1e-4) and meta["sites"][1][
        "atol"
    ] == pytest.approx(1e-5)


def test_nothing_to_check_and_text_that_is_not_a_module_are_refused():
    with pytest.raises(UnsupportedValue, match="returns nothing"):
        check_function([], [], TOL)
    with pytest.raises(UnsupportedValue, match="not one `module"):
        self_checking_module("func.func @main() { return }", "", [])
