"""Which targets the installed compiler can compile for (the macOS wheel lacks cuda, rocm).

The macOS wheel's backend list is given by value; no test here claims a macOS run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iree_conformance.common.platform_info import host_os
from iree_conformance.model.targets import (
    compiler_backends,
    load_targets,
    required_backend,
    uncompilable_reason,
)

TARGETS = load_targets(Path(__file__).resolve().parents[3] / "conformance" / "targets.toml")
# A compiler built without cuda and rocm, as the macOS wheel is (the list is illustrative).
MACOS_WHEEL = ("llvm-cpu", "metal-spirv", "vmvx", "vmvx-inline", "vulkan-spirv")


@pytest.mark.parametrize(
    "name, backend",
    [
        ("llvm-cpu", None),
        ("vmvx", None),
        ("cuda", "cuda"),
        ("rocm", "rocm"),
        ("vulkan", "vulkan-spirv"),
        ("metal", "metal-spirv"),
    ],
)
def test_each_target_names_its_backend(name, backend):
    assert required_backend(TARGETS[name]) == backend


def test_cuda_and_rocm_are_skipped_with_a_reason_where_the_wheel_lacks_them():
    for name in ("cuda", "rocm"):
        reason = uncompilable_reason(TARGETS[name], MACOS_WHEEL)
        assert reason is not None and f"target {name}" in reason and "lacks" in reason
    for name in ("llvm-cpu", "vmvx", "vulkan", "metal"):
        assert uncompilable_reason(TARGETS[name], MACOS_WHEEL) is None


@pytest.mark.skipif(host_os() != "linux", reason="checks the Linux compiler wheel's backend list")
def test_the_linux_wheel_compiles_every_target():
    assert {"cuda", "rocm", "llvm-cpu", "vulkan-spirv", "metal-spirv"} <= set(compiler_backends())
    assert all(uncompilable_reason(t) is None for t in TARGETS.values())
