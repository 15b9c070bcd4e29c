"""Informative timings: the median of N calls after a warm-up. Never pass/fail."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def time_iree_call(executor, vm_module, context, entry, inputs, runs: int) -> dict[str, float]:
    """Median seconds of the call with device-resident inputs, and of the input upload."""
    import iree.runtime as rt

    device = context.config.device
    upload = (
        median_time(lambda: [rt.asdevicearray(device, x) for x in inputs], runs) if inputs else 0.0
    )
    resident = [rt.asdevicearray(device, x) for x in inputs]
    call = median_time(lambda: executor.run(vm_module, context, entry, resident), runs)
    return {"iree_median_s": call, "iree_upload_median_s": upload, "runs": runs}
