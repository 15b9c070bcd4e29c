"""Runs one case on one target through every stage and returns its Outcome."""

from __future__ import annotations

import dataclasses
import time

from iree_conformance.common.diagnostics import cap_outcome_diagnostics
from iree_conformance.engine.batching import Placement
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.cases import (
    Case,
    CaseInvalid,
    CaseReferenceError,
    CaseSkipped,
    Check,
    ChecksFailed,
)
from iree_conformance.model.compare import Tolerance, compare_checks
from iree_conformance.model.jobs import CaseJob, CaseResult
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target
from iree_conformance.model.unjudged import judge_unjudged


def build_job(
    case: Case,
    target: Target,
    input_sets: list,
    compile_only: bool = False,
    timing_runs: int = 0,
    retry: bool = False,
    alone: bool = False,
) -> CaseJob:
    """The worker's job for one case on one target (a retry compiles afresh; alone: never
    in a batch module)."""
    return CaseJob(
        program=case.program(),
        compile_flags=target.case_flags(case),
        target=target.name,
        driver=target.driver,
        device=target.device,
        host_specific=target.host_specific,
        entry_function=case.entry_function,
        input_sets=tuple(input_sets),
        compile_only=compile_only,
        timing_runs=timing_runs,
        bypass_store=retry,
        alone=alone,
        stage_timeouts=dict(target.stage_timeouts),
    )


def run_case(
    case: Case,
    target: Target,
    worker: WorkerClient,
    tolerance_override: Tolerance | None = None,
    compile_only: bool = False,
    timing_runs: int = 0,
    retry: bool = False,
    placement: Placement | None = None,
    alone: bool = False,
) -> tuple[Outcome, CaseResult]:
    """Returns the Outcome and the worker's result (which holds the vmfb when compile_only).

    With a placement, the case runs its function in its batch's module. Without one, the
    worker may still run it in the module of an earlier batch that compiled it (the
    store's member index: ``info.batch`` is set); ``alone`` forbids that. Either way a
    result that is not a pass in a batch is only a hint: the case then runs alone, and
    that is its result.
    """
    if placement is None or compile_only or retry:
        outcome, result = _run_case(
            case, target, worker, tolerance_override, compile_only, timing_runs, retry, None, alone
        )
        if "batch" not in outcome.info or outcome.status in ("pass", "skip"):
            return outcome, result
        size = outcome.info["batch"]["size"]
    else:
        outcome, result = _run_case(
            case, target, worker, tolerance_override, False, timing_runs, False, placement
        )
        outcome.duration += sum(placement.stage_times.values())  # its share of the batch's compile
        size = placement.batch_size
        if outcome.status in ("pass", "skip"):
            outcome.info["batch"] = {"size": size}
            return outcome, result
    alone_outcome, result = _run_case(
        case, target, worker, tolerance_override, False, timing_runs, False, None, True
    )
    alone_outcome.info["batch"] = {"size": size, "in_batch": outcome.observed, "ran_alone": True}
    alone_outcome.duration += outcome.duration
    return alone_outcome, result


def _run_case(
    case: Case,
    target: Target,
    worker: WorkerClient,
    tolerance_override: Tolerance | None,
    compile_only: bool,
    timing_runs: int,
    retry: bool,
    placement: Placement | None,
    alone: bool = False,
) -> tuple[Outcome, CaseResult]:
    outcome, result, failed_check = _run_stages(
        case, target, worker, tolerance_override, compile_only, timing_runs, retry, placement, alone
    )
    if outcome.status not in ("pass", "skip"):  # where an annotation of it would point
        source = case.source_location(failed_check)
        if source is not None:
            outcome.info["source"] = source
    cap_outcome_diagnostics(outcome, getattr(worker, "store_dir", None))
    return outcome, result


