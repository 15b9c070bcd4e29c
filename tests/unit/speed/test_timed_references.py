"""The reference timed beside IREE by each frontend (--benchmark): XLA on a JAX case's own
function and on a bundled StableHLO case's own file in the worker, and figures with raw
samples from run-bundle."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.engine import benchmark
from iree_conformance.frontends.registry import FRONTENDS, timing_reference
from iree_conformance.model.compare import compare_outputs
from iree_conformance.model.jobs import Program
from iree_conformance.model.outcome import Outcome
from iree_conformance.suites.stablehlo import bundled_cases
from tests.support.jax_cases import CASES

ROOT = Path(__file__).resolve().parents[3]


def test_the_jax_frontend_times_xla_on_the_case_and_iree_on_main(tmp_path):
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    (tmp_path / "mine.py").write_text(CASES, encoding="utf-8")
    program = Program("jax/ext/mine/scaled_tanh", "mlir", frontend="jax_export")
    ref, missing = timing_reference(program, f"{tmp_path / 'mine.py'}::scaled_tanh", [])
    assert missing is None and ref is not None
    assert ref.name == "xla" and ref.entry == "main" and "version" in ref.info
    assert [a.dtype for a in ref.inputs] == [np.float32, np.float32]  # 0.5 is f32 in JAX
    out = np.asarray(ref.call())
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_allclose(out, np.tanh(x) * 0.5, rtol=1e-6)


def test_a_reference_that_cannot_run_costs_only_its_figures(tmp_path):
    program = Program("jax/ext/x/y", "mlir", frontend="jax_export")
    ref, missing = timing_reference(program, f"{tmp_path / 'gone.py'}::y", [])
    assert ref is None and "the reference could not run" in missing and "gone.py" in missing
    ref, missing = timing_reference(Program("a", "mlir"), str(tmp_path / "gone.mlir"), [])
    assert ref is None and missing.startswith("the reference could not run: ")
    assert timing_reference(Program("a", "onnx"), None, []) == (None, None)
    assert all(callable(f.timing_reference) for f in FRONTENDS.values())


def test_a_failed_timing_leaves_the_verdict_and_says_why():
    outcome = Outcome("c", "jax", "llvm-cpu", status="pass")
    benchmark.attach_timing(outcome, {"failed": "ValueError: no function main"}, "x")
    assert outcome.status == "pass" and "benchmark" not in outcome.metrics
    assert outcome.info["benchmark"] == "not timed: the timing failed: ValueError: no function main"
    benchmark.note_untimed(outcome, 20)  # the reason stays
    assert outcome.info["benchmark"].endswith("no function main")


def _bundled(name: str, reference: str = "shipped"):
    cases = {c.case_id: c for c in bundled_cases(ROOT / "conformance" / "stablehlo", reference)}
    return cases[f"stablehlo/{name}"]


@pytest.mark.parametrize(
    "name",
    # 64-bit inputs (JAX would put them as 32 bits), two f16 results, a loop, a convolution.
    [
        "add_f32",
        "add_i64",
        "abs_negate_f16",
        "while_factorial_i64",
        "convolution_nhwc_stride2_pad1",
    ],
)
def test_the_stablehlo_frontend_times_xla_on_the_case_file(name):
    """XLA computes the case's own function: its outputs pass the case's own check."""
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    case = _bundled(name)
    assert case.timed_reference() == str(
        ROOT / "conformance" / "stablehlo" / "cases" / f"{name}.mlir"
    )
    inputs = case.input_sets()[0]
    ref, missing = timing_reference(case.program(), case.timed_reference(), list(inputs))
    assert missing is None and ref is not None
    assert ref.name == "xla" and ref.info["version"] and ref.info["settings"]["device"]
    assert ref.entry is None and ref.inputs is None  # IREE keeps the case's @main and inputs
    outputs = [np.asarray(o) for o in ref.call()]
    comparison = compare_outputs(outputs, case.expected_sets([inputs])[0], case.tolerance)
    assert comparison.ok, comparison.messages


def test_interpreter_cases_time_xla_too():
    assert _bundled("add_f32", "interpreter").timed_reference().endswith("add_f32.mlir")


def test_a_dynamic_program_says_in_one_line_why_xla_is_missing():
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    case = _bundled("dynamic_matmul")
    ref, missing = timing_reference(case.program(), case.timed_reference(), case.input_sets()[0])
    assert ref is None and "\n" not in missing
    assert missing.startswith("the reference could not run: ValueError: XLA could not compile ")
    assert "dynamic_matmul.mlir: line 8: " in missing and "dynamic `?` dimensions" in missing


def test_an_op_xla_lacks_and_wrong_inputs_give_one_line_reasons(tmp_path):
    pytest.importorskip("jax", reason="XLA's timing needs JAX: pip install -e '.[jax]'")
    from iree_conformance.frontends.jax_export.xla_timing import stablehlo_reference

    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"^XLA could not compile bad.mlir: line 2: .*frobnicate"):
        stablehlo_reference(str(bad), [np.zeros(2, np.float32)])
    add = ROOT / "conformance" / "stablehlo" / "cases" / "add_f32.mlir"
    with pytest.raises(ValueError, match=r"^XLA could not run add_f32.mlir on the case's inputs: "):
        stablehlo_reference(str(add), [np.zeros(2, np.float32)])


def test_without_jax_the_stablehlo_reference_says_how_to_install_it(monkeypatch):
    for module in ("jax", "jax.extend", "jax.extend.backend"):
        monkeypatch.setitem(sys.modules, module, None)  # `import jax` raises ImportError
    case = _bundled("add_f32")
    ref, missing = timing_reference(case.program(), case.timed_reference(), case.input_sets()[0])
    assert ref is None and missing.startswith("the reference could not run: ImportError: XLA ")
    assert "pip install -e '.[jax]'" in missing


def test_self_checking_stablehlo_files_time_no_reference(tmp_path):
    from iree_conformance.suites.stablehlo import external_cases

    (tmp_path / "t.mlir").write_text(
        "func.func @main() {\n"
        "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
        "  check.expect_almost_eq_const %0, dense<1.0> : tensor<f32>\n"
        "  return\n}\n",
        encoding="utf-8",
    )
    (case,) = external_cases(tmp_path)
    assert case.timed_reference() is None
    assert "its reference is 'checks'" in benchmark._missing_reason(case)
