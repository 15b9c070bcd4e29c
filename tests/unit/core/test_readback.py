"""Results read back through staging copies (model/readback.py): the VM-level call keeps
every input's shape and dtype, and on a Vulkan device (Mesa's lavapipe in CI) the results
come back where IREE's ``to_host`` fails (minImportedHostPointerAlignment)."""

from __future__ import annotations

import numpy as np
import pytest

from iree_conformance.model.readback import call_staged, needs_staging
from iree_conformance.model.targets import driver_devices

# A 0-d input, a bool input and an f16 input: each must reach the module as given (its
# hal.buffer_view.assert checks rank and element type).
PROGRAM = """
func.func @main(%s: tensor<f32>, %m: tensor<4xi1>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xi1>, tensor<f32>) {
  %e = tensor.empty() : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%s, %m, %h : tensor<f32>, tensor<4xi1>, tensor<4xf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %c: i1, %y: f16, %o: f32):
    %w = arith.extf %y : f16 to f32
    %p = arith.mulf %x, %w : f32
    %z = arith.constant 0.0 : f32
    %r = arith.select %c, %p, %z : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %b, %m, %s : tensor<4xf32>, tensor<4xi1>, tensor<f32>
}
"""
INPUTS = [
    np.array(2.0, np.float32),
    np.array([True, False, True, True]),
    np.array([1, 2, 3, -0.5], np.float16),
]
EXPECTED = [np.array([2, 0, 6, -1], np.float32), INPUTS[1], INPUTS[0]]

VULKAN_FLAGS = ["--iree-hal-target-device=vulkan", "--iree-vulkan-target=llvmpipe"]
CPU_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu"]


def _run(flags: list[str], driver: str) -> list[np.ndarray]:
    import iree.compiler as compiler
    import iree.runtime as rt

    vmfb = compiler.compile_str(PROGRAM, input_type="none", extra_args=flags)
    config = rt.Config(driver)
    module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
    context = rt.SystemContext(vm_modules=[module], config=config)
    return call_staged(context, module.lookup_function("main"), config.device, INPUTS)


def _check(results: list[np.ndarray]) -> None:
    assert len(results) == len(EXPECTED)
    for got, want in zip(results, EXPECTED):
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        np.testing.assert_array_equal(got, want)


def test_only_vulkan_is_staged():
    assert needs_staging("vulkan")
    assert not any(needs_staging(d) for d in ("local-task", "local-sync", "cuda", "hip"))


def test_call_staged_keeps_shapes_and_dtypes_on_cpu():
    _check(_run(CPU_FLAGS, "local-sync"))


@pytest.mark.skipif(
    not driver_devices("vulkan"),
    reason="no Vulkan device (apt-get install mesa-vulkan-drivers libvulkan1 gives lavapipe)",
)
def test_call_staged_reads_results_on_vulkan():
    _check(_run(VULKAN_FLAGS, "vulkan"))


def _runtime_run(flags: list[str], driver: str):
    import iree.compiler as compiler

    from iree_conformance.engine.worker.runtime import Runtime

    vmfb = compiler.compile_str(PROGRAM, input_type="none", extra_args=flags)
    runtime = Runtime(lambda: "")
    vm_module, context = runtime.load(vmfb, driver, None)
    return context, runtime.run(vm_module, context, None, INPUTS)


def test_the_worker_keeps_iree_s_invoker_on_cpu():
    context, results = _runtime_run(CPU_FLAGS, "local-task")
    assert context.staged_device is None
    _check(results)


@pytest.mark.skipif(
    not driver_devices("vulkan"),
    reason="no Vulkan device (apt-get install mesa-vulkan-drivers libvulkan1 gives lavapipe)",
)
def test_the_worker_reads_vulkan_results_through_staging():
    # Before model/readback.py: "cannot read results back to the host: ValueError: could
    # not import host allocation ... minImportedHostPointerAlignment 4096" on lavapipe.
    context, results = _runtime_run(VULKAN_FLAGS, "vulkan")
    assert context.staged_device is not None
    _check(results)
