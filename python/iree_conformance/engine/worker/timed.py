"""The timing of a case that ran (``--benchmark``), in its worker: its budget, its
reference's set-up, then common/timing.py's samples.

The budget is a fraction of the case's untimed run (``--timing-budget``, 0.05 by default:
a timed case costs at most 1.05x). A reference is set up under a budget only when its
set-up, as timed before on this machine and kept in the store, fits: one never timed here
is left out (``--timing-budget full`` sets it up and records it); its library's first
import in the worker is timed and kept apart (docs/speed.md, "Cost")."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec

from iree_conformance.common import quiet_lock
from iree_conformance.common.timing import FULL_BUDGET_S, time_iree_call, timing_budget_s
from iree_conformance.common.unicode_text import valid_text
from iree_conformance.engine.worker.store import ModuleCache
from iree_conformance.model.jobs import LARGE_MODEL_OPTION, CaseJob, CaseResult

P = ParamSpec("P")

#: A reference is set up only when this many times its recorded set-up fits the budget:
#: a session's set-up varies by 2x between runs on a shared machine.
SETUP_MARGIN = 2.0


@dataclasses.dataclass(frozen=True)
class CheckedRun:
    """The checked run's first call, as the timing that follows may use it."""

    seconds: float
    peak_reset: bool  # the memory mark was reset before it


def _alone(timing: Callable[P, dict[str, Any]]) -> Callable[P, dict[str, Any]]:
    """timing run holding the machine-wide lock (``common/quiet_lock.py``), the reference's
    set-up with the samples, so that another worker's XLA compile or onnxruntime session
    does not run beside a case's samples; the figures say whether it was alone."""

    @functools.wraps(timing)
    def holding(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        with quiet_lock.holding(exclusive=True) as quiet:
            figures = timing(*args, **kwargs)
        if "failed" not in figures:
            figures["quiet"] = {"alone": quiet["held"], "wait_s": quiet["wait_s"]}
        return figures

    return holding


@_alone
def time_case(
    executor: Any,
    cache: ModuleCache,
    job: CaseJob,
    module: tuple[Any, Any, str | None, str],
    result: CaseResult,
    checked: CheckedRun,
) -> dict[str, Any]:
    """The figures of a case that ran, beside its frontend's reference, within its budget
    (the whole of it alone: ``_alone``); a timing that fails says why and leaves the
    verdict alone. ``module``: (vm module, context, the entry that ran, the case's
    function prefix in a batch module)."""
    vm_module, context, entry, prefix = module
    begun = time.perf_counter()  # after the wait for the lock: waiting spends no CPU
    full = job.timing_budget is None
    budget = (
        FULL_BUDGET_S
        if job.timing_budget is None
        else timing_budget_s(result.stage_times, job.timing_budget, job.untimed_before_s)
    )
    inputs = (job.input_sets or ([],))[0]
    try:
        reference, missing, reference_call_s, first = _reference(
            cache, job, list(inputs), None if full else budget
        )
        other_call = reference is not None and reference.entry is not None
        if other_call:
            entry, inputs = prefix + reference.entry, reference.inputs or []
        figures = time_iree_call(
            executor,
            vm_module,
            context,
            entry,
            inputs,
            job.timing_runs,
            reference,
            missing,
            budget,
            begun,
            iree_warm=not other_call,
            checked_s=None if full else checked.seconds,
            reference_call_s=reference_call_s,
            checked_peak_reset=checked.peak_reset,
        )
    except Exception as e:  # noqa: BLE001 - timing never changes a verdict
        return {"failed": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
    figures["timing_budget"] = job.timing_budget  # a fraction of the untimed run; None: full
    if first and isinstance(figures.get("reference"), dict):
        figures["reference"]["first_setup"] = True  # its set-up was timed and recorded now
    return figures


def _reference(
    cache: ModuleCache, job: CaseJob, inputs: list[Any], budget_s: float | None
) -> tuple[Any, str | None, float, bool]:
    """(the reference, set up and called once; why there is none; its first call's
    seconds; whether its set-up was not known before). ``budget_s`` None: set up whatever
    it costs (--timing-budget full)."""
    from iree_conformance.frontends.registry import timing_modules

    if job.timed_reference is None:
        return None, None, 0.0, False
    if job.program.import_options.get(LARGE_MODEL_OPTION):
        return (
            None,
            "not timed beside IREE: the model is over 2 GiB, and a reference session in the "
            "worker would hold a second copy of its weights beside IREE's",
            0.0,
            False,
        )
    what = f"reference:{setup_identity(job)}"
    pending = [m for m in timing_modules(job.program) if m not in sys.modules]
    known = cache.setup_s(what)
    if known is None and budget_s is not None:
        return (
            None,
            "not timed beside IREE: its set-up has not been timed on this machine yet, so it "
            f"may not fit this case's timing budget of {budget_s:.3g} s (--timing-budget full "
            "times it and records its set-up for later runs)",
            0.0,
            False,
        )
    if known is not None and budget_s is not None:
        estimate = known + sum(cache.setup_s(f"import:{m}") or 0.0 for m in pending)
        if SETUP_MARGIN * estimate > budget_s:
            return (
                None,
                f"not timed beside IREE: its set-up takes about {estimate:.3g} s on this "
                f"machine (it can take twice that), over this case's timing budget of "
                f"{budget_s:.3g} s (--timing-budget full times it)",
                0.0,
                False,
            )
    for name in pending:  # once per worker, timed apart from the set-up
        t = time.perf_counter()
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - timing_reference says what is missing
            continue
        if cache.setup_s(f"import:{name}") is None:
            cache.put_setup_s(f"import:{name}", time.perf_counter() - t)
    found = _set_up(job, inputs)
    if isinstance(found, str):
        return None, found, 0.0, False
    reference, setup_s, call_s = found
    if known is None:
        cache.put_setup_s(what, setup_s)
    return reference, None, call_s, known is None


def setup_identity(job: CaseJob) -> str:
    """What a reference's set-up record is kept under: the case and the size of its
    reference's file, not the file's path, which differs between checkouts (a CI runner's
    work folder) while the set-up does not."""
    assert job.timed_reference is not None
    path, sep, name = job.timed_reference.partition("::")  # a JAX case: FILE::NAME
    try:
        size = str(os.stat(path).st_size)
    except OSError:
        size = "?"
    return valid_text(f"{job.program.case_id}|{Path(path).name}|{size}|{name}")


def _set_up(job: CaseJob, inputs: list[Any]) -> tuple[Any, float, float] | str:
    """(the reference, called once; its set-up's seconds, that call included; the
    call's), or why there is none."""
    from iree_conformance.frontends.registry import timing_reference

    assert job.timed_reference is not None
    t = time.perf_counter()
    reference, missing = timing_reference(job.program, job.timed_reference, inputs)
    if reference is None:
        return missing or "no reference"
    if reference.first_call_s is not None:  # the frontend made it
        return reference, time.perf_counter() - t, reference.first_call_s
    call_start = time.perf_counter()
    try:
        reference.call()  # its warm-up, as IREE's checked run was IREE's
    except Exception as e:  # noqa: BLE001 - a reference that fails costs only its figures
        return f"the reference could not run: {type(e).__name__}: {e}".splitlines()[0][:300]
    done = time.perf_counter()
    return reference, done - t, done - call_start
