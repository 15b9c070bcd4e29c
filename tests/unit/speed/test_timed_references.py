"""The reference timed beside IREE by each frontend (--benchmark): XLA on a JAX case's own
function in the worker, and figures with raw samples from run-bundle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iree_conformance.engine import benchmark
from iree_conformance.frontends.registry import FRONTENDS, timing_reference
from iree_conformance.model.jobs import Program
from iree_conformance.model.outcome import Outcome
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
    ref, missing = timing_reference(Program("a", "mlir"), "whatever", [])
    assert ref is None and missing == "the stablehlo frontend times no reference"
    assert timing_reference(Program("a", "onnx"), None, []) == (None, None)
    assert all(callable(f.timing_reference) for f in FRONTENDS.values())


def test_a_failed_timing_leaves_the_verdict_and_says_why():
    outcome = Outcome("c", "jax", "llvm-cpu", status="pass")
    benchmark.attach_timing(outcome, {"failed": "ValueError: no function main"}, "x")
    assert outcome.status == "pass" and "benchmark" not in outcome.metrics
    assert outcome.info["benchmark"] == "not timed: the timing failed: ValueError: no function main"
    benchmark.note_untimed(outcome, 20)  # the reason stays
    assert outcome.info["benchmark"].endswith("no function main")
