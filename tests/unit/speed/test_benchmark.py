"""--benchmark: which cases are timed, the figures in the outcome, check-model's table."""

from __future__ import annotations

from pathlib import Path

import onnxruntime
import pytest

from iree_conformance.common import timing
from iree_conformance.engine import benchmark
from iree_conformance.model.cases import Case
from iree_conformance.model.jobs import CaseResult
from iree_conformance.model.outcome import Outcome

# A model shipped in the onnxruntime wheel (a dependency), not written here.
SIGMOID = Path(onnxruntime.__file__).parent / "datasets" / "sigmoid.onnx"


def _case(suite, case_id="c", reference="shipped"):
    return Case(case_id=case_id, suite=suite, kind="onnx", reference_name=reference)


@pytest.mark.parametrize(
    "suite, case_id, timing_runs, flag, runs",
    [
        ("onnx_models", "m", 0, None, benchmark.DEFAULT_MIN_RUNS),  # models: on by default
        ("onnx_dir", "m", 0, None, benchmark.DEFAULT_MIN_RUNS),
        ("jax", "jax/models/flax_cnn", 0, None, benchmark.DEFAULT_MIN_RUNS),
        ("jax", "jax/ops/sort", 0, None, 0),  # operator tests: off unless asked
        ("torch", "torch/models/bert", 0, None, benchmark.DEFAULT_MIN_RUNS),
        ("torch", "torch/elementwise/add_f32", 0, None, 0),
        ("onnx_ops", "op", 0, None, 0),
        ("onnx_ops", "op", 0, True, benchmark.DEFAULT_MIN_RUNS),
        ("onnx_models", "m", 0, False, 0),  # --no-benchmark
        ("onnx_ops", "op", 7, None, 7),  # --timing-runs N wins
    ],
)
def test_which_cases_are_timed(suite, case_id, timing_runs, flag, runs):
    assert benchmark.timing_runs_for(_case(suite, case_id), timing_runs, flag) == runs


def test_a_failing_case_gets_no_timing_and_says_why():
    outcome = Outcome("c", "onnx_models", "llvm-cpu", status="fail", stage="compare")
    benchmark.note_untimed(outcome, 20)
    assert "benchmark" not in outcome.metrics
    assert outcome.info["benchmark"] == "not timed: the case did not pass (fail at compare)"
    untimed = Outcome("c", "onnx_ops", "llvm-cpu", status="fail", stage="compare")
    benchmark.note_untimed(untimed, 0)  # not asked: nothing to say
    assert "benchmark" not in untimed.info


def test_figures_without_a_reference_say_so():
    case = _case("jax", "jax/models/x", reference="xla")
    outcome = Outcome("c", "jax", "llvm-cpu", status="pass")
    outcome.stage_times = {"load": 0.01}
    result = CaseResult(timing={"iree_samples_s": [1e-3, 2e-3, 3e-3], "cost_s": 0.1})
    benchmark.attach(case, outcome, result, 20)
    bench = outcome.metrics["benchmark"]
    assert bench["iree"]["summary"]["median_s"] == 2e-3
    assert "reference" not in bench and "IREE's figures alone" in bench["reference_missing"]
    outcome.duration = 1.1
    benchmark.note_untimed(outcome, 20)
    assert bench["cost_ratio"] == pytest.approx(1.1)


def test_figures_say_whether_the_case_was_timed_alone():
    case = _case("jax", "jax/models/x", reference="xla")
    outcome = Outcome("c", "jax", "llvm-cpu", status="pass")
    quiet = {"alone": False, "wait_s": 120.0}
    result = CaseResult(timing={"iree_samples_s": [1e-3, 2e-3], "cost_s": 0.1, "quiet": quiet})
    benchmark.attach(case, outcome, result, 20)
    assert outcome.metrics["benchmark"]["quiet"] == quiet


def test_peak_memory_is_reset_and_read():
    if not timing.reset_peak_rss():
        pytest.skip("no /proc/self/clear_refs on this system")
    before = timing.peak_rss_bytes()
    block = bytearray(64 << 20)
    block[::4096] = b"x" * len(block[::4096])
    after = timing.peak_rss_bytes()
    assert before is not None and after is not None and after >= before + (60 << 20)
