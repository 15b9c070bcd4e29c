"""The RSS of a worker process over a long run of jobs (warm, with every N-th a cold
compile), with and without the worker's ``max_jobs`` recycling, side by side."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from .machine import read_proc_status, worker_pid
from .sample import _target, cold_variant

# The two workers driven side by side: recycling at the default and off.
MEMORY_CONFIGS: dict[str, int | None] = {"max_jobs=400 (default)": 400, "recycling off": None}


def measure_memory(
    cases: list[Any], store_dir: Path, jobs: int, cold_every: int, configs: dict[str, int | None]
) -> dict[str, Any]:
    """Drives one WorkerClient per config (side by side, in threads) with `jobs` jobs."""
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient

    target = _target()
    results: dict[str, Any] = {}

    def drive(label: str, max_jobs: int | None) -> None:
        client = WorkerClient(store_dir, max_jobs=max_jobs if max_jobs else 10**9)
        samples: list[dict[str, Any]] = []
        statuses: dict[str, int] = {}
        pids: list[int] = []
        t0 = time.perf_counter()
        try:
            for i in range(jobs):
                case = cases[i % len(cases)]
                cold = cold_every > 0 and i % cold_every == cold_every - 1
                job_case = cold_variant(case, f"{label}-{i}") if cold else case
                outcome, _ = run_case(Attempt(job_case, target), client)
                statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
                pid = worker_pid(client)
                if pid is not None and (not pids or pids[-1] != pid):
                    pids.append(pid)
                status = read_proc_status(pid) if pid else {}
                samples.append(
                    {
                        "job": i + 1,
                        "pid": pid,
                        "rss": status.get("VmRSS"),
                        "hwm": status.get("VmHWM"),
                        "cold": cold,
                    }
                )
        finally:
            client.close()
        results[label] = {
            "samples": samples,
            "statuses": statuses,
            "pids": pids,
            "wall_s": time.perf_counter() - t0,
            "max_jobs": max_jobs,
        }

    threads = [
        threading.Thread(target=drive, args=(label, m), name=f"memory-{label}")
        for label, m in configs.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {label: summarize_memory(r) for label, r in results.items()}


def summarize_memory(r: dict[str, Any]) -> dict[str, Any]:
    samples = [s for s in r["samples"] if s["rss"]]
    if not samples:
        return {"error": "no RSS samples (no /proc?)", "statuses": r["statuses"]}
    mb = 1 / 2**20

    def at(job: int) -> dict[str, Any]:
        best = min(samples, key=lambda s: abs(s["job"] - job))
        return best

    early = at(min(100, len(r["samples"])))
    last = samples[-1]
    return {
        "max_jobs": r["max_jobs"],
        "jobs": len(r["samples"]),
        "worker_processes": len(r["pids"]),
        "statuses": r["statuses"],
        "wall_s": round(r["wall_s"], 1),
        "rss_mb_at_100": round(early["rss"] * mb, 1),
        "rss_mb_at_end": round(last["rss"] * mb, 1),
        "rss_growth_mb": round((last["rss"] - early["rss"]) * mb, 1),
        "hwm_mb_at_100": round(early["hwm"] * mb, 1),
        "hwm_mb_at_end": round(last["hwm"] * mb, 1),
        "hwm_growth_mb": round((last["hwm"] - early["hwm"]) * mb, 1)
        if early["pid"] == last["pid"]
        else None,
        "peak_hwm_mb": round(max(s["hwm"] for s in samples) * mb, 1),
        "rss_mb_every_100": [round(s["rss"] * mb) for s in samples if s["job"] % 100 == 0],
    }
