"""Results read back to the host on drivers where IREE's Python ``to_host`` cannot.

``DeviceArray.to_host()`` (iree-base-runtime 3.13, ``array_interop._copy_to_host``)
imports a fresh numpy allocation as the copy's target whenever the allocator says host
allocations are importable; Vulkan's allocator says so, then refuses a pointer that is
not aligned to ``minImportedHostPointerAlignment`` (4096 on lavapipe), and the result
buffer itself has no MAPPING usage (docs/examples/vulkan-readback/ reproduces it).
``iree-run-module`` reads the same results fine.

On those drivers (``STAGED_DRIVERS``) a function is called at the VM level, with the
runtime's public API: each input copied into a device buffer view, each result copied
into a staging buffer (HOST_LOCAL | DEVICE_VISIBLE, TRANSFER | MAPPING), a semaphore
waited on, the staging buffer mapped and copied into numpy. Every other driver keeps
IREE's own ``FunctionInvoker`` and ``to_host``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Drivers whose results are read through a staging copy: Vulkan (checked on Mesa's
# lavapipe; a vendor driver's import alignment is its own, the staging copy needs none).
STAGED_DRIVERS = frozenset({"vulkan"})


def needs_staging(driver: str) -> bool:
    """Whether results on ``driver`` are read through a staging copy."""
    return driver in STAGED_DRIVERS


def staged_to_host(device, buffer_view) -> np.ndarray:
    """The contents of ``buffer_view`` (a ``HalBufferView`` on ``device``) as a numpy
    array of its element type and shape, read through a mappable staging buffer."""
    import iree.runtime as rt

    source = buffer_view.get_buffer()
    dtype = rt.HalElementType.map_to_dtype(buffer_view.element_type)
    shape = list(buffer_view.shape)
    if source.byte_length() == 0:
        return np.zeros(shape, dtype=dtype)
    staging = device.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER | rt.BufferUsage.MAPPING),
        allocation_size=source.byte_length(),
    )
    semaphore = device.create_semaphore(0)
    device.queue_copy(
        source,
        staging,
        wait_semaphores=rt.HalFence.create_at(semaphore, 0),
        signal_semaphores=rt.HalFence.create_at(semaphore, 1),
    )
    rt.HalFence.create_at(semaphore, 1).wait()
    mapped = staging.map()
    # A copy: the mapping ends with ``mapped``.
    return np.array(mapped.asarray(shape, dtype))


def _value_to_host(device, results, index: int) -> list[np.ndarray]:
    import iree.runtime as rt

    variant = results.get_variant(index)
    if isinstance(variant, (int, float)):
        return [np.asarray(variant)]
    view = results.get_as_object(index, rt.HalBufferView) if _is_view(variant) else None
    if view is not None:
        return [staged_to_host(device, view)]
    nested = results.get_as_list(index)
    return [a for i in range(nested.size) for a in _value_to_host(device, nested, i)]


def _is_view(variant: Any) -> bool:
    import iree.runtime as rt

    return isinstance(variant, rt.VmRef) and variant.isinstance(rt.HalBufferView)


def call_staged(context, function, device, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Call ``function`` (a ``VmFunction``) of ``context`` (a ``SystemContext``) on
    ``inputs``; its results, flattened (a list result gives its items), read back
    through staging copies."""
    import iree.runtime as rt
    from iree.runtime.array_interop import map_dtype_to_element_type

    arguments = rt.VmVariantList(len(inputs))
    for value in inputs:
        array = np.asarray(value, order="C")  # ascontiguousarray makes a 0-d input 1-d
        element_type = map_dtype_to_element_type(array.dtype)
        if element_type is None:
            raise ValueError(f"cannot pass an input of dtype {array.dtype} to IREE")
        arguments.push_ref(
            device.allocator.allocate_buffer_copy(
                memory_type=int(rt.MemoryType.DEVICE_LOCAL),
                allowed_usage=int(rt.BufferUsage.DEFAULT),
                device=device,
                buffer=array,
                element_type=element_type,
            )
        )
    results = rt.VmVariantList(4)
    context.vm_context.invoke(function, arguments, results)
    return [a for i in range(results.size) for a in _value_to_host(device, results, i)]
