"""The StableHLO reference interpreter runs in a child process."""

import numpy as np
import pytest

pytest.importorskip(
    "jaxlib", reason="the stablehlo-ref extra (jax, jaxlib) provides the interpreter"
)

from iree_conformance.frontends.stablehlo.interpreter import InterpreterError, run_interpreter  # noqa: E402
from tests.support.core_helpers import ADD_MLIR  # noqa: E402


def test_interpreter_computes_add():
    a = np.array([1, 2, 3, 4], np.float32)
    (out,) = run_interpreter(ADD_MLIR, [a, a])
    np.testing.assert_array_equal(out, a + a)


def test_unsupported_op_is_an_error_not_a_dead_parent():
    text = ADD_MLIR.replace(
        "stablehlo.add %a, %b : tensor<4xf32>",
        "stablehlo.custom_call @foo(%a) : (tensor<4xf32>) -> tensor<4xf32>",
    )
    with pytest.raises(InterpreterError) as e:
        run_interpreter(text, [np.zeros(4, np.float32), np.zeros(4, np.float32)])
    assert "custom_call" in str(e.value)
