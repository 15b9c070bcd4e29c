"""Runs one case on one target through every stage and returns its Outcome."""

from __future__ import annotations

import time

from iree_conformance.common.diagnostics import cap_outcome_diagnostics
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine import benchmark, preparations
from iree_conformance.engine.after_run import RunJudging, after_run
from iree_conformance.engine.attempt import Attempt
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.model.cases import (
    CaseInvalid,
    CaseReferenceError,
    CaseSkipped,
    CaseTimedOut,
)
from iree_conformance.model.jobs import CaseJob, CaseResult
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.preparation import preparation_steps


def build_job(attempt: Attempt, input_sets: list) -> CaseJob:
    """The worker's job for one attempt (a retry compiles afresh; alone: never in a batch
    module; with a placement: run in that batch's module)."""
    case, placement = attempt.case, attempt.placement
    return attempt.job(
        case.program(),
        input_sets=tuple(input_sets),
        compile_only=attempt.compile_only,
        timing_runs=attempt.timing_runs,
        timing_budget=attempt.settings.timing_budget,
        untimed_before_s=sum(placement.stage_times.values()) if placement else 0.0,
        timed_reference=benchmark.timed_reference(case, attempt.timing_runs),
        bypass_store=attempt.retry,
        alone=attempt.alone,
        batch_key=placement.batch_key if placement else None,
        batch_member=placement.member_id if placement else None,
    )


def run_case(attempt: Attempt, worker: WorkerClient) -> tuple[Outcome, CaseResult]:
    """Returns the Outcome and the worker's result (which holds the vmfb when compile_only);
    a failure at import or compile gets its case's other preparation compiled beside it
    (``engine/preparations.py``); a diagnostic line too long for a console is cut, its
    full text kept in a file (``common/diagnostics.cap_outcome_diagnostics``)."""
    outcome, result = _run_placed(attempt, worker)
    preparations.compare(attempt, outcome, worker)  # information only: the verdict stands
    cap_outcome_diagnostics(outcome, getattr(worker, "store_dir", None))
    return outcome, result


def _run_placed(attempt: Attempt, worker: WorkerClient) -> tuple[Outcome, CaseResult]:
    """One attempt, in its batch's module where it has one.

    With a placement, the case runs its function in its batch's module. Without one, the
    worker may still run it in the module of an earlier batch that compiled it (the
    store's member index: ``info.batch`` is set); ``alone`` forbids that. Either way a
    result that is not a pass in a batch is only a hint: the case then runs alone, and
    that is its result.
    """
    placement = attempt.placement
    if placement is None or attempt.compile_only or attempt.retry:
        outcome, result = _run_stages(attempt.but(placement=None), worker)
        if "batch" not in outcome.info or outcome.status in (Status.PASS, Status.SKIP):
            return outcome, result
        size = outcome.info["batch"]["size"]
    else:
        outcome, result = _run_stages(attempt.but(alone=False), worker)
        outcome.duration += sum(placement.stage_times.values())  # its share of the batch's compile
        size = placement.batch_size
        if outcome.status in (Status.PASS, Status.SKIP):
            outcome.info["batch"] = {"size": size}
            return outcome, result
    alone_outcome, result = _run_stages(
        attempt.but(placement=None, retry=False, compile_only=False, alone=True), worker
    )
    alone_outcome.info["batch"] = {"size": size, "in_batch": outcome.observed, "ran_alone": True}
    alone_outcome.duration += outcome.duration
    return alone_outcome, result


def _run_stages(attempt: Attempt, worker: WorkerClient) -> tuple[Outcome, CaseResult]:
    """The stages of one try: the inputs, the worker's run, then the after-run steps."""
    case, target = attempt.case, attempt.target
    start = time.perf_counter()
    outcome = Outcome(case_id=case.case_id, suite=case.suite, target=target.name)
    skip_reason = case.skip_reason_for(target)
    if skip_reason:
        outcome.status, outcome.reason = Status.SKIP, skip_reason
        return outcome, CaseResult(status=outcome.status)
    # A failure before the run still gets the after-run steps' source line.
    before_run = RunJudging(checks=list, source=case.source_location())
    try:
        t = time.perf_counter()
        input_sets = case.input_sets()  # also when compile-only: a zoo model is fetched here
        outcome.stage_times["inputs"] = time.perf_counter() - t
        outcome.info.update(case.outcome_info())
    except CaseSkipped as e:
        outcome.info.update(case.outcome_info())
        outcome.status, outcome.reason = Status.SKIP, str(e)
        return outcome, CaseResult(status=outcome.status)
    except CaseReferenceError as e:
        outcome.info.update(case.outcome_info())
        outcome.stage, outcome.status, outcome.diagnostics = Stage.REFERENCE, Status.ERROR, [str(e)]
        outcome.duration = time.perf_counter() - start
        after_run(outcome, before_run)
        return outcome, CaseResult(status=outcome.status)
    except CaseTimedOut as e:
        outcome.status, outcome.diagnostics = Status.TIMEOUT, [str(e)]
        outcome.duration = time.perf_counter() - start
        after_run(outcome, before_run)
        return outcome, CaseResult(status=outcome.status)
    except CaseInvalid as e:
        outcome.status, outcome.diagnostics = Status.ERROR, [str(e)]
        after_run(outcome, before_run)
        return outcome, CaseResult(status=outcome.status)
    except Exception as e:  # noqa: BLE001 - bad case data is the case's error
        outcome.status = Status.ERROR
        outcome.diagnostics = [f"cannot load the case's inputs: {type(e).__name__}: {e}"]
        outcome.duration = time.perf_counter() - start
        after_run(outcome, before_run)
        return outcome, CaseResult(status=outcome.status)
    result = case.run_itself(target, getattr(worker, "store_dir", None), attempt.compile_only)
    if result is None:
        result = worker.execute(build_job(attempt, [] if attempt.compile_only else input_sets))
    outcome.stage, outcome.status, outcome.diagnostics = (
        Stage(result.stage),
        Status(result.status),
        list(result.diagnostics),
    )
    placement = attempt.placement
    if placement is not None:  # this case's share of the batch's import and compile
        outcome.stage_times.update(placement.stage_times)
        outcome.info["cache_hits"] = dict(placement.cache_hits)
    outcome.stage_times.update(result.stage_times)
    outcome.info.update(result.info)
    steps = preparation_steps(outcome.info) if case.users_program() else []
    if steps:  # what the harness did beyond the file as given (model/preparation.py)
        outcome.info["preparation"] = steps

    def timing() -> dict[str, float] | None:
        if not attempt.timing_runs or result.timing is None:
            return None
        benchmark.attach(case, outcome, result, attempt.timing_runs)  # figures, with samples
        return outcome.metrics.get("timing")

    after_run(
        outcome,
        RunJudging(
            checks=lambda: case.checks(input_sets, result.outputs or [], result),
            unjudged=case.unjudged_reason(),
            tolerance=attempt.tolerance,
            compile_only=attempt.compile_only,
            timing=timing,
            source=case.source_location(),
        ),
    )
    stats = outcome.info.pop("compile_stats", None)
    if isinstance(stats, dict):  # IREE's figures of the module: metrics, as compare reads them
        outcome.metrics["compile_stats"] = stats
    outcome.duration = time.perf_counter() - start
    return outcome, result
