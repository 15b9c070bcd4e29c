"""--bisect-numerics for StableHLO: the probe returns every op result of @main, and the
first op whose result differs from the interpreter's is named (frontends/stablehlo/divergence.py)."""

import numpy as np
import pytest

pytest.importorskip(
    "jaxlib", reason="the stablehlo-ref extra (jax, jaxlib) provides the interpreter"
)

from iree_conformance.frontends.stablehlo.divergence import bisect_stablehlo, probe_program  # noqa: E402
from iree_conformance.frontends.stablehlo.interpreter import run_interpreter  # noqa: E402

CHAIN = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %a : tensor<4xf32>
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  %2 = stablehlo.add %1, %a : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""
INPUTS = [np.array([1, -2, 3, -4], np.float32)]


def test_the_probe_returns_every_op_result_after_the_programs_own():
    probe, returned, probed = probe_program(CHAIN)
    assert returned == 1
    assert [(p.name, p.line) for p in probed] == [
        ("stablehlo.abs", 2),
        ("stablehlo.exponential", 3),
        ("stablehlo.add", 4),
    ]
    assert "return %2, %0, %1, %2" in probe
    assert len(run_interpreter(probe, INPUTS)) == 4


def perturbing(output: int):
    """IREE stand-in: the interpreter's values with probe output ``output`` and every one
    computed from it shifted, as a wrong op would."""

    def run(probe, inputs):
        values = run_interpreter(probe, inputs)
        for i in {output, 0, 3}:  # the exponential feeds the add, returned twice
            values[i] = values[i] + 1
        return values

    return run


def test_the_first_diverging_op_is_named_with_its_line_not_its_users():
    report = bisect_stablehlo(CHAIN, INPUTS, perturbing(2), rtol=1e-3, atol=1e-5)
    assert report.first is not None and "stablehlo.exponential" in report.first
    assert report.summary().startswith(
        "first diverging op #1 stablehlo.exponential at line 3 (result 0, tensor<4xf32>): "
        "4/4 elements differ, max abs error 1"
    )
    assert "2 op results compared against the StableHLO interpreter" in report.summary()


def test_agreeing_results_say_no_op_diverges_at_the_tolerance():
    report = bisect_stablehlo(CHAIN, INPUTS, run_interpreter, rtol=1e-3, atol=1e-5)
    assert report.first is None
    assert report.summary() == (
        "no op diverges at the case's tolerance (rtol 0.001, atol 1e-05): 3 op results of "
        "@main compared against the StableHLO interpreter"
    )


def test_a_program_without_the_entry_is_named():
    with pytest.raises(ValueError, match="no func.func @main"):
        probe_program(CHAIN.replace("@main", "@other"))
