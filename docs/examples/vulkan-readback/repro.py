"""IREE's Python DeviceArray.to_host() fails on a Vulkan device whose
minImportedHostPointerAlignment exceeds numpy's allocation alignment (Mesa's lavapipe: 4096),
where iree-run-module reads the same result. Run: sh run.sh (see README.md)."""

import sys

import iree.runtime as rt
import numpy as np

config = rt.Config("vulkan")
module = rt.VmModule.mmap(config.vm_instance, sys.argv[1])
context = rt.SystemContext(vm_modules=[module], config=config)
result = context.modules.module["main"](
    np.array([0, 0.5, 1, 2], np.float32), np.zeros(4, np.float32)
)
print(result.to_host())  # ValueError: could not import host allocation ... 4096
