"""Informative timings of a passing case, taken in the worker. Never pass/fail.

``time_iree_call`` samples the case's function with device-resident inputs (calibrated:
common/stats.py), and, when the case's frontend gives a reference (onnxruntime on an ONNX
model, XLA on a JAX case: frontends/base.TimingReference), that reference interleaved with it, one sample of each per round, so that their ratio survives a noisy
machine. It also records what the calls cost in memory, as figures that measure the case and
not the worker's history (``MemoryMark``): the growth of the worker's resident set over the
calls (Linux: VmHWM, reset through /proc/self/clear_refs after the heap is trimmed, minus
VmRSS just before them) and the bytes IREE's allocator gives out per call (the difference of
``device.allocator.statistics`` over the calls), each with what it was measured over; and,
for the reader only, the worker's high-water mark and IREE's statistics since the device
was opened. engine/benchmark.py turns the answer into the outcome's ``metrics["benchmark"]``.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import dataclasses
import math
import statistics
import sys
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


def _status_bytes(field: str) -> int | None:
    """A size field of /proc/self/status (VmHWM, VmRSS), or None where /proc is not there."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def peak_rss_bytes() -> int | None:
    """VmHWM of this process, or None where /proc is not there."""
    return _status_bytes("VmHWM")


def rss_bytes() -> int | None:
    """VmRSS of this process, or None where /proc is not there."""
    return _status_bytes("VmRSS")


#: glibc's mallopt parameter, and the value it has until glibc moves it: allocations of
#: this size and more are mapped apart and unmapped when freed.
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD_BYTES = 128 * 1024


def trim_heap() -> bool:
    """Makes the C heap's state the same whatever ran before (glibc): its free pages given
    back to the system (``malloc_trim(0)``), so that memory the calls take shows as growth
    (a compile's freed arenas would otherwise be reused unseen), and the mmap threshold
    fixed at glibc's starting 128 KiB (``mallopt``), which glibc otherwise raises after a
    large block is freed (a compile's), so that a call's large buffers stay on the heap
    in one process and are unmapped on free in another. False where there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES)
        libc.malloc_trim(0)
        return True
    except (OSError, AttributeError):
        return False


def device_allocation_stats(device: Any) -> dict[str, int] | None:
    """IREE's device allocator statistics (bytes: host/device peak, allocated, freed) since
    the worker opened the device, where the runtime exposes them; else None."""
    try:
        stats = dict(device.allocator.statistics)
    except Exception:  # noqa: BLE001 - not exposed by this runtime build
        return None
    return {str(k): int(v) for k, v in stats.items()} or None


#: IREE's allocator counters whose growth is a figure of the case: (counter, figure's name).
ALLOCATED_KEYS = (("device_bytes_allocated", "device"), ("host_bytes_allocated", "host"))


def allocated_since(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, int]:
    """Bytes IREE's allocator gave out between two of its statistics ({} without them)."""
    if not before or not after:
        return {}
    return {name: after[k] - before.get(k, 0) for k, name in ALLOCATED_KEYS if k in after}


@dataclasses.dataclass(frozen=True)
class MemoryMark:
    """The memory state just before the timed calls: the resident set after the heap was
    trimmed and the high-water mark reset (None where the mark cannot be reset, so that no
    lifetime mark passes for the calls'), and IREE's allocator counters."""

    rss_bytes: int | None
    allocator: dict[str, int] | None

    @classmethod
    def take(cls, device: Any) -> MemoryMark:
        trim_heap()
        rss = rss_bytes() if reset_peak_rss() else None
        return cls(rss, device_allocation_stats(device))

    def figures(
        self, device: Any, calls: int, over: str, inputs: dict[str, int] | None = None
    ) -> dict[str, Any]:
        """The memory figures of ``calls`` IREE calls since the mark (``over``: what ran
        in that time, e.g. "IREE's timed calls, interleaved with xla's"; ``inputs``: what
        the allocator gave for the inputs' upload): each comparable figure says what it
        measured (``*_how``); a figure that cannot be measured is None and its ``how`` says
        why. run_peak_rss_bytes and device are the process's history (libraries, the
        compile, earlier cases): shown, never compared."""
        peak = peak_rss_bytes()
        now = device_allocation_stats(device)
        out: dict[str, Any] = {
            "run_peak_rss_bytes": peak,
            "run_peak_rss_how": "the worker's resident high-water mark (libraries, the "
            "compile and earlier cases included; not compared)",
            "device": now,
            "calls": calls,
        }
        if self.rss_bytes is not None and peak is not None:
            out["rss_growth_bytes"] = max(0, peak - self.rss_bytes)
            out["rss_growth_how"] = f"VmHWM over {over} minus VmRSS just before (heap trimmed)"
        else:
            out["rss_growth_bytes"] = None
            out["rss_growth_how"] = (
                "not measured: the resident high-water mark cannot be reset here"
            )
        during = allocated_since(self.allocator, now)
        if calls > 0 and during and inputs is not None:
            out["allocated_bytes"] = {
                name: inputs.get(name, 0) + round(during[name] / calls) for name in during
            }
            out["allocated_how"] = (
                "IREE's allocator, bytes given out for one run: the inputs' upload and a call "
                "with them (buffers a module allocates on its queue are not counted)"
            )
        else:
            out["allocated_bytes"] = None
            out["allocated_how"] = (
                "not measured: no IREE call was timed"
                if calls <= 0
                else "not measured: this runtime exposes no allocator statistics"
            )
        return out


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
    before_upload = device_allocation_stats(device)
    upload_start = time.perf_counter()
    resident = [rt.asdevicearray(device, x) for x in inputs]
    upload = time.perf_counter() - upload_start
    inputs_allocated = allocated_since(before_upload, device_allocation_stats(device))
    round_s = (checked_s or 0.0) + reference_call_s
    tight = iree_warm and checked_s is not None and left() < round_s
    if inputs and not tight and left() > round_s + 4 * upload:
        upload = median_time(lambda: [rt.asdevicearray(device, x) for x in inputs], min(runs, 3))
    figures: dict[str, Any] = {"runs": runs, "iree_upload_median_s": upload}
    calls: dict[str, Callable[[], object]] = {}
    iree_calls = [0]
    if not tight:

        def call_iree() -> object:
            iree_calls[0] += 1
            return executor.run(vm_module, context, entry, resident)

        calls["iree"] = call_iree
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
    # tight: no IREE call is timed, the mark was reset before the checked run
    mark = MemoryMark(None, None) if tight else MemoryMark.take(device)
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
    if tight:
        over = "IREE's checked run (not timed again: the budget)"
        figures["memory"] = mark.figures(device, 0, over)
        figures["memory"]["rss_growth_how"] = f"not measured: no IREE call was timed ({over})"
        if not checked_peak_reset:
            figures["memory"]["run_peak_rss_how"] = "the process's lifetime high-water mark"
    else:
        with_ref = "reference" in taken
        over = "IREE's timed calls" + (
            f", interleaved with {reference.name}'s" if with_ref and reference is not None else ""
        )
        figures["memory"] = mark.figures(device, iree_calls[0], over, inputs_allocated)
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
