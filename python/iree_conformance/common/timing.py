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

import argparse
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from iree_conformance.common.stats import Samples, Sampling, sample_interleaved


def median_time(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def case_sampling(min_runs: int, budget_s: float) -> Sampling:
    """At least min_runs samples and 0.2 s; at most budget_s, warm-up included (what is
    left of the case's timing budget: docs/speed.md, "Cost"); a call slower than that
    gets one sample."""
    max_time = max(0.0, budget_s)
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


#: The most a case's figures may add, as a fraction of its untimed time in the worker
#: (--timing-budget): a timed case costs at most 1.05x an untimed one, so that the main
#: job's default timing of models adds at most 5 % to it (benchmarks/whole_job.py
#: --default-timing measures it). A budgeted timing never pays a reference set-up it
#: cannot know in advance (engine/worker/timed.py).
DEFAULT_TIMING_BUDGET = 0.05
#: The cap of a case's figures under --timing-budget full (and run-bundle's).
FULL_BUDGET_S = 10.0


def parse_timing_budget(text: str) -> float | None:
    """--timing-budget: a fraction of the case's untimed time (> 0), or "full" (None)."""
    if text.strip().lower() == "full":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(
            f"expected a fraction of the untimed run such as 0.5, or 'full', got {text!r}"
        )
    return value


def timing_budget_s(
    stage_times: dict[str, float], fraction: float = DEFAULT_TIMING_BUDGET, before_s: float = 0.0
) -> float:
    """The most the figures may add: ``fraction`` of the case's untimed time in the
    worker (compile, load, the checked run) and ``before_s`` (its share of its batch's
    compile)."""
    return fraction * (sum(stage_times.values()) + before_s)


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
    budget_s: float = FULL_BUDGET_S,
    begun: float | None = None,
    iree_warm: bool = True,
    checked_s: float | None = None,
    reference_call_s: float = 0.0,
    checked_peak_reset: bool = False,
) -> dict[str, Any]:
    """IREE's call with device-resident inputs (and the reference's, interleaved): medians
    (the old keys), raw samples, peak memory. ``begun``: when the timing's cost started
    (the reference's set-up counts in it); ``iree_warm``: the checked run was this very
    call (no warm-up needed); ``checked_s``: how long the checked run's call took, and
    ``reference_call_s`` the reference's first call (it has had it: no warm-up either);
    ``checked_peak_reset``: the memory mark was reset before the checked run.

    The plan keeps the timing within ``budget_s``: when no further round of IREE and the
    reference fits, IREE's one sample is its checked run (``iree_from_checked_run``) and
    the reference is sampled alone in what is left; a call that needs a warm-up that does
    not fit is not timed (``{"skipped": why}``)."""
    import iree.runtime as rt

    start = time.perf_counter() if begun is None else begun

    def left() -> float:
        return budget_s - (time.perf_counter() - start)

    if not iree_warm and checked_s is not None and left() < 2 * checked_s + reference_call_s:
        return {
            "skipped": f"a warm-up and a call of {entry} (about {2 * checked_s:.3g} s) do not "
            f"fit this case's timing budget of {budget_s:.3g} s (--timing-budget full times it)"
        }
    device = context.config.device
    upload_start = time.perf_counter()
    resident = [rt.asdevicearray(device, x) for x in inputs]
    upload = time.perf_counter() - upload_start
    round_s = (checked_s or 0.0) + reference_call_s
    tight = iree_warm and checked_s is not None and left() < round_s
    if inputs and not tight and left() > round_s + 4 * upload:
        upload = median_time(lambda: [rt.asdevicearray(device, x) for x in inputs], min(runs, 3))
    figures: dict[str, Any] = {"runs": runs, "iree_upload_median_s": upload}
    calls: dict[str, Callable[[], object]] = {}
    if not tight:
        calls["iree"] = lambda: executor.run(vm_module, context, entry, resident)
    if reference is not None and (not tight or reference_call_s <= left()):
        calls["reference"] = reference.call
        figures["reference"] = {"name": reference.name, **reference.info}
    elif reference is not None:
        figures["reference_missing"] = (
            f"{reference.name} was set up, but its call (about {reference_call_s:.3g} s) did "
            f"not fit this case's timing budget of {budget_s:.3g} s"
        )
    elif reference_missing:
        figures["reference_missing"] = reference_missing
    sampling = case_sampling(runs, 0.9 * left())  # a tenth kept for what follows
    reset = False if tight else reset_peak_rss()  # tight: the mark reset before the checked run
    warm = frozenset({"reference"} | ({"iree"} if iree_warm else set()))
    taken = sample_interleaved(calls, sampling, warm=warm) if calls else {}
    if tight:
        assert checked_s is not None
        taken["iree"] = Samples([checked_s], 1)
        figures["iree_from_checked_run"] = True
    else:
        shortest = min(len(t.values_s) for t in taken.values())
        for t in taken.values():  # the ratio pairs samples round by round
            del t.values_s[shortest:]
    figures["memory"] = {
        "run_peak_rss_bytes": peak_rss_bytes(),
        "run_peak_rss_how": "VmHWM reset before the calls"
        if reset or (tight and checked_peak_reset)
        else "process high-water mark (not resettable here)",
        "device": device_allocation_stats(device),
    }
    figures["sampling"] = sampling.as_dict()
    figures["iree_function"] = entry
    figures["iree_samples_s"] = taken["iree"].values_s
    figures["iree_loops"] = taken["iree"].loops
    figures["iree_median_s"] = statistics.median(taken["iree"].values_s)
    if "reference" in taken:
        figures["reference"]["samples_s"] = taken["reference"].values_s
        figures["reference"]["loops"] = taken["reference"].loops
        figures["reference"]["interleaved"] = not tight
        if reference is not None and reference.name == "onnxruntime":
            figures["onnxruntime_median_s"] = statistics.median(taken["reference"].values_s)
    figures["cost_s"] = time.perf_counter() - start
    return figures
