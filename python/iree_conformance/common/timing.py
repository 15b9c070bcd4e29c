"""Informative timings of a passing case, taken in the worker. Never pass/fail.

``time_iree_call`` samples the case's function with device-resident inputs (calibrated:
common/stats.py), and, when the case's frontend gives a reference (onnxruntime on an ONNX
model, XLA on a JAX case: frontends/base.TimingReference), that reference interleaved with it, one sample of each per round, so that their ratio survives a noisy
machine. It also records the worker's peak memory over the calls (Linux: the VmHWM high-water
mark, reset first through /proc/self/clear_refs) and IREE's device allocation statistics
where the runtime exposes them. engine/benchmark.py turns the answer into the outcome's
``metrics["benchmark"]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from iree_conformance.common.stats import Sampling, sample_interleaved


def median_time(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def case_sampling(min_runs: int, budget_s: float) -> Sampling:
    """At least min_runs samples and 0.2 s; at most budget_s, warm-up included (never
    under 0.05 s): the figures of a model must cost at most half its untimed run
    (docs/speed.md, "Cost"); a call slower than that gets one sample."""
    max_time = max(0.05, budget_s)
    return Sampling(
        warmup_runs=1,
        warmup_s=0.0,
        min_runs=min_runs,
        min_time_s=min(0.2, max_time),
        max_time_s=max_time,
    )


_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def reset_peak_rss() -> bool:
    """Resets the kernel's high-water mark of this process (Linux 4.0+); False elsewhere."""
    try:
        _CLEAR_REFS.write_text("5", newline="\n")
        return True
    except OSError:
        return False


def peak_rss_bytes() -> int | None:
    """VmHWM of this process, or None where /proc is not there."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def device_allocation_stats(device: Any) -> dict[str, int] | None:
    """IREE's device allocator statistics (bytes: host/device peak, allocated, freed) since
    the worker opened the device, where the runtime exposes them; else None."""
    try:
        stats = dict(device.allocator.statistics)
    except Exception:  # noqa: BLE001 - not exposed by this runtime build
        return None
    return {str(k): int(v) for k, v in stats.items()} or None


def compile_figures(vmfb: bytes, cpu_start: float, peak_was_reset: bool) -> dict[str, Any]:
    """The compile's CPU seconds (every thread of the worker), the module's size and the
    worker's peak memory over the compile; kept with the module in the store."""
    return {
        "cpu_s": time.process_time() - cpu_start,
        "module_bytes": len(vmfb),
        "peak_rss_bytes": peak_rss_bytes() if peak_was_reset else None,
    }


def timing_budget_s(stage_times: dict[str, float]) -> float:
    """Half the case's untimed time in the worker (compile, load, the checked run): the
    most the figures may add, so that a timed case costs at most 1.5x an untimed one."""
    return 0.5 * sum(stage_times.values())


class Reference(Protocol):
    """A reference timed beside IREE (frontends/base.TimingReference)."""

    @property
    def name(self) -> str: ...
    @property
    def info(self) -> dict[str, Any]: ...
    @property
    def call(self) -> Callable[[], object]: ...


def time_iree_call(
    executor,
    vm_module,
    context,
    entry,
    inputs,
    runs: int,
    reference: Reference | None = None,
    reference_missing: str | None = None,
    budget_s: float = 10.0,
    begun: float | None = None,
    iree_warm: bool = True,
) -> dict[str, Any]:
    """IREE's call with device-resident inputs (and the reference's, interleaved): medians
    (the old keys), raw samples, peak memory. ``begun``: when the timing's cost started
    (the reference's set-up counts in it); ``iree_warm``: the checked run was this very
    call (no warm-up needed)."""
    import iree.runtime as rt

    start = time.perf_counter() if begun is None else begun
    device = context.config.device
    upload = (
        median_time(lambda: [rt.asdevicearray(device, x) for x in inputs], min(runs, 3))
        if inputs
        else 0.0
    )
    resident = [rt.asdevicearray(device, x) for x in inputs]
    calls: dict[str, Callable[[], object]] = {
        "iree": lambda: executor.run(vm_module, context, entry, resident)
    }
    figures: dict[str, Any] = {"runs": runs, "iree_upload_median_s": upload}
    if reference is not None:
        calls["reference"] = reference.call
        figures["reference"] = {"name": reference.name, **reference.info}
    elif reference_missing:
        figures["reference_missing"] = reference_missing
    sampling = case_sampling(runs, budget_s - (time.perf_counter() - start))
    reset = reset_peak_rss()
    warm = frozenset({"iree"} if iree_warm else ())
    taken = sample_interleaved(calls, sampling, warm=warm)
    shortest = min(len(t.values_s) for t in taken.values())
    for t in taken.values():  # the ratio pairs samples round by round
        del t.values_s[shortest:]
    figures["memory"] = {
        "run_peak_rss_bytes": peak_rss_bytes(),
        "run_peak_rss_how": "VmHWM reset before the calls"
        if reset
        else "process high-water mark (not resettable here)",
        "device": device_allocation_stats(device),
    }
    figures["sampling"] = sampling.as_dict()
    figures["iree_samples_s"] = taken["iree"].values_s
    figures["iree_loops"] = taken["iree"].loops
    figures["iree_median_s"] = statistics.median(taken["iree"].values_s)
    if "reference" in taken:
        figures["reference"]["samples_s"] = taken["reference"].values_s
        figures["reference"]["loops"] = taken["reference"].loops
        figures["reference"]["interleaved"] = True
        if reference is not None and reference.name == "onnxruntime":
            figures["onnxruntime_median_s"] = statistics.median(taken["reference"].values_s)
    figures["cost_s"] = time.perf_counter() - start
    return figures
