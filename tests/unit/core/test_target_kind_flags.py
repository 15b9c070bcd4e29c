"""Per-kind compile flags of a target (targets.toml kind_flags)."""

import pytest

from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.pipeline import build_job
from iree_conformance.model.cases import Case
from iree_conformance.model.targets import TargetError, load_targets
from iree_conformance.suites.onnx_ops import OnnxNodeCase
from tests.support.core_helpers import TARGETS_TOML


def test_stablehlo_gets_const_eval_off_and_onnx_keeps_the_default():
    llvm_cpu = load_targets(TARGETS_TOML)["llvm-cpu"]
    mlir = build_job(
        Attempt(Case("a", "stablehlo", "mlir", source_bytes=b""), llvm_cpu), []
    ).compile_flags
    onnx = build_job(
        Attempt(OnnxNodeCase("b", "onnx_ops", "onnx", source_bytes=b""), llvm_cpu), []
    ).compile_flags
    model = build_job(
        Attempt(Case("m", "onnx_models", "onnx", source_bytes=b""), llvm_cpu), []
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


def test_a_target_s_stage_limits_sit_between_the_defaults_and_the_command_line(tmp_path):
    from iree_conformance.engine.worker.parent import WorkerClient

    targets = load_targets(TARGETS_TOML)
    vmvx, llvm_cpu = targets["vmvx"], targets["llvm-cpu"]
    assert dict(vmvx.stage_timeouts)["run"] > 120 and llvm_cpu.stage_timeouts == ()
    case = Case("m", "onnx_models", "onnx", source_bytes=b"")
    on_vmvx, on_llvm = build_job(Attempt(case, vmvx), []), build_job(Attempt(case, llvm_cpu), [])
    client = WorkerClient(None)
    explicit = WorkerClient(None, {"run": 30.0})
    try:
        assert client.limit(on_vmvx, "run") == dict(vmvx.stage_timeouts)["run"]
        assert client.limit(on_llvm, "run") == 120.0 and client.limit(on_vmvx, "load") == 60.0
        assert explicit.limit(on_vmvx, "run") == 30.0  # --stage-timeout wins
    finally:
        client.close()
        explicit.close()


@pytest.mark.parametrize(
    "value", ["{ run = 0 }", "{ execute = 10 }", '{ run = "fast" }', "[600]", "{ run = inf }"]
)
def test_malformed_stage_timeouts_name_the_target(tmp_path, value):
    path = tmp_path / "targets.toml"
    path.write_text(
        f'[targets.t]\ncompile_flags = []\ndriver = "local-task"\nstage_timeouts = {value}\n'
    )
    with pytest.raises(TargetError, match=r"\[targets.t\]: stage_timeouts must map stages"):
        load_targets(path)


def test_lavapipe_targets_run_limit_is_above_a_light_model_s_measured_run():
    # light_inception_v1 ran 127 CPU s under iree-run-module --device=vulkan on lavapipe
    # (2026-12-07) and computed the right answer: the default 120 s made it a timeout.
    targets = load_targets(TARGETS_TOML)
    for name in ("vulkan", "vulkan-baseline"):
        assert dict(targets[name].stage_timeouts).get("run", 120.0) > 10 * 127, name