def _run_stages(
    case: Case,
    target: Target,
    worker: WorkerClient,
    tolerance_override: Tolerance | None,
    compile_only: bool,
    timing_runs: int,
    retry: bool,
    placement: Placement | None,
    alone: bool = False,
) -> tuple[Outcome, CaseResult, Check | None]:
    """The stages of one try; the third item is the first check that failed, if any."""
    start = time.perf_counter()
    outcome = Outcome(case_id=case.case_id, suite=case.suite, target=target.name)
    skip_reason = case.skip_reason_for(target)
    if skip_reason:
        outcome.status, outcome.reason = "skip", skip_reason
        return outcome, CaseResult(status=outcome.status), None
    try:
        t = time.perf_counter()
        input_sets = case.input_sets()  # also when compile-only: a zoo model is fetched here
        outcome.stage_times["inputs"] = time.perf_counter() - t
        outcome.info.update(case.outcome_info())
    except CaseSkipped as e:
        outcome.info.update(case.outcome_info())
        outcome.status, outcome.reason = "skip", str(e)
        return outcome, CaseResult(status=outcome.status), None
    except CaseReferenceError as e:
        outcome.info.update(case.outcome_info())
        outcome.stage, outcome.status, outcome.diagnostics = "reference", "error", [str(e)]
        outcome.duration = time.perf_counter() - start
        return outcome, CaseResult(status=outcome.status), None
    except CaseInvalid as e:
        outcome.status, outcome.diagnostics = "error", [str(e)]
        return outcome, CaseResult(status=outcome.status), None
    except Exception as e:  # noqa: BLE001 - bad case data is the case's error
        outcome.status, outcome.diagnostics = (
            "error",
            [f"cannot load the case's inputs: {type(e).__name__}: {e}"],
        )
        outcome.duration = time.perf_counter() - start
        return outcome, CaseResult(status=outcome.status), None
    job = build_job(
        case, target, [] if compile_only else input_sets, compile_only, timing_runs, retry, alone
    )
    if placement is not None:
        job = dataclasses.replace(
            job, batch_key=placement.batch_key, batch_member=placement.member_id
        )
    result = worker.execute(job)
    outcome.stage, outcome.status, outcome.diagnostics = (
        result.stage,
        result.status,
        list(result.diagnostics),
    )
    if placement is not None:  # this case's share of the batch's import and compile
        outcome.stage_times.update(placement.stage_times)
        outcome.info["cache_hits"] = dict(placement.cache_hits)
    outcome.stage_times.update(result.stage_times)
    outcome.info.update(result.info)
    # A run on meaningless values (a random sample rate, a random shape) says nothing
    # about IREE: the harness's error (run-bundle applies the same rule).
    if judge_unjudged(outcome, case.unjudged_reason()) or outcome.status != "pass" or compile_only:
        outcome.duration = time.perf_counter() - start
        return outcome, result, None
    outcome.stage = "reference"
    t = time.perf_counter()
    try:
        checks = case.checks(input_sets, result.outputs or [], result)
    except CaseSkipped as e:
        outcome.status, outcome.reason = "skip", str(e)
        outcome.duration = time.perf_counter() - start
        return outcome, result, None
    except ChecksFailed as e:
        outcome.stage, outcome.status, outcome.diagnostics = "compare", "fail", e.lines
        outcome.stage_times["reference"] = time.perf_counter() - t
        outcome.duration = time.perf_counter() - start
        return outcome, result, None
    except Exception as e:  # noqa: BLE001
        outcome.status, outcome.diagnostics = (
            "error",
            [f"reference failed: {type(e).__name__}: {e}"],
        )
        outcome.stage_times["reference"] = time.perf_counter() - t
        outcome.duration = time.perf_counter() - start
        return outcome, result, None
    outcome.stage_times["reference"] = time.perf_counter() - t
    if not checks:
        outcome.status, outcome.diagnostics = (
            "error",
            ["the reference produced no comparisons: nothing would be checked"],
        )
        outcome.duration = time.perf_counter() - start
        return outcome, result, None
    outcome.stage = "compare"
    t = time.perf_counter()
    comparison = compare_checks(checks, tolerance_override)
    messages, metrics = comparison.messages, comparison.metrics
    outcome.stage_times["compare"] = time.perf_counter() - t
    outcome.metrics = metrics
    if not messages and metrics["compared_elements"] == 0:
        # Shapes and dtypes matched, but there was no value to compare: say so.
        outcome.info["note"] = (
            "no elements compared: every output is empty (shapes and dtypes match)"
        )
    if messages:
        outcome.status = "fail"
        outcome.diagnostics = messages[:8]
    elif timing_runs and result.timing is not None:
        outcome.metrics["timing"] = dict(result.timing)
        reference_time = case.time_reference(input_sets[0], timing_runs) if input_sets else None
        if reference_time is not None:
            outcome.metrics["timing"][f"{case.reference_name}_median_s"] = reference_time
    outcome.duration = time.perf_counter() - start
    return outcome, result, checks[comparison.failed[0]] if comparison.failed else None
