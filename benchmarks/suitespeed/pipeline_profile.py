"""Where the time goes in the pipeline itself, under cProfile: a warm pass through a real
WorkerClient (parent side), the worker's Executor in-process, and cold cases in a
started worker. Cases run in their planned batches, as the pytest plugin runs them."""

from __future__ import annotations

import cProfile
import dataclasses
import io
import pstats
import shutil
import time
from pathlib import Path
from typing import Any, cast

from iree_conformance.common.vocabulary import Status
from iree_conformance.model.jobs import BatchResult

from .outcome_stats import overhead_stats
from .sample import _target, cold_variant


def top_functions(profile: cProfile.Profile, limit: int, sort: str = "tottime") -> list[str]:
    """pstats' table of the `limit` top functions, from its header line on."""
    stream = io.StringIO()
    stats = pstats.Stats(profile, stream=stream)
    stats.sort_stats(sort).print_stats(limit)
    lines = stream.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
    return [line.rstrip() for line in lines[start:] if line.strip()]


def run_batched(
    case: Any, target: Any, client: Any, plan: dict[tuple[str, str], Any], coordinator: Any
) -> Any:
    """One case as the pytest plugin runs it: in its planned batch (compiled, or found in
    the store, once per coordinator), else alone."""
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case

    batch = plan.get((target.name, case.case_id))
    placement = coordinator.placement(batch, case, target, client) if batch is not None else None
    return run_case(Attempt(case, target, placement=placement), client)[0]


def profile_warm(cases: list[Any], store_dir: Path, rounds: int, batch_size: int) -> dict[str, Any]:
    """A warm pass of the pipeline through a real WorkerClient, parent side under
    cProfile; then the worker's Executor in-process under cProfile. Cases run in their
    batches, as in the pytest run whose store this is: each round has a fresh
    BatchCoordinator, as each pytest process has, so it finds every batch in the store
    once (the batch job: member keys and imported modules read, the batch's module read)."""
    from iree_conformance.common.store import ArtifactStore
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.batching import BatchCoordinator, batch_job, plan_batches
    from iree_conformance.engine.pipeline import build_job
    from iree_conformance.engine.worker.executor import Executor
    from iree_conformance.engine.worker.parent import WorkerClient

    target = _target()
    plan = plan_batches([(case, target) for case in cases], batch_size)
    client = WorkerClient(store_dir)
    try:
        t = time.perf_counter()
        client._start()  # the one-off start of a worker, timed apart from the cases
        start_s = time.perf_counter() - t
        t = time.perf_counter()
        warm_up = BatchCoordinator()
        for case in cases[:2]:  # first-use costs: imports, runtime instance, device
            run_batched(case, target, client, plan, warm_up)
        first_use_s = round(time.perf_counter() - t, 3)
        profile = cProfile.Profile()
        outcomes = []
        compiles = 0
        t = time.perf_counter()
        profile.enable()
        for _ in range(rounds):
            coordinator = BatchCoordinator()
            for case in cases:
                outcomes.append(run_batched(case, target, client, plan, coordinator).to_json())
            compiles += coordinator.compiles
        profile.disable()
        loop_s = time.perf_counter() - t
    finally:
        client.close()
    parent = overhead_stats(outcomes)
    parent["loop_s"] = round(loop_s, 3)
    parent["worker_start_s"] = round(start_s, 3)
    parent["first_use_s"] = first_use_s
    parent["statuses"] = {
        s: sum(1 for o in outcomes if o["status"] == s) for s in {o["status"] for o in outcomes}
    }
    parent["batched"] = sum(1 for o in outcomes if o.get("info", {}).get("batch")) // max(rounds, 1)
    parent["batch_jobs_per_round"] = compiles // max(rounds, 1)
    if outcomes and parent.get("count"):
        # The loop's time per case, batch jobs included (a case's own duration leaves out
        # its batch's store lookup, which runs before it), less IREE's load and run.
        parent["loop_overhead_ms"] = round(
            1000.0 * (loop_s / len(outcomes) - parent["iree_s_mean"]), 2
        )
    parent["compiled"] = sum(1 for o in outcomes if "compile" in o.get("stage_times", {}))

    # Worker side, in this process: the same jobs straight into an Executor (each
    # round: every batch job once, then each case's job, in its batch where it has one).
    executor = Executor(ArtifactStore(store_dir), lambda: "")
    jobs = [
        (
            case,
            build_job(Attempt(case, target), case.input_sets()),
            plan.get((target.name, case.case_id)),
        )
        for case in cases
    ]

    def worker_round() -> None:
        keys: dict[str, tuple[str | None, list[str]]] = {}
        for case, job, batch in jobs:
            if batch is not None:
                if batch.batch_id not in keys:
                    r = cast(
                        BatchResult,
                        executor.execute(batch_job(batch.cases, target), lambda stage: None),
                    )
                    keys[batch.batch_id] = (
                        r.batch_key if r.status == Status.PASS else None,
                        list(r.placed),
                    )
                key, placed = keys[batch.batch_id]
                job = (
                    dataclasses.replace(job, batch_key=key)
                    if key and case.case_id in placed
                    else job
                )
            executor.execute(job, lambda stage: None)

    worker_round()  # first use
    wprofile = cProfile.Profile()
    t = time.perf_counter()
    wprofile.enable()
    for _ in range(rounds):
        worker_round()
    wprofile.disable()
    worker_ms = 1000.0 * (time.perf_counter() - t) / (rounds * len(jobs))
    return {
        "parent": parent,
        "parent_top": top_functions(profile, 14),
        "worker_ms_per_job": round(worker_ms, 2),
        "worker_top": top_functions(wprofile, 14),
    }


def profile_cold(cases: list[Any], store_dir: Path, count: int) -> dict[str, Any]:
    """Overhead of cold cases in a started worker: `count` cases spread over the
    sample, compiled into an empty store after one warm-up compile (which pays the
    one-off imports of the compiler and onnx)."""
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient

    picked = cases[:: max(1, len(cases) // count)][:count]
    target = _target()
    shutil.rmtree(store_dir, ignore_errors=True)
    client = WorkerClient(store_dir)
    outcomes = []
    try:
        run_case(Attempt(cold_variant(picked[0], "warm-up"), target), client)
        for case in picked:
            outcome, _ = run_case(Attempt(case, target), client)
            outcomes.append(outcome.to_json())
    finally:
        client.close()
        shutil.rmtree(store_dir, ignore_errors=True)
    stats = overhead_stats(outcomes)
    stats["statuses"] = {
        s: sum(1 for o in outcomes if o["status"] == s) for s in {o["status"] for o in outcomes}
    }
    return stats


def fill_store(cases: list[Any], store_dir: Path, batch_size: int) -> None:
    """Runs every case once, in its batch, into `store_dir`: the warm store that the
    profile and the memory measurement need when no cold run filled it."""
    from iree_conformance.engine.batching import BatchCoordinator, plan_batches
    from iree_conformance.engine.worker.parent import WorkerClient

    plan = plan_batches([(case, _target()) for case in cases], batch_size)
    client = WorkerClient(store_dir)
    try:
        coordinator = BatchCoordinator()
        for case in cases:
            run_batched(case, _target(), client, plan, coordinator)
    finally:
        client.close()
