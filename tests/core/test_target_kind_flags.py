"""Per-kind compile flags of a target (targets.toml kind_flags)."""

import pytest

from iree_conformance.cases import Case
from iree_conformance.pipeline import build_job
from iree_conformance.suites.onnx_ops import OnnxNodeCase
from iree_conformance.targets import TargetError, load_targets

from .conftest import TARGETS_TOML


def test_stablehlo_gets_const_eval_off_and_onnx_keeps_the_default():
    llvm_cpu = load_targets(TARGETS_TOML)["llvm-cpu"]
    mlir = build_job(Case("a", "stablehlo", "mlir", source_bytes=b""), llvm_cpu, []).compile_flags
    onnx = build_job(
        OnnxNodeCase("b", "onnx_ops", "onnx", source_bytes=b""), llvm_cpu, []
    ).compile_flags
    model = build_job(
        Case("m", "onnx_models", "onnx", source_bytes=b""), llvm_cpu, []
    ).compile_flags
    assert (
        "--iree-input-demote-f64-to-f32=false" not in model
        and "--iree-opt-const-eval=false" not in model
    )
    assert "--iree-opt-const-eval=false" in mlir and "--iree-opt-const-eval=false" not in onnx
    assert (
        "--iree-input-demote-f64-to-f32=false" in onnx
        and "--iree-input-demote-f64-to-f32=false" not in mlir
    )
    assert mlir[: len(llvm_cpu.compile_flags)] == tuple(llvm_cpu.compile_flags)


def test_malformed_kind_flags_name_the_target(tmp_path):
    path = tmp_path / "targets.toml"
    path.write_text(
        '[targets.t]\ncompile_flags = []\ndriver = "local-task"\nkind_flags = { tflite = ["-x"] }\n'
    )
    with pytest.raises(TargetError, match=r"\[targets.t\]: kind_flags must map mlir or onnx"):
        load_targets(path)
