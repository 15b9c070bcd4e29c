"""benchmarks/suitespeed's baseline pipeline run for real: IREE's command-line tools compile
and run two bundled StableHLO cases, and a broken one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.suitespeed import baseline, sample

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tools():
    try:
        return baseline.iree_tools()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def test_baseline_pipeline_on_two_stablehlo_cases(tools, tmp_path):
    ids = ["stablehlo/add_f32", "stablehlo/compare_f32"]
    plans = baseline.plan_baseline(ids, tmp_path)
    assert [p.case_id for p in plans] == ids
    assert "--iree-input-type=stablehlo" in plans[0].compile_flags
    assert "--iree-hal-local-target-device-backends=llvm-cpu" in plans[0].compile_flags
    # The suite's exact flags: the target's, its kind's (const-eval off for StableHLO).
    assert "--iree-opt-const-eval=false" in plans[0].compile_flags
    assert plans[0].compile_flags == list(
        sample._target().case_flags(sample.load_cases(["stablehlo/add_f32"])[0])
    )
    results = [baseline.run_baseline_case(p, tools) for p in plans]
    for result in results:
        assert result["status"] == "pass", result["message"]
        assert {"compile", "run", "compare"} <= set(result["stage_times"])
    # The numbers that iree-run-module wrote are the corpus's expected values.
    corpus = ROOT / "conformance" / "stablehlo" / "cases"
    with np.load(corpus / "add_f32.npz") as data:
        actual = np.load(Path(plans[0].work_dir) / "actual_0_0.npy")
        np.testing.assert_allclose(actual, data["expected_0"], rtol=1e-6)
        np.testing.assert_allclose(actual, data["input_0"] + data["input_1"], rtol=1e-6)
    with np.load(corpus / "compare_f32.npz") as data:
        outputs = sorted(Path(plans[1].work_dir).glob("actual_0_*.npy"))
        assert len(outputs) == sum(1 for k in data.files if k.startswith("expected_"))
        for k, path in enumerate(sorted(outputs, key=lambda p: int(p.stem.rsplit("_", 1)[1]))):
            got = np.load(path)
            assert got.dtype == np.bool_
            np.testing.assert_array_equal(got, data[f"expected_{k}"])
    # A wrong expected value is a failure at compare, not a pass.
    expected = Path(plans[0].data_sets[0][1][0])
    np.save(expected, np.load(expected) + 1.0)
    assert baseline.numpy_compare(actual, np.load(expected), None, None).startswith("values differ")


def test_baseline_reports_a_compile_error(tools, tmp_path):
    plan = baseline.plan_baseline(["stablehlo/add_f32"], tmp_path)[0]
    broken = tmp_path / "broken.mlir"
    broken.write_text("func.func @main( {\n")
    plan.source = str(broken)
    result = baseline.run_baseline_case(plan, tools)
    assert (result["status"], result["stage"]) == ("error", "compile")
    assert "iree-compile exited" in result["message"]
